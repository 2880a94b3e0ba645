import Foundation
import VMergeAV
import VMergeCore
import XCTest

@testable import VMergeQueue

/// The port a `watch` or `worker` process serves its metrics on, from its stderr line; throws
/// when it did not start within 20 s.
private func metricsPort(of process: WorkerProcess) throws -> UInt16 {
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
        if let match = process.log.firstMatch(of: /serving metrics at http:\/\/[^ ]*:([0-9]+)\/metrics\n/),
            let port = UInt16(match.output.1)
        {
            return port
        }
        guard process.isRunning else { break }
        Thread.sleep(forTimeInterval: 0.05)
    }
    throw HTTPTestError("no metrics server: \(process.log)")
}

/// Waits up to `seconds` for `condition`; whether it came true.
@discardableResult
private func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return condition()
}

private func fileSize(_ path: String) -> Double {
    Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1)
}

/// The figures every scrape of a process that ran one good job and one with a bad input shows.
private func assertOneDoneOneFailedForItsInput(
    _ scrape: Scrape, wall: Double?, media: Double, output: String, read: Double, deleted: Double,
    file: StaticString = #filePath, line: UInt = #line
) {
    for (series, expected) in [
        (#"vmerge_jobs_finished_total{result="done"}"#, 1.0), (#"vmerge_jobs_finished_total{result="failed"}"#, 1),
        (#"vmerge_jobs_finished_total{result="cancelled"}"#, 0), (#"vmerge_jobs_failed_total{reason="input"}"#, 1),
        (#"vmerge_jobs_failed_total{reason="output"}"#, 0), (#"vmerge_jobs_failed_total{reason="no_space"}"#, 0),
        (#"vmerge_jobs_failed_total{reason="nothing_to_merge"}"#, 0), (#"vmerge_jobs_failed_total{reason="other"}"#, 0),
        (#"vmerge_jobs_failed_total{reason="crashed"}"#, 0), ("vmerge_up", 1),
        ("vmerge_job_duration_seconds_count", 1), ("vmerge_job_encode_speed_ratio_count", 1),
        (#"vmerge_job_duration_seconds_bucket{le="+Inf"}"#, 1),
        ("vmerge_written_bytes_total", fileSize(output)), ("vmerge_read_bytes_total", read),
        ("vmerge_sources_deleted_total", deleted),
    ] {
        XCTAssertEqual(scrape.value(series, file: file, line: line), expected, series, file: file, line: line)
    }
    let duration = scrape.value("vmerge_job_duration_seconds_sum")
    // The report's, rounded to the millisecond (watch writes one); else within the test's time.
    if let wall {
        XCTAssertEqual(duration, wall, accuracy: 0.002, file: file, line: line)
    } else {
        XCTAssertTrue((0.01..<120).contains(duration), "\(duration)", file: file, line: line)
    }
    XCTAssertEqual(
        scrape.value("vmerge_job_encode_speed_ratio_sum"), media / duration, accuracy: media / duration * 0.02,
        file: file, line: line)
    let now = Date().timeIntervalSince1970
    XCTAssertTrue((now - 120...now).contains(scrape.value("process_start_time_seconds")), file: file, line: line)
    XCTAssertTrue(
        (now - 30...now).contains(scrape.value("vmerge_last_heartbeat_timestamp_seconds")), scrape.text, file: file,
        line: line)
}

/// `vmerge watch --metrics-listen`: the built binary on real fixtures, scraped over a socket.
final class WatchMetricsTests: XCTestCase {
    private var folder: URL!
    private var processes: [WorkerProcess] = []

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vmerge-watch-metrics-\(UUID().uuidString)")
        for name in ["in/good", "in/bad", "out"] {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
    }

    override func tearDownWithError() throws {
        for process in processes { process.kill(SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
    }

    private func start(_ arguments: [String]) throws -> WorkerProcess {
        let process = try WorkerProcess(
            arguments, log: folder.appendingPathComponent("watch\(processes.count).log"))
        processes.append(process)
        return process
    }

    /// One job merged (its source deleted), one failed for its input: the counters, histograms and
    /// bytes say so exactly, the text passes promtool, and only /metrics and /healthz are served.
    func testAWatchersMetricsCountItsJobs() throws {
        let clip = fixture("a_none_640x480_30fps_aac44k_stereo.mov")
        let good = folder.appendingPathComponent("in/good/clip.mov").path
        try FileManager.default.copyItem(atPath: clip, toPath: good)
        try FileManager.default.copyItem(
            atPath: fixture("bad_empty.mov"), toPath: folder.appendingPathComponent("in/bad/clip.mov").path)
        for job in ["good", "bad"] {
            try Data().write(to: folder.appendingPathComponent("in/\(job)/.ready"))
        }
        let (inbox, out) = (folder.appendingPathComponent("in").path, folder.appendingPathComponent("out").path)
        let watcher = try start([
            "watch", inbox, "--out", out, "--delete-sources", "--metrics-listen", "127.0.0.1:0",
        ])
        let port = try metricsPort(of: watcher)
        XCTAssertTrue(
            waitFor(120) { watcher.log.contains("watch: done good") && watcher.log.contains("watch: failed bad") },
            watcher.log)
        let response = try RawHTTP(port: port).request("GET", "/metrics")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
        let output = out + "/good.mp4"
        let report = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output + ".json")))
                as? [String: Any])
        let wall = try XCTUnwrap((report["timings"] as? [String: Any])?["wall_seconds"] as? Double)
        let media = try XCTUnwrap((report["output"] as? [String: Any])?["duration"] as? Double)
        assertOneDoneOneFailedForItsInput(
            Scrape(response.text), wall: wall, media: media, output: output, read: fileSize(clip), deleted: 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: good))
        try assertPromtoolChecks(response.text, in: folder)
        XCTAssertEqual(try RawHTTP(port: port).request("GET", "/healthz").text, "ok\n")
        for path in ["/", "/status", "/metrics/../etc/passwd"] {
            XCTAssertEqual(try RawHTTP(port: port).request("GET", path).status, 404, path)
        }
        watcher.kill(SIGTERM)
        XCTAssertEqual(watcher.waitForExit(seconds: 30), 0, watcher.log)
        XCTAssertThrowsError(try RawHTTP(port: port).request("GET", "/metrics"))
    }

    /// A watcher whose receiver cannot be reached: its events wait in .events, and its metrics
    /// say how many and for how long, beside the failed tries.
    func testAWatchersOwedEventsAreMeasured() throws {
        try FileManager.default.copyItem(
            atPath: fixture("a_none_640x480_30fps_aac44k_stereo.mov"),
            toPath: folder.appendingPathComponent("in/good/clip.mov").path)
        try Data().write(to: folder.appendingPathComponent("in/good/.ready"))
        let secret = folder.appendingPathComponent("secret")
        try Data(("whsec_" + Data(repeating: 7, count: 32).base64EncodedString() + "\n").utf8).write(to: secret)
        let (inbox, out) = (folder.appendingPathComponent("in").path, folder.appendingPathComponent("out").path)
        // Nothing listens on port 9: every try is refused.
        let watcher = try start([
            "watch", inbox, "--out", out, "--metrics-listen", "127.0.0.1:0", "--notify", "https://127.0.0.1:9/hooks",
            "--allow-remote", "https://127.0.0.1:9/", "--notify-secret-file", secret.path,
        ])
        let port = try metricsPort(of: watcher)
        var scrape = Scrape("")
        XCTAssertTrue(
            waitFor(60) {
                scrape = Scrape((try? RawHTTP(port: port).request("GET", "/metrics").text) ?? "")
                return scrape.samples["vmerge_events_waiting"] == 2
                    && (scrape.samples["vmerge_event_deliveries_total{result=\"failed\"}"] ?? 0) >= 1
            }, scrape.text + watcher.log)
        XCTAssertEqual(scrape.value("vmerge_event_deliveries_total{result=\"delivered\"}"), 0)
        XCTAssertGreaterThan(scrape.value("vmerge_events_oldest_waiting_age_seconds"), 0)
        try assertPromtoolChecks(scrape.text, in: folder)
        watcher.kill(SIGTERM)
        XCTAssertEqual(watcher.waitForExit(seconds: 30), 0, watcher.log)
    }

    /// Before any job every labelled series is there at 0, and the heartbeat is the inbox's last
    /// scan; an open address is warned of; a taken port is one line and exit 1, a malformed
    /// address a usage error.
    func testSeriesStartAtZeroAndRefusalsAreOneLine() throws {
        let (inbox, out) = (folder.appendingPathComponent("in").path, folder.appendingPathComponent("out").path)
        let watcher = try start(["watch", inbox, "--out", out, "--metrics-listen", "0.0.0.0:0"])
        let port = try metricsPort(of: watcher)
        XCTAssertTrue(
            watcher.log.contains(
                "vmerge: watch: --metrics-listen 0.0.0.0:0 can be reached from other machines: anyone who can "
                    + "connect reads this process's metrics\n"), watcher.log)
        XCTAssertTrue(waitFor(10) { watcher.log.contains("watch: watching ") })
        let scrape = Scrape(try RawHTTP(port: port).request("GET", "/metrics").text)
        for result in ["done", "failed", "cancelled"] {
            XCTAssertEqual(scrape.value(#"vmerge_jobs_finished_total{result="\#(result)"}"#), 0)
        }
        for reason in ["input", "output", "no_space", "nothing_to_merge", "crashed", "other"] {
            XCTAssertEqual(scrape.value(#"vmerge_jobs_failed_total{reason="\#(reason)"}"#), 0)
        }
        XCTAssertEqual(scrape.value(#"vmerge_job_duration_seconds_bucket{le="1"}"#), 0)
        XCTAssertEqual(scrape.value("vmerge_job_duration_seconds_count"), 0)
        XCTAssertEqual(scrape.value("vmerge_read_bytes_total"), 0)
        let now = Date().timeIntervalSince1970
        XCTAssertTrue((now - 30...now).contains(scrape.value("vmerge_last_heartbeat_timestamp_seconds")))
        try assertPromtoolChecks(scrape.text, in: folder)

        let taken = vmerge(["watch", inbox, "--out", out, "--metrics-listen", "127.0.0.1:\(port)"])
        XCTAssertEqual(taken.status, 1)
        XCTAssertEqual(taken.stderr, "vmerge: 127.0.0.1:\(port): cannot listen: Address already in use\n")
        let malformed = vmerge(["watch", inbox, "--out", out, "--metrics-listen", "localhost:9100"])
        XCTAssertEqual(malformed.status, 2)
        XCTAssertTrue(
            malformed.stderr.hasPrefix(
                "vmerge: invalid value 'localhost:9100' for '--metrics-listen': expected address:port ('localhost' is "
                    + "not a numeric IPv4 or IPv6 address)\n"), malformed.stderr)
        watcher.kill(SIGTERM)
        XCTAssertEqual(watcher.waitForExit(seconds: 30), 0, watcher.log)
    }
}

/// `vmerge worker --metrics-listen`: the built binary over a real queue and real fixtures.
final class WorkerMetricsTests: ServerTestCase {
    private var folder: URL!
    private var workers: [WorkerProcess] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vmerge-worker-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("out"), withIntermediateDirectories: true)
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
    }

    override func tearDownWithError() throws {
        for worker in workers { worker.kill(SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
        try super.tearDownWithError()
    }

    func testAWorkersMetricsCountItsJobs() throws {
        let clip = fixture("a_none_640x480_30fps_aac44k_stereo.mov")
        let jobs = [
            #"{"name": "good", "inputs": ["\#(clip)"], "output": "good.mp4"}"#,
            #"{"name": "bad", "inputs": ["\#(fixture("bad_empty.mov"))"], "output": "bad.mp4"}"#,
        ]
        let list = folder.appendingPathComponent("jobs.jsonl")
        try Data((jobs.joined(separator: "\n") + "\n").utf8).write(to: list)
        let out = folder.appendingPathComponent("out").path
        let added = vmerge(["queue", "add", "--db", database, "--out", out, list.path])
        XCTAssertEqual(added.status, 0, added.stderr)
        let worker = try WorkerProcess(
            ["worker", "--db", database, "--name", "w1", "--poll-interval", "0.2", "--metrics-listen", "127.0.0.1:0"],
            log: folder.appendingPathComponent("w1.log"))
        workers.append(worker)
        let port = try metricsPort(of: worker)
        XCTAssertTrue(
            waitFor(120) {
                let counts = (try? JobQueue(connecting: database).counts()) ?? [:]
                return counts[.done] == 1 && counts[.failed] == 1
            }, worker.log)
        // The counts are the worker's once it has logged them (the row is written first).
        XCTAssertTrue(
            waitFor(10) { worker.log.contains("job 2 bad: failed: ") && worker.log.contains("job 1 good: done") })
        let text = try RawHTTP(port: port).request("GET", "/metrics").text
        let output = out + "/good.mp4"
        let media = try Probe.clip(at: output).0.durationSeconds
        assertOneDoneOneFailedForItsInput(
            Scrape(text), wall: nil, media: media, output: output, read: fileSize(clip), deleted: 0)
        try assertPromtoolChecks(text, in: folder)

        let taken = vmerge(["worker", "--db", database, "--metrics-listen", "127.0.0.1:\(port)"])
        XCTAssertEqual(taken.status, 1)
        XCTAssertEqual(taken.stderr, "vmerge: 127.0.0.1:\(port): cannot listen: Address already in use\n")
        worker.kill(SIGTERM)
        XCTAssertEqual(worker.waitForExit(seconds: 30), 143, worker.log)
    }
}
