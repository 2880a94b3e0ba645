import Foundation
import XCTest

/// `vmerge dashboard --watch` without a database: a real watcher's status file, shown by a real
/// dashboard, read over a socket.
final class DashboardWatchTests: XCTestCase {
    private var folder: URL!
    private var processes: [WorkerProcess] = []

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vmerge-dashboard-watch-\(UUID().uuidString)")
        for name in ["in/<img src=x onerror=alert(1)>trip", "out", "status"] {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
    }

    override func tearDownWithError() throws {
        for process in processes { process.kill(SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
    }

    func testAWatchOnlyDashboardShowsTheWatchersJobs() throws {
        let job = folder.appendingPathComponent("in/<img src=x onerror=alert(1)>trip")
        try FileManager.default.copyItem(
            atPath: fixture("l_tiny_0.1s_160x120_30fps.mov"), toPath: job.appendingPathComponent("a.mov").path)
        try Data().write(to: job.appendingPathComponent(".ready"))
        let status = folder.appendingPathComponent("status/w1.json").path
        let watcher = try WorkerProcess(
            [
                "watch", folder.appendingPathComponent("in").path, "--out", folder.appendingPathComponent("out").path,
                "--min-duration", "0", "--status-file", status,
            ], log: folder.appendingPathComponent("watch.log"))
        processes.append(watcher)
        let dashboard = try WorkerProcess(
            ["dashboard", "--watch", folder.appendingPathComponent("status").path, "--listen", "127.0.0.1:0"],
            log: folder.appendingPathComponent("dashboard.log"))
        processes.append(dashboard)
        var port: UInt16?
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline
            && (port == nil || !watcher.log.contains("watch: done <img src=x onerror=alert(1)>trip"))
        {
            port = dashboard.log.firstMatch(of: /serving http:\/\/[^ ]*:([0-9]+)\//).flatMap { UInt16($0.output.1) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let row = "<tr><td><bdi>&lt;img src=x onerror=alert(1)&gt;trip</bdi></td><td>done</td>"
        var page = try RawHTTP(port: try XCTUnwrap(port, dashboard.log)).request("GET", "/")
        // The watcher says "done" before its status file says so: the page follows the file.
        let shown = Date().addingTimeInterval(10)
        while Date() < shown && !page.text.contains(row) {
            Thread.sleep(forTimeInterval: 0.1)
            page = try RawHTTP(port: try XCTUnwrap(port)).request("GET", "/")
        }
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("<section id=\"watch\">"), page.text)
        XCTAssertTrue(page.text.contains(row), page.text)
        XCTAssertTrue(page.text.contains("<bdi>\(status)</bdi>"), page.text)
        XCTAssertFalse(page.text.contains("<img"), page.text)
        XCTAssertFalse(page.text.contains("stale"), page.text)
        XCTAssertFalse(page.text.contains("id=\"counts\""), "no queue: \(page.text)")
        // Idle, the watcher still rewrites its status every 10 s: a live one is never stale (30 s).
        func updated() -> String? {
            (try? Data(contentsOf: URL(fileURLWithPath: status))).flatMap {
                (try? JSONSerialization.jsonObject(with: $0) as? [String: Any])?["updated_at"] as? String
            }
        }
        let before = updated()
        Thread.sleep(forTimeInterval: 1)
        let rewritten = Date().addingTimeInterval(15)
        while Date() < rewritten && updated() == before { Thread.sleep(forTimeInterval: 0.2) }
        XCTAssertNotEqual(updated(), before)
        let metrics = try RawHTTP(port: try XCTUnwrap(port)).request("GET", "/metrics")
        XCTAssertEqual(metrics.status, 200)
        XCTAssertEqual(metrics.text, "")
    }
}
