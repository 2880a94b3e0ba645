import XCTest

@testable import VMergeCLI
@testable import VMergeCore

/// VMERGE_TEST_HIDE_FILTERS is read by the command line and reaches every merging command as
/// its runs' hooks (not as a merge option: no option row sets it, and a job file cannot).
final class TestHooksTests: XCTestCase {
    private let hooks = TestHooks(environment: ["VMERGE_TEST_HIDE_FILTERS": "zscale,tonemap"])

    func testHiddenFiltersReachEveryMergingCommand() throws {
        XCTAssertEqual(hooks.hiddenFilters, ["zscale", "tonemap"])
        XCTAssertEqual(hooks.merge.hiddenFilters, ["zscale", "tonemap"])
        XCTAssertTrue(hooks.merge.seeksToTrims && hooks.merge.skipsUnshownPictures, "the others keep their defaults")
        let applied = { [hooks] (args: [String]) in try hooks.applied(to: ArgumentParser.parse(args)) }
        guard case let .run(merge as MergeCommand) = try applied(["a.mp4", "-o", "out.mp4"]) else {
            return XCTFail("not a merge")
        }
        XCTAssertEqual(merge.hooks.hiddenFilters, ["zscale", "tonemap"])
        guard case let .run(batch as BatchCommand) = try applied(["batch", "jobs.jsonl"]) else {
            return XCTFail("not a batch")
        }
        XCTAssertEqual(batch.hooks.hiddenFilters, ["zscale", "tonemap"])
        guard case let .run(watch as WatchCommand) = try applied(["watch", "in", "--out", "out"])
        else { return XCTFail("not a watch") }
        XCTAssertEqual(watch.watch.hooks.hiddenFilters, ["zscale", "tonemap"])
        guard case let .run(worker as WorkerCommand) = try applied(["worker", "--db", "x"])
        else { return XCTFail("not a worker") }
        XCTAssertEqual(worker.settings.hooks.hiddenFilters, ["zscale", "tonemap"])
    }

    /// VMERGE_TEST_NO_PROGRESS=1 (to measure what publishing costs) turns a worker's progress off.
    func testNoProgressTurnsAWorkersPublishingOff() throws {
        let parsed = try ArgumentParser.parse(["worker", "--db", "x"])
        for (environment, publishes) in [([:], true), (["VMERGE_TEST_NO_PROGRESS": "1"], false)] {
            guard case let .run(worker as WorkerCommand) = TestHooks(environment: environment).applied(to: parsed)
            else { return XCTFail("not a worker") }
            XCTAssertEqual(worker.settings.publishesProgress, publishes, "\(environment)")
        }
    }

    func testWithoutTheVariableNothingIsHidden() throws {
        let none = TestHooks(environment: [:])
        XCTAssertEqual(none.hiddenFilters, [])
        XCTAssertEqual(none.merge, MergeHooks())
        let command = try ArgumentParser.parse(["a.mp4", "-o", "out.mp4"])
        XCTAssertEqual(none.applied(to: command), command)
        XCTAssertEqual(hooks.applied(to: .help), .help)
    }
}
