import Foundation
import XCTest

/// "Is it alive?": workers say when they start, that they live (busy or idle) and when they stop;
/// the page and the metrics tell running, idle, stopped and silent workers apart, and say at once
/// when jobs are queued and no live worker can take them.
final class WorkerLivenessTests: DashboardTestCase {
    func metric(_ text: String, _ name: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { $0.split(separator: " ").last }
            .flatMap { Double($0) }
    }

    func testThePageTellsIdleStoppedAndSilentWorkersAndSaysWhenNoneIsAlive() throws {
        let (_, port) = try startDashboard()
        let worker = try WorkerProcess(
            ["worker", "--db", database, "--name", "w-idle", "--lease", "3", "--poll-interval", "0.2"],
            log: folder.appendingPathComponent("worker.log"))
        let deadline = Date().addingTimeInterval(20)
        var page = ""
        while Date() < deadline {
            page = try RawHTTP(port: port).request("GET", "/").text
            if page.contains("<span class=\"worker-idle\">idle</span>") { break }
            usleep(200_000)
        }
        XCTAssertTrue(page.contains("<td class=\"name\">w-idle</td><td><span class=\"worker-idle\">idle</span>"), page)
        var metrics = try RawHTTP(port: port).request("GET", "/metrics").text
        XCTAssertEqual(metric(metrics, "vmerge_workers{state=\"idle\"}"), 1, metrics)
        // A worker that did not say it stopped and is not heard from for a whole lease is silent.
        try sql(
            "INSERT INTO vmerge.workers (name, heartbeat_at, lease_seconds) VALUES ('w-gone', now() - interval '5 minutes', 60)"
        )
        worker.kill(SIGTERM)
        XCTAssertEqual(worker.waitForExit(seconds: 20), 128 + SIGTERM, worker.log)
        try addJobs(["waiting"])
        // The page's snapshot is shared for a second, and read late on a loaded machine: asked
        // until it shows what the database holds.
        let expected = [
            "<span class=\"worker-stopped\">stopped</span>",
            "<td class=\"name\">w-gone</td><td><span class=\"worker-silent\">silent</span>",
            "<p class=\"down\" id=\"no-workers\">1 job is queued and no worker is alive to take it",
        ]
        let until = Date().addingTimeInterval(20)
        repeat {
            page = try RawHTTP(port: port).request("GET", "/").text
            if expected.allSatisfy(page.contains) { break }
            usleep(300_000)
        } while Date() < until
        for text in expected { XCTAssertTrue(page.contains(text), "missing \(text) in\n\(page)") }
        metrics = try RawHTTP(port: port).request("GET", "/metrics").text
        XCTAssertEqual(metric(metrics, "vmerge_workers{state=\"stopped\"}"), 1, metrics)
        XCTAssertEqual(metric(metrics, "vmerge_workers{state=\"silent\"}"), 1, metrics)
        XCTAssertEqual(metric(metrics, "vmerge_workers{state=\"idle\"}"), 0, metrics)
        // A paused queue holds its jobs on purpose: no banner.
        XCTAssertEqual(vmerge(["queue", "pause", "--db", database]).status, 0)
        let paused = Date().addingTimeInterval(20)
        repeat {
            page = try RawHTTP(port: port).request("GET", "/").text
            if page.contains("id=\"paused\"") { break }
            usleep(300_000)
        } while Date() < paused
        XCTAssertTrue(page.contains("id=\"paused\""), page)
        XCTAssertFalse(page.contains("id=\"no-workers\""), page)
    }
}
