import Foundation

/// Byte counts as people write them: "500K", "160M", "2G" (steps of 1024, as GNU tools read
/// them; "KiB"/"MiB" too), "160MB" (steps of 1000) or plain bytes.
package enum ByteSize {
    /// Sizes from here up are not read (an Int64 of bytes, with room for sums).
    package static let largest: Int64 = 9_000_000_000_000_000_000

    package static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let split = trimmed.firstIndex(where: { !($0.isASCII && ($0.isNumber || $0 == ".")) }) ?? trimmed.endIndex
        guard let number = Double(trimmed[..<split]), number.isFinite, number >= 0 else { return nil }
        let unit = trimmed[split...].trimmingCharacters(in: .whitespaces).lowercased()
        let powers: [String: (base: Double, power: Double)] = [
            "": (1, 0), "b": (1, 0),
            "k": (1024, 1), "kib": (1024, 1), "kb": (1000, 1),
            "m": (1024, 2), "mib": (1024, 2), "mb": (1000, 2),
            "g": (1024, 3), "gib": (1024, 3), "gb": (1000, 3),
            "t": (1024, 4), "tib": (1024, 4), "tb": (1000, 4),
        ]
        guard let (base, power) = powers[unit] else { return nil }
        let bytes = (number * pow(base, power)).rounded(.down)
        guard bytes < Double(largest) else { return nil }
        return Int64(bytes)
    }

    /// "12.3 MiB", "512 KiB", "900 B": for messages.
    package static func format(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        return String(format: value < 10 ? "%.1f %@" : "%.0f %@", value, units[unit])
    }
}
