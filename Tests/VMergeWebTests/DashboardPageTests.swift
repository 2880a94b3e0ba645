import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue
@testable import VMergeWeb

/// The page's running jobs and the progress metrics, from a snapshot made here (no database).
final class DashboardPageTests: XCTestCase {
    private let hostile = "<img src=x onerror=alert(1)>.mov"

    private func snapshot() -> QueueSnapshot {
        var snapshot = QueueSnapshot(
            counts: [.running: 2], oldestPendingAge: 0, lastFinished: [:],
            workers: ["<w>": .init(leaseUntil: 1_767_225_660, runningJobs: 2)])
        snapshot.heartbeats = ["<w>": 1_767_225_600, "idle": 1_767_225_000]
        // 30 of 120 media seconds in 15 s: 2x, 45 s left.
        let progress = MergeProgress(
            phase: .encoding, item: 3, itemCount: 8, file: nil, doneMicros: 30_000_000, totalMicros: 120_000_000,
            elapsedSeconds: 15, outputBytes: 3 << 20)
        snapshot.running = [
            .init(id: 7, name: hostile, worker: "<w>", progress: progress),
            .init(id: 8, name: "b", worker: "<w>", progress: nil),
        ]
        return snapshot
    }

    func testRunningJobsAreListedEscaped() {
        let html = DashboardPage.html(.snapshot(snapshot(), latest: []), now: Date(timeIntervalSince1970: 0))
        let lines = html.components(separatedBy: "\n")
        for expected in [
            "<tr id=\"job-7\"><td>7</td><td>&lt;img src=x onerror=alert(1)&gt;.mov</td><td>&lt;w&gt;</td>"
                + "<td>clip 3 of 8</td><td>25.0%</td><td>2.00x</td><td>0:15</td><td>0:45</td><td>3.0 MiB</td></tr>",
            "<tr id=\"job-8\"><td>8</td><td>b</td><td>&lt;w&gt;</td><td>starting</td><td></td><td></td><td></td><td></td>"
                + "<td></td></tr>",
            "<tr><td>&lt;w&gt;</td><td>2</td><td>2026-01-01T00:01:00Z</td><td>2026-01-01T00:00:00Z</td></tr>",
        ] {
            XCTAssertTrue(lines.contains(expected), "missing \(expected) in\n\(html)")
        }
        XCTAssertFalse(html.contains("<img"), html)
    }

    func testDurations() {
        XCTAssertEqual(DashboardPage.duration(0), "0:00")
        XCTAssertEqual(DashboardPage.duration(59.6), "1:00")
        XCTAssertEqual(DashboardPage.duration(3725), "1:02:05")
        XCTAssertEqual(DashboardPage.duration(.infinity), "0:00")
        XCTAssertEqual(DashboardPage.duration(-4), "0:00")
    }

    /// A heartbeat for every worker heard from (idle ones too); a progress ratio for running jobs
    /// that published one, labelled by id.
    func testProgressMetrics() {
        let text = QueueMetrics.text(.snapshot(snapshot(), latest: [])).text
        let lines = text.components(separatedBy: "\n")
        for expected in [
            #"vmerge_worker_last_heartbeat_timestamp_seconds{worker="<w>"} 1767225600"#,
            #"vmerge_worker_last_heartbeat_timestamp_seconds{worker="idle"} 1767225000"#,
            #"vmerge_job_progress_ratio{job="7"} 0.25"#,
            "# TYPE vmerge_job_progress_ratio gauge",
        ] {
            XCTAssertTrue(lines.contains(expected), "missing \(expected) in\n\(text)")
        }
        XCTAssertFalse(text.contains(#"job="8""#), text)
    }
}
