import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue
@testable import VMergeWeb

/// A real worker merging a real fixture publishes its progress in the job's row, and a real
/// dashboard shows it: the row moves on while the merge runs, /metrics and the page say so, and
/// the row keeps the final progress once the job is done.
final class WorkerProgressTests: ServerTestCase {
    private var folder: URL!
    private var processes: [WorkerProcess] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-progress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let initialised = vmerge(["queue", "init", "--db", database])
        XCTAssertEqual(initialised.status, 0, initialised.stderr)
    }

    override func tearDownWithError() throws {
        for process in processes {
            process.kill(SIGKILL)
            _ = process.waitForExit(seconds: 5)
        }
        try? FileManager.default.removeItem(at: folder)
        try super.tearDownWithError()
    }

    /// The row's published progress: (phase, clip, clips, out_time, total_time, total_size).
    private func progress(_ id: Int) -> (String, Int, Int, Double, Double, Int64)? {
        guard let sql = try? PGConnection(database),
            let row = try? sql.execute(
                """
                SELECT progress->>'phase', progress->>'clip', progress->>'clips', progress->>'out_time',
                    progress->>'total_time', progress->>'total_size'
                FROM vmerge.jobs WHERE id = $1::bigint AND progress IS NOT NULL
                """, ["\(id)"]),
            row.rowCount == 1, let phase = row.value(0, 0)
        else { return nil }
        return (
            phase, row.value(0, 1).flatMap { Int($0) } ?? -1, row.value(0, 2).flatMap { Int($0) } ?? -1,
            row.value(0, 3).flatMap { Double($0) } ?? -1, row.value(0, 4).flatMap { Double($0) } ?? -1,
            row.value(0, 5).flatMap { Int64($0) } ?? -1
        )
    }

    private func state(_ id: Int) -> String? {
        try? PGConnection(database).execute("SELECT state FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"])
            .value(0, 0)
    }

    @discardableResult
    private func wait(_ seconds: Double = 60, for condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }

    private func startDashboard() throws -> UInt16 {
        let dashboard = try WorkerProcess(
            ["dashboard", "--db", database, "--listen", "127.0.0.1:0"], log: folder.appendingPathComponent("dash.log"))
        processes.append(dashboard)
        var port: UInt16?
        wait(20) {
            port = dashboard.log.firstMatch(of: /serving http:\/\/[^ ]*:([0-9]+)\//).flatMap { UInt16($0.output.1) }
            return port != nil || !dashboard.isRunning
        }
        return try XCTUnwrap(port, dashboard.log)
    }

    /// The value of the sample `series` (its name and labels, whole) in a metrics text.
    private func sample(_ series: String, in text: String) -> Double? {
        text.components(separatedBy: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.dropFirst(series.count + 1)) }
    }

    func testARunningJobsProgressIsInItsRowOnTheMetricsAndOnThePage() throws {
        let clips = 40
        let job: [String: Any] = [
            "name": "<i>long</i>",
            "inputs": Array(repeating: fixture("a_none_640x480_30fps_aac44k_stereo.mov"), count: clips),
            "output": "long.mp4",
        ]
        let list = folder.appendingPathComponent("jobs.jsonl")
        try JSONSerialization.data(withJSONObject: job).write(to: list)
        let added = vmerge(["queue", "add", "--db", database, "--out", folder.path, "--min-duration", "0", list.path])
        XCTAssertEqual(added.status, 0, added.stderr)
        let port = try startDashboard()
        let worker = try WorkerProcess(
            ["worker", "--db", database, "--name", "p1", "--lease", "6", "--poll-interval", "0.2", "--once"],
            log: folder.appendingPathComponent("worker.log"))
        processes.append(worker)

        // Two reads while it merges: the media time made goes up (published once a second,
        // though the lease is renewed only every 2 s).
        XCTAssertTrue(wait { (progress(1)?.3 ?? 0) > 0 }, worker.log)
        let first = try XCTUnwrap(progress(1))
        XCTAssertTrue(wait(10) { (progress(1)?.3 ?? 0) > first.3 }, "\(first) \(worker.log)")
        let second = try XCTUnwrap(progress(1))
        XCTAssertEqual(second.0, "encoding")
        XCTAssertEqual(second.2, clips)
        XCTAssertTrue((1...clips).contains(second.1), "\(second)")
        XCTAssertEqual(second.4, 3.0 * Double(clips), accuracy: 0.1)
        XCTAssertGreaterThan(second.5, 0, "bytes written")

        let metrics = try RawHTTP(port: port).request("GET", "/metrics").text
        let heartbeat = try XCTUnwrap(
            sample(#"vmerge_worker_last_heartbeat_timestamp_seconds{worker="p1"}"#, in: metrics), metrics)
        XCTAssertEqual(heartbeat, Date().timeIntervalSince1970, accuracy: 30)
        let ratio = try XCTUnwrap(sample(#"vmerge_job_progress_ratio{job="1"}"#, in: metrics), metrics)
        XCTAssertTrue(ratio > 0 && ratio < 1, "\(ratio)")
        try assertPromtoolAccepts(metrics)
        let page = try RawHTTP(port: port).request("GET", "/").text
        let row = try XCTUnwrap(page.components(separatedBy: "\n").first { $0.hasPrefix("<tr id=\"job-1\">") }, page)
        XCTAssertTrue(
            row.hasPrefix(
                "<tr id=\"job-1\"><td class=\"number\"><a href=\"/jobs/1\">1</a></td><td class=\"name\">&lt;i&gt;long&lt;/i&gt;</td>"
                    + "<td class=\"name\">p1</td><td class=\"name\"><span title=\"\(fixture("a_none_640x480_30fps_aac44k_stereo.mov"))\">"
                    + "a_none_640x480_30fps_aac44k_stereo.mov</span>, "), row)
        // The first three inputs, and how many more of the job's clips.
        XCTAssertTrue(row.contains("</span>, and \(clips - 3) more</td><td><span class=\"clip\">clip "), row)
        XCTAssertTrue(row.contains(" of \(clips)</span></td>"), row)
        XCTAssertNotNil(
            row.firstMatch(
                of:
                    /<\/progress> [0-9.]+%<\/td><td class="number">[0-9.]+x<\/td><td class="number">[0-9]+:[0-9]{2}<\/td>/
            ),
            row)
        XCTAssertNotNil(
            row.firstMatch(
                of: /<td class="number">[0-9.]+ (B|KiB|MiB)( \/ ≈ [0-9.]+ (B|KiB|MiB))?<\/td><td><\/td><\/tr>$/), row)

        // Done: the row keeps the final progress (all of it made), and the running series end.
        XCTAssertEqual(worker.waitForExit(seconds: 240), 0, worker.log)
        XCTAssertEqual(state(1), "done", worker.log)
        let last = try XCTUnwrap(progress(1))
        XCTAssertEqual(last.0, "done")
        XCTAssertEqual([last.1, last.2], [clips, clips])
        XCTAssertEqual(last.3, last.4, accuracy: 0.1)
        let after = try RawHTTP(port: port).request("GET", "/metrics").text
        XCTAssertFalse(after.contains("vmerge_job_progress_ratio{"), after)
        XCTAssertNotNil(sample(#"vmerge_worker_last_heartbeat_timestamp_seconds{worker="p1"}"#, in: after), after)
        XCTAssertFalse(try RawHTTP(port: port).request("GET", "/").text.contains("<tr id=\"job-1\">"))
        try assertPromtoolAccepts(after)
    }

    /// A worker stopped by SIGTERM puts its job back, and its progress with it: a queued job has
    /// none.
    func testAJobPutBackHasNoProgress() throws {
        let job: [String: Any] = [
            "name": "long", "inputs": Array(repeating: fixture("a_none_640x480_30fps_aac44k_stereo.mov"), count: 40),
            "output": "long.mp4",
        ]
        let list = folder.appendingPathComponent("jobs.jsonl")
        try JSONSerialization.data(withJSONObject: job).write(to: list)
        let added = vmerge(["queue", "add", "--db", database, "--out", folder.path, "--min-duration", "0", list.path])
        XCTAssertEqual(added.status, 0, added.stderr)
        let worker = try WorkerProcess(
            ["worker", "--db", database, "--name", "p1", "--lease", "6", "--poll-interval", "0.2"],
            log: folder.appendingPathComponent("worker.log"))
        processes.append(worker)
        XCTAssertTrue(wait { (progress(1)?.3 ?? 0) > 0 }, worker.log)
        worker.kill(SIGTERM)
        XCTAssertEqual(worker.waitForExit(seconds: 30), 143, worker.log)
        XCTAssertEqual(state(1), "queued")
        XCTAssertNil(progress(1))
    }

    /// A progress written by hand (not an object, numbers as text, out of range) reads as
    /// nothing or as 0, never as a failed read, and the metrics stay valid.
    func testAHandWrittenProgressCannotStopTheReads() throws {
        let sql = try PGConnection(database)
        for (index, progress) in [
            #""text""#, "[1, 2]", #"{"phase": "encoding", "clip": "x", "out_time": "NaN", "total_time": 1e400}"#,
            #"{"phase": "encoding", "clip": 2.5, "clips": -1, "elapsed": -3, "total_size": 1e30}"#,
        ].enumerated() {
            try sql.execute(
                """
                INSERT INTO vmerge.jobs (job_key, name, spec, state, worker, lease_until, heartbeat_at, progress)
                VALUES ($1, $1, '{}', 'running', 'w', now() + interval '1 minute', now(), $2::jsonb)
                """, ["k\(index)", progress])
        }
        let snapshot = try JobQueue(connection: sql).snapshot()
        XCTAssertEqual(snapshot.running.map(\.id), [1, 2, 3, 4])
        XCTAssertEqual(snapshot.running.map { $0.progress == nil }, [true, true, false, false])
        for job in snapshot.running.compactMap(\.progress) {
            XCTAssertEqual(job.fraction, 0)
            XCTAssertNil(job.speed)
        }
        let text = QueueMetrics.text(.success(snapshot)).text
        XCTAssertTrue(text.contains("\nvmerge_job_progress_ratio{job=\"3\"} 0\n"), text)
        try assertPromtoolAccepts(text)
    }

    private func assertPromtoolAccepts(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let input = folder.appendingPathComponent("metrics.txt")
        try Data(text.utf8).write(to: input)
        let (status, said) = try runPromtool(["check", "metrics"], input: input)
        XCTAssertEqual(status, 0, "promtool: \(said)", file: file, line: line)
        XCTAssertEqual(said, "", file: file, line: line)
    }
}
