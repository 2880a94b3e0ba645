import Foundation
import TestSupport
import XCTest

/// The README's alert rule is valid, and fires when it says it does: pending for 30 minutes with
/// nothing finished (or nothing ever finished), not while jobs keep finishing nor while the queue
/// is paused.
final class DashboardReadmeTests: XCTestCase {
    private static let stalledSummary =
        "summary: \"vmerge: jobs have waited 30 minutes and none finished in that time\""

    /// The cases `promtool test rules` runs against the rule: one for each situation named above.
    private static let alertCases = """
        rule_files: [rules.yml]
        evaluation_interval: 1m
        tests:
          - interval: 1m
            input_series:
              - series: vmerge_queue_oldest_pending_age_seconds
                values: 2000x60
              - series: 'vmerge_queue_last_finished_timestamp_seconds{state="done"}'
                values: 0x60
            alert_rule_test:
              - eval_time: 20m
                alertname: VMergeQueueStalled
              - eval_time: 40m
                alertname: VMergeQueueStalled
                exp_alerts:
                  - exp_annotations: {\(stalledSummary)}
          - interval: 1m
            input_series:
              - series: vmerge_queue_oldest_pending_age_seconds
                values: 2000x60
              - series: 'vmerge_queue_last_finished_timestamp_seconds{state="done"}'
                values: 0+60x60
            alert_rule_test:
              - eval_time: 50m
                alertname: VMergeQueueStalled
          - interval: 1m
            input_series:
              - series: vmerge_queue_oldest_pending_age_seconds
                values: 2000x60
            alert_rule_test:
              - eval_time: 10m
                alertname: VMergeQueueStalled
                exp_alerts:
                  - exp_annotations: {\(stalledSummary)}
              - eval_time: 10m
                alertname: VMergeDatabaseDown
          - interval: 1m
            input_series:
              - series: vmerge_queue_oldest_pending_age_seconds
                values: 2000x60
              - series: vmerge_queue_paused
                values: 1x60
            alert_rule_test:
              - eval_time: 40m
                alertname: VMergeQueueStalled
          # Queued jobs, every worker stopped: said within minutes; not while one is idle.
          - interval: 1m
            input_series:
              - series: 'vmerge_jobs{state="queued"}'
                values: 3x20
              - series: 'vmerge_workers{state="idle"}'
                values: 1x4 0x16
              - series: 'vmerge_workers{state="stopped"}'
                values: 0x4 1x16
            alert_rule_test:
              - eval_time: 3m
                alertname: VMergeNoLiveWorker
              - eval_time: 8m
                alertname: VMergeNoLiveWorker
                exp_alerts:
                  - exp_labels: {state: queued}
                    exp_annotations: {summary: "vmerge: jobs are queued and no worker is alive to take them"}
        """

    func testTheAlertRuleIsValidAndFiresWhenItSays() throws {
        let section = try Documentation.section("Dashboard and metrics")
        let rules = try XCTUnwrap(
            section.components(separatedBy: "```yaml\n").dropFirst().first?.components(separatedBy: "```")[0])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(rules.utf8).write(to: folder.appendingPathComponent("rules.yml"))
        let checked = try runPromtool(["check", "rules", "rules.yml"], in: folder)
        XCTAssertEqual(checked.0, 0, checked.1)
        XCTAssertTrue(checked.1.contains("SUCCESS: 3 rules found"), checked.1)
        try Data(Self.alertCases.utf8).write(to: folder.appendingPathComponent("cases.yml"))
        let tested = try runPromtool(["test", "rules", "cases.yml"], in: folder)
        XCTAssertEqual(tested.0, 0, tested.1)
    }
}
