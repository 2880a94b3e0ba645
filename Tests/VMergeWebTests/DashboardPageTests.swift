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
        snapshot.finishedByWorker = ["<w>": .init(done: 5, failed: 1)]
        // 30 of 120 media seconds in 15 s: 2x, 45 s left.
        let progress = MergeProgress(
            phase: .encoding, item: 3, itemCount: 8, file: nil, doneMicros: 30_000_000, totalMicros: 120_000_000,
            elapsedSeconds: 15, outputBytes: 3 << 20)
        snapshot.running = [
            .init(id: 7, name: hostile, worker: "<w>", progress: progress, inputs: ["/in/a.mov", "/in/<b>.mov"], inputCount: 5),
            .init(id: 8, name: "b", worker: "<w>", progress: nil),
        ]
        return snapshot
    }

    private func context(session: Bool = false) -> PageContext {
        let access = ActionAccess(token: session ? String(repeating: "t", count: 16) : nil)
        let signedIn = session ? try? access.signIn(offered: String(repeating: "t", count: 16)).get() : nil
        return PageContext(
            now: Date(timeIntervalSince1970: 1_767_225_630), actionsEnabled: session, session: signedIn,
            returnPath: "/?name=%3Cx%3E", notice: nil)
    }

    /// Each running job's figures: clip N of M, the share, speed, elapsed, time left, bytes
    /// written and the size they point to; names escaped; no action for a reader.
    func testRunningJobsAreListedEscaped() {
        let html = QueueSections.all(snapshot(), context: context()).joined(separator: "\n")
        let lines = html.components(separatedBy: "\n")
        for expected in [
            "<tr id=\"job-7\"><td class=\"number\"><a href=\"/jobs/7\">7</a></td>"
                + "<td class=\"name\">&lt;img src=x onerror=alert(1)&gt;.mov</td><td class=\"name\">&lt;w&gt;</td>"
                + "<td class=\"name\"><span title=\"/in/a.mov\">a.mov</span>, <span title=\"/in/&lt;b&gt;.mov\">&lt;b&gt;.mov</span>, "
                + "and 3 more</td><td><span class=\"clip\">clip 3 of 8</span></td><td class=\"number\"><progress max=\"1\" value=\"0.250\">25.0%</progress> 25.0%</td>"
                + "<td class=\"number\">2.00x</td><td class=\"number\">0:15</td><td class=\"number\">0:45</td>"
                + "<td class=\"number\">3.0 MiB / ≈ 12 MiB</td><td></td></tr>",
            "<tr id=\"job-8\"><td class=\"number\"><a href=\"/jobs/8\">8</a></td><td class=\"name\">b</td>"
                + "<td class=\"name\">&lt;w&gt;</td><td class=\"name\"></td><td>starting</td><td class=\"number\"></td><td class=\"number\"></td>"
                + "<td class=\"number\"></td><td class=\"number\"></td><td class=\"number\"></td><td></td></tr>",
            "<tr><td class=\"name\">&lt;w&gt;</td><td><span class=\"worker-running\">running</span></td>"
                + "<td class=\"number\">2</td><td class=\"number\">5</td>"
                + "<td class=\"number\">1</td><td>2026-01-01T00:01:00Z</td><td>2026-01-01T00:00:00Z</td></tr>",
        ] {
            XCTAssertTrue(lines.contains(expected), "missing \(expected) in\n\(html)")
        }
        XCTAssertFalse(html.contains("<img"), html)
        XCTAssertFalse(html.contains("<form"), html)
    }

    /// A worker holding a job that has not beaten for over 30 s is shown as silent, in the
    /// workers' table and on its running jobs; an idle worker is not.
    func testSilentWorkerIsFlagged() {
        var late = context()
        late = PageContext(
            now: Date(timeIntervalSince1970: 1_767_225_600 + 95), actionsEnabled: false, session: nil,
            returnPath: "/", notice: nil)
        let html = QueueSections.all(snapshot(), context: late).joined(separator: "\n")
        XCTAssertEqual(html.components(separatedBy: "<span class=\"stale\">(silent for 1:35)</span>").count - 1, 3, html)
        XCTAssertFalse(QueueSections.all(snapshot(), context: context()).joined().contains("silent"))
    }

    /// A signed-in browser gets a Cancel form per running job, carrying its form token and the
    /// page to come back to (escaped for the attribute).
    func testActionsCarryTheFormToken() throws {
        let signedIn = context(session: true)
        let token = try XCTUnwrap(signedIn.session?.formToken)
        let html = QueueSections.running(snapshot(), context: signedIn)
        XCTAssertTrue(
            html.contains(
                "<form class=\"inline\" method=\"post\" action=\"/jobs/7/cancel\">"
                    + "<input type=\"hidden\" name=\"form_token\" value=\"\(token)\">"
                    + "<input type=\"hidden\" name=\"return\" value=\"/?name=%3Cx%3E\">"
                    + "<button type=\"submit\">Cancel</button></form>"), html)
        XCTAssertEqual(token.count, 64)
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
        let text = QueueMetrics.text(.success(snapshot())).text
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
