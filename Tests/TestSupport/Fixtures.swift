import Foundation

/// The package's folder and its committed test media (fixtures/, made by fixtures/make_fixtures.sh).
public enum Fixtures {
    /// The package's top folder (README.md, Sources/, fixtures/).
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static let directory = root.appendingPathComponent("fixtures")

    /// The path of the fixture whose name starts with `prefix` (a_, l_tiny, bad_text...).
    public static func path(_ prefix: String) -> String { url(prefix).path }

    public static func url(_ prefix: String) -> URL {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        guard let name = names.sorted().first(where: { $0.hasPrefix(prefix) && $0.hasSuffix(".mov") }) else {
            fatalError("no fixture starting with \(prefix)")
        }
        return directory.appendingPathComponent(name)
    }

    /// The good clips in merge order (i, the short one, included).
    public static let orientationClips = ["a_", "b_", "c_", "d_", "e_", "f_", "g_", "h_"]
}

/// Fixture a with 400 bytes in the middle of its media data flipped, at `url`: the H.264 decoder
/// meets corrupt packets there and conceals them.
public func writeDamagedCopy(to url: URL) throws {
    var bytes = [UInt8](try Data(contentsOf: Fixtures.url("a_")))
    for i in stride(from: bytes.count / 3, to: bytes.count / 3 + 400, by: 2) { bytes[i] ^= 0x5A }
    try Data(bytes).write(to: url)
}

/// A small, fast, reproducible generator (SplitMix64) for seeded tests: a failure names its seed.
public struct SeededRandom: RandomNumberGenerator {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
    public mutating func chance(_ p: Double) -> Bool { unit() < p }
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    public mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}
