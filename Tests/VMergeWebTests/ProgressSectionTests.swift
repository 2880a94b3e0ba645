import Foundation
import XCTest

@testable import VMergeQueue
@testable import VMergeWeb

/// "When will it be done": the wave's progress, the pace, the finish time it points to, and the
/// hourly chart, from a snapshot's figures.
final class ProgressSectionTests: XCTestCase {
    func testTheWavePaceFinishTimeAndChart() {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        var snapshot = QueueSnapshot(
            counts: [.queued: 25, .running: 2], oldestPendingAge: 0, lastFinished: [:], workers: [:])
        snapshot.throughput.wave = (since: now.timeIntervalSince1970 - 600, done: 12, failed: 1, total: 40)
        // 48 in 15 minutes: 3.2 a minute; 27 left: 506 s.
        snapshot.throughput.finishedLast15Minutes = 48
        snapshot.throughput.finishedLastHour = 174
        var hourly: [(hour: Double, done: Int, failed: Int)] = []
        for index in 0..<24 {
            let last = index == 23
            hourly.append((hour: Double(index) * 3600, done: last ? 10 : 0, failed: last ? 2 : 0))
        }
        snapshot.throughput.hourly = hourly
        let html = ProgressSection.html(snapshot, now: now)
        XCTAssertTrue(
            html.contains(
                "<p id=\"wave\">12 of 40 jobs done, 1 failed, since <time datetime=\"2025-12-31T23:50:00Z\" "
                    + "title=\"2025-12-31T23:50:00Z\">10 min ago</time>; 27 to go.</p>"), html)
        XCTAssertTrue(
            html.contains(
                "3.2 jobs a minute over the last 15 minutes (2.9 over the hour): the 27 left should be done in about "
                    + "<span id=\"eta\">8:26</span>, by <time datetime=\"2026-01-01T00:08:26Z\""), html)
        XCTAssertEqual(html.components(separatedBy: "<g>").count - 1, 24)
        // The busiest hour fills the chart: 10 done of 12 over 100 units.
        XCTAssertTrue(html.contains("<rect class=\"done\" x=\"462\" y=\"36.7\" width=\"16\" height=\"83.3\"/>"), html)
        // Nothing finished in the hour: no finish time is made up.
        snapshot.throughput.finishedLast15Minutes = 0
        snapshot.throughput.finishedLastHour = 0
        XCTAssertTrue(ProgressSection.html(snapshot, now: now).contains("No job finished in the last hour."))
    }
}
