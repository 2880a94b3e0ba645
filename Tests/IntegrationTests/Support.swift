import Foundation
import VMergeAV
import VMergeCore
import XCTest

/// Locations and helpers shared by the tests that run the built `vmerge` binary.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures")

    static func path(_ prefix: String) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        guard let name = names.sorted().first(where: { $0.hasPrefix(prefix) && $0.hasSuffix(".mov") }) else {
            fatalError("no fixture starting with \(prefix)")
        }
        return directory.appendingPathComponent(name).path
    }

    /// The good clips in merge order (i, the short one, included).
    static let orientationClips = ["a_", "b_", "c_", "d_", "e_", "f_", "g_", "h_"]
}

/// Result of one run of the binary.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

enum VMergeBinary {
    static let url: URL = {
        if let override = ProcessInfo.processInfo.environment["VMERGE_BIN"] { return URL(fileURLWithPath: override) }
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("vmerge"),
            Bundle(for: Marker.self).bundleURL.deletingLastPathComponent().appendingPathComponent("vmerge"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("vmerge"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    private final class Marker {}

    /// Runs vmerge with `arguments` in `directory`; returns when it exits. `environment` entries
    /// are added to the test's own; `input` is written to its stdin.
    static func run(
        _ arguments: [String], in directory: URL, environment: [String: String] = [:], input: String? = nil,
        onStart: ((Process) -> Void)? = nil
    ) throws -> RunResult {
        try runProgram(url, arguments, in: directory, environment: environment, input: input, onStart: onStart)
    }
}

/// Runs any program, collecting stdout and stderr concurrently so a chatty child never blocks
/// on a full pipe.
func runProgram(
    _ executable: URL, _ arguments: [String], in directory: URL, environment: [String: String] = [:],
    input: String? = nil, onStart: ((Process) -> Void)? = nil
) throws -> RunResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.currentDirectoryURL = directory
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let out = Pipe(), err = Pipe(), stdin = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    try process.run()
    if let input {
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try? stdin.fileHandleForWriting.close()
    }
    onStart?(process)
    nonisolated(unsafe) var errData = Data()
    let errDone = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        errDone.signal()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    errDone.wait()
    process.waitUntilExit()
    return RunResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}

/// Runs the ffmpeg CLI in `directory` (errors only, overwriting), for making test media and
/// references; a failure is thrown with what ffmpeg said.
func runFFmpeg(_ arguments: [String], in directory: URL) throws {
    let run = try runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["ffmpeg", "-v", "error", "-y"] + arguments, in: directory)
    guard run.status == 0 else { throw FFmpegCLIError(arguments: arguments, message: run.stderr) }
}

struct FFmpegCLIError: Error, CustomStringConvertible {
    var arguments: [String]
    var message: String
    var description: String { "ffmpeg \(arguments.joined(separator: " ")): \(message)" }
}

/// A JSON object written by vmerge (a report, a status file).
func jsonObject(at url: URL) throws -> [String: Any] {
    try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any], url.path)
}

/// Runs vmerge with `arguments` in `directory` and sends it `signal` once its output's temporary
/// file exists (mid-merge); returns the run and whether the signal went out before it finished.
func runInterrupted(_ arguments: [String], in directory: URL, signal: Int32 = SIGINT) throws -> (RunResult, Bool) {
    var signalled = false
    let run = try VMergeBinary.run(arguments, in: directory) { process in
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && process.isRunning {
            if listing(directory).contains(where: { $0.hasSuffix(".tmp") }) {
                Thread.sleep(forTimeInterval: 0.2)
                kill(process.processIdentifier, signal)
                signalled = true
                return
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
    return (run, signalled)
}

/// Waits (up to 10 s) until process `pid` has its own handler for `signal` (Linux: SigCgt in
/// /proc/<pid>/status), so a test's signal tests vmerge's handling, not how fast it started; a
/// fixed half-second sleep was too short on a loaded machine. Elsewhere, half a second.
func waitUntilCatching(_ signal: Int32, pid: Int32) {
    let status = "/proc/\(pid)/status"
    guard FileManager.default.fileExists(atPath: status) else { return Thread.sleep(forTimeInterval: 0.5) }
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
        let text = (try? String(contentsOfFile: status, encoding: .utf8)) ?? ""
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16),
            mask & (1 << UInt64(signal - 1)) != 0
        {
            return
        }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

/// A fresh folder per test, removed afterwards.
func makeScratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func listing(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// Duration of a fixture's video as decoded (last frame's time + one frame - first), measured
/// here independently of vmerge's probe.
func decodedVideoDuration(_ path: String) throws -> Double {
    let times = try MediaInspector(path: path).videoFrames().times.sorted()
    guard let first = times.first, let last = times.last, times.count > 1 else { return 0 }
    let frame = (last - first) / Double(times.count - 1)
    return last + frame - first
}

/// Where each 1 kHz tone of amplitude 0.5 (the sync and trim fixtures') starts, in seconds: the
/// middle of the first 32-sample window whose mean power reaches a quarter of the tone's (half
/// its amplitude), at least half a second after the previous onset. The window's centre lands within a fraction of a millisecond of the
/// true onset even with AAC's smearing of the edge (0.18 ms measured on an unmoved tone).
func toneOnsets(in samples: [Float], rate: Int) -> [Double] {
    let window = 32
    let threshold = Double(0.5 / 2.0.squareRoot() / 2) * Double(0.5 / 2.0.squareRoot() / 2)
    var sums = [Double](repeating: 0, count: samples.count + 1)
    for (i, s) in samples.enumerated() { sums[i + 1] = sums[i] + Double(s) * Double(s) }
    var found: [Double] = []
    var last = Int.min / 2
    var i = 0
    while i + window < samples.count {
        if (sums[i + window] - sums[i]) / Double(window) > threshold && i - last > rate / 2 {
            found.append(Double(i + window / 2) / Double(rate))
            last = i
        }
        i += 1
    }
    return found
}

/// The source frame number each output frame of `path` shows, for the trim and high-frame-rate
/// fixtures (t1, u1-u5) whose pictures carry their number as an 8-bit bar code: bit b is the
/// 40-pixel column b of the 320-pixel output, white for 1; nil where a column is neither black
/// nor white.
func barCodeFrameNumbers(_ path: String) throws -> [Int?] {
    try MediaInspector(path: path).lumaRows(120).map { row in
        var number = 0
        for bit in 0..<8 {
            let luma = Int(row[bit * 40 + 20])
            if luma > 180 { number |= 1 << bit } else if luma > 70 { return nil }
        }
        return number
    }
}

/// Merges `inputs` through the library (--min-duration 0) with `flag` on and with it off, and
/// checks that both outputs show the same source picture in every frame (bar-code fixtures) and
/// the same sound sample for sample: for options that may change only how much work is done.
/// Returns the frame numbers and both runs' results (on, off).
func mergeWithAndWithout(
    _ flag: WritableKeyPath<MergeHooks, Bool>, _ inputs: [JobInput], file: StaticString = #filePath,
    line: UInt = #line
) throws -> (numbers: [Int?], on: MergeResult, off: MergeResult) {
    let dir = try makeScratchDirectory()
    var runs: [(numbers: [Int?], samples: [Float], result: MergeResult)] = []
    var bytes: [Data] = []
    for on in [true, false] {
        var options = MergeOptions()
        options.minDuration = 0
        var hooks = MergeHooks()
        hooks[keyPath: flag] = on
        let path = dir.appendingPathComponent(on ? "on.mp4" : "off.mp4").path
        let result = try Merger(options: options, context: MergeContext(hooks: hooks), report: { _ in })
            .merge(inputs: inputs, output: path)
        runs.append((try barCodeFrameNumbers(path), try MediaInspector(path: path).audioSamples().samples, result))
        bytes.append(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
    XCTAssertEqual(runs[0].numbers, runs[1].numbers, "the same pictures", file: file, line: line)
    XCTAssertEqual(runs[0].samples, runs[1].samples, "the same sound", file: file, line: line)
    // The same frames make the same file, whichever merge of this process ran first.
    XCTAssertTrue(bytes[0] == bytes[1], "the same bytes (\(bytes[0].count) vs \(bytes[1].count))", file: file, line: line)
    return (runs[0].numbers, runs[0].result, runs[1].result)
}

/// Fixture a with 400 bytes in the middle of its media data flipped, at `url`: the H.264 decoder
/// meets corrupt packets there and conceals them.
func writeDamagedCopy(to url: URL) throws {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("a_"))))
    for i in stride(from: bytes.count / 3, to: bytes.count / 3 + 400, by: 2) { bytes[i] ^= 0x5A }
    try Data(bytes).write(to: url)
}

/// A small, fast, reproducible generator (SplitMix64) for seeded tests: a failure names its seed.
struct SeededRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
    mutating func chance(_ p: Double) -> Bool { unit() < p }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}
