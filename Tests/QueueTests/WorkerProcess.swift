import Foundation
import TestSupport

/// A fixture clip's path.
func fixture(_ name: String) -> String {
    Fixtures.directory.appendingPathComponent(name).path
}

/// The built `vmerge` binary running in the background, its stderr (and stdout) into a file.
final class WorkerProcess {
    let process = Process()
    let logFile: URL
    /// Its --name.
    let name: String

    /// The built binary (TestSupport finds it).
    static var binary: URL { VMergeBinary.url }

    /// - Parameter directory: its working folder (default: the test's own).
    init(_ arguments: [String], log: URL, environment: [String: String] = [:], in directory: URL? = nil) throws {
        logFile = log
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        name = arguments.firstIndex(of: "--name").map { arguments[$0 + 1] } ?? ""
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.executableURL = WorkerProcess.binary
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try handle.close()
    }

    var isRunning: Bool { process.isRunning }
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    func kill(_ signal: Int32) {
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, signal) }
    }

    /// Its exit status (128 + the signal that killed it), or nil if it is still running after
    /// `seconds`.
    func waitForExit(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        guard !process.isRunning else { return nil }
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }
}
