import Foundation
import XCTest

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

public struct RemoteTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A program the remote tests' servers need is missing: the test is skipped, except under CI (or
/// VMERGE_REQUIRE_TOOLS=1), where `make test` installed it, so a skip would hide a server never run.
public func missingTool(_ message: String) -> Error {
    let environment = ProcessInfo.processInfo.environment
    if environment["CI"]?.isEmpty == false || environment["VMERGE_REQUIRE_TOOLS"] == "1" {
        return RemoteTestError("\(message), and CI needs it")
    }
    return XCTSkip(message)
}

/// vmerge's cache folder as the Makefile defines it (VMERGE_CACHE, else XDG's, else ~/.cache).
public var vmergeCache: String {
    let environment = ProcessInfo.processInfo.environment
    if let cache = environment["VMERGE_CACHE"], !cache.isEmpty { return cache }
    let xdg = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
    return (xdg ?? NSHomeDirectory() + "/.cache") + "/vmerge"
}

/// A fresh folder of the test's own under the system's temporary folder.
public func makeTemporaryFolder(_ prefix: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix).\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0). Another
/// process may take it before the server binds it: the callers try again with another.
public func freeLocalPort() throws -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw RemoteTestError("socket: errno \(errno)") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
        }
    }
    guard bound else { throw RemoteTestError("bind: errno \(errno)") }
    return UInt16(bigEndian: address.sin_port)
}

/// A server run as a child process whose stdin is a pipe only the test holds: when the test
/// process ends, however it ends, the pipe closes and the server exits (itself, or through the
/// shell that watches it), so no server outlives a killed test run.
public final class ChildServer {
    public let process = Process()
    public let log: URL
    private let input = Pipe()
    private let output = Pipe()
    private var stopped = false

    /// Starts `executable`; its stderr (and stdout, unless `readsOutput`) goes to `log`.
    public init(_ executable: String, _ arguments: [String], log: URL, readsOutput: Bool = false) throws {
        self.log = log
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        defer { try? logHandle.close() }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = readsOutput ? output : logHandle
        process.standardError = logHandle
        try process.run()
        try? input.fileHandleForReading.close()
    }

    deinit { stop() }

    public var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The first line the server writes to stdout, when it writes one within `timeout` seconds.
    public func firstLine(timeout: TimeInterval) -> String? {
        let reader = output.fileHandleForReading
        let box = LineBox()
        let thread = Thread {
            var data = Data()
            while !data.contains(UInt8(ascii: "\n")) {
                let more = reader.availableData
                if more.isEmpty { break }
                data.append(more)
            }
            box.set(String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init))
        }
        thread.start()
        return box.wait(timeout: timeout)
    }

    /// Closes the server's stdin (it exits on that), then waits for it; SIGKILL after `timeout`.
    public func stop(timeout: TimeInterval = 5) {
        guard !stopped else { return }
        stopped = true
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// One line handed from a reading thread to the waiting test.
private final class LineBox: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var line: String?

    public func set(_ line: String?) {
        self.line = line
        done.signal()
    }

    public func wait(timeout: TimeInterval) -> String? {
        done.wait(timeout: .now() + timeout) == .success ? line : nil
    }
}

/// One answer of a server's control endpoint.
public struct ControlResponse {
    public let status: Int
    public let body: Data
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A plain request to a test server's control endpoint (not S3: nothing is signed), synchronous.
public func controlRequest(_ method: String, _ url: URL, body: Data? = nil) throws -> ControlResponse {
    // The curl CLI, not URLSession: FoundationNetworking's handles leak in the test process, which
    // the address sanitizer's leak check (make test-asan) would count against the run.
    let folder = try makeTemporaryFolder("vmerge-control")
    defer { try? FileManager.default.removeItem(at: folder) }
    let answer = folder.appendingPathComponent("answer")
    var arguments = ["-s", "-X", method, "-o", answer.path, "-w", "%{http_code}", "--max-time", "30"]
    if let body {
        let sent = folder.appendingPathComponent("body")
        try body.write(to: sent)
        arguments += ["--data-binary", "@" + sent.path, "-H", "Content-Type: application/octet-stream"]
    }
    let run = try runTool("curl", arguments + [url.absoluteString])
    guard run.status == 0, let status = Int(run.stdout.suffix(3)) else {
        throw RemoteTestError("\(method) \(url.path): curl exited \(run.status): \(run.stderr)")
    }
    return ControlResponse(status: status, body: FileManager.default.contents(atPath: answer.path) ?? Data())
}
