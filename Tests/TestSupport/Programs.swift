import Foundation

/// Result of one run of a program.
public struct RunResult {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Where SwiftPM put the package's products (the `vmerge` binary, the example, Modules/): beside
/// the test bundle. On Linux the bundle is the build folder itself, on macOS a .xctest inside it.
public enum BuildProducts {
    public static let folder: URL = {
        let candidates = [
            Bundle.main.bundleURL, Bundle(for: Marker.self).bundleURL,
            Bundle(for: Marker.self).bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        return candidates.first {
            FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("vmerge").path)
        } ?? candidates[0]
    }()

    private final class Marker {}
}

/// The built `vmerge` binary (VMERGE_BIN names another one).
public enum VMergeBinary {
    public static let url: URL = {
        if let override = ProcessInfo.processInfo.environment["VMERGE_BIN"] { return URL(fileURLWithPath: override) }
        return BuildProducts.folder.appendingPathComponent("vmerge")
    }()

    /// Runs vmerge with `arguments` in `directory`; returns when it exits. `environment` entries
    /// are added to the test's own; `input` is written to its stdin.
    public static func run(
        _ arguments: [String], in directory: URL, environment: [String: String] = [:], input: String? = nil,
        onStart: ((Process) -> Void)? = nil
    ) throws -> RunResult {
        try runProgram(url, arguments, in: directory, environment: environment, input: input, onStart: onStart)
    }
}

/// Runs any program (in `directory`, else the test's own), collecting stdout and stderr
/// concurrently so a chatty child never blocks on a full pipe. `environment` entries are added to
/// the test's own; `input` is written to its stdin (else it reads nothing).
public func runProgram(
    _ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
    input: String? = nil, onStart: ((Process) -> Void)? = nil
) throws -> RunResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    // No test's vmerge ever asks the EC2 metadata address for credentials (only loopback is
    // reached from tests); a test of that source sets its own endpoint.
    let quiet = ["AWS_EC2_METADATA_DISABLED": "true"]
    process.environment = ProcessInfo.processInfo.environment.merging(quiet.merging(environment) { $1 }) { $1 }
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

/// Runs `name`, a path or a program found on PATH, like `runProgram`.
public func runTool(
    _ name: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
) throws -> RunResult {
    name.hasPrefix("/")
        ? try runProgram(URL(fileURLWithPath: name), arguments, in: directory, environment: environment)
        : try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"), [name] + arguments, in: directory, environment: environment)
}

/// Runs the ffmpeg CLI in `directory` (errors only, overwriting), for making test media and
/// references; a failure is thrown with what ffmpeg said.
public func runFFmpeg(_ arguments: [String], in directory: URL) throws {
    let run = try runTool("ffmpeg", ["-v", "error", "-y"] + arguments, in: directory)
    guard run.status == 0 else { throw FFmpegCLIError(arguments: arguments, message: run.stderr) }
}

public struct FFmpegCLIError: Error, CustomStringConvertible {
    public var arguments: [String]
    public var message: String
    public var description: String { "ffmpeg \(arguments.joined(separator: " ")): \(message)" }
}

/// Runs vmerge with `arguments` in `directory` and sends it `signal` once its output's temporary
/// file exists (mid-merge); returns the run and whether the signal went out before it finished.
public func runInterrupted(
    _ arguments: [String], in directory: URL, signal: Int32 = SIGINT
) throws -> (RunResult, Bool) {
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
public func waitUntilCatching(_ signal: Int32, pid: Int32) {
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
