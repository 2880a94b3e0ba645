import Foundation
import VMergeAV
import VMergeCore
import XCTest

@testable import VMergeQueue

/// What the tests of `vmerge worker` share: a queue made in the test's own database, a folder
/// for job lists and outputs, the built binary started as workers (killed at the end), and ways
/// to read the queue and the outputs back.
class WorkerTestCase: ServerTestCase {
    var folder: URL!
    var out: URL!
    var workers: [WorkerProcess] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-worker-\(UUID().uuidString)")
        out = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let initialised = vmerge(["queue", "init", "--db", database])
        XCTAssertEqual(initialised.status, 0, initialised.stderr)
    }

    override func tearDownWithError() throws {
        for worker in workers { worker.kill(SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
        try super.tearDownWithError()
    }

    // MARK: helpers

    /// The 3 s fixture, 640x480 at 30 fps.
    let clip = fixture("a_none_640x480_30fps_aac44k_stereo.mov")

    /// A job list of `lines` (JSON objects) in the test's folder; its path.
    func jobList(_ lines: [[String: Any]], name: String = "jobs.jsonl") throws -> String {
        let path = folder.appendingPathComponent(name).path
        let text = try lines.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        try Data((text.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A short job: the first `seconds` of the fixture.
    func shortJob(_ name: String, seconds: Double) -> [String: Any] {
        ["name": name, "inputs": [["path": clip, "end": seconds]], "output": name + ".mp4"]
    }

    /// A job long enough to be caught while it runs: `count` times the whole fixture.
    func longJob(_ name: String, count: Int) -> [String: Any] {
        ["name": name, "inputs": Array(repeating: clip, count: count), "output": name + ".mp4"]
    }

    func add(_ list: String, _ extra: [String] = []) throws {
        let added = vmerge(["queue", "add", "--db", database, "--out", out.path, "--min-duration", "0", list] + extra)
        XCTAssertEqual(added.status, 0, added.stderr)
    }

    /// Starts `vmerge worker` named `name`; its stderr goes to a file. Its connection string
    /// holds a password (which the test server, trusting every local user, never asks for),
    /// which no message may show.
    @discardableResult
    func startWorker(
        _ name: String, _ extra: [String] = [], lease: String = "2", jobs: String = "1",
        environment: [String: String] = [:], in directory: URL? = nil
    ) throws -> WorkerProcess {
        let worker = try WorkerProcess(
            [
                "worker", "--db", database + " password=s3cret", "--name", name, "--lease", lease, "--poll-interval",
                "0.2", "-j", jobs,
            ] + extra,
            log: folder.appendingPathComponent("\(name).log"), environment: environment, in: directory)
        workers.append(worker)
        return worker
    }

    /// One row of vmerge.jobs, on a fresh connection (nil while the server is down).
    func row(_ id: Int) -> (state: String?, attempts: Int?, worker: String?, error: String?)? {
        guard let sql = try? PGConnection(database),
            let result = try? sql.execute(
                "SELECT state, attempts, worker, last_error FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"]),
            result.rowCount == 1
        else { return nil }
        return (result.value(0, 0), result.value(0, 1).flatMap { Int($0) }, result.value(0, 2), result.value(0, 3))
    }

    /// The counts per state (empty while the server is down).
    func counts() -> [QueueState: Int] {
        (try? JobQueue(connecting: database).counts()) ?? [:]
    }

    /// Waits up to `seconds` for `condition`; whether it came true.
    @discardableResult
    func wait(_ seconds: Double = 60, for condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }

    /// The names in the output folder, hidden ones (temporaries) included.
    var outputs: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []).sorted() }

    var temporaries: [String] { outputs.filter { $0.hasPrefix(".") } }

    /// The output `name` reads back whole (a complete MP4 holding its job key) and lasts `seconds`.
    func assertWhole(_ name: String, seconds: Double, file: StaticString = #filePath, line: UInt = #line) {
        let path = out.appendingPathComponent(name).path
        XCTAssertNotNil(
            Probe.recordedJobKey(at: path), "\(name) is not a finished vmerge output", file: file, line: line)
        let duration = (try? Probe.clip(at: path).0.durationSeconds) ?? -1
        XCTAssertEqual(duration, seconds, accuracy: 0.05, "\(name)", file: file, line: line)
    }

    /// SIGTERM, then the exit status (nil if it did not exit within 30 s).
    func terminate(_ worker: WorkerProcess) -> Int32? {
        worker.kill(SIGTERM)
        return worker.waitForExit(seconds: 30)
    }
}
