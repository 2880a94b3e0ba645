import XCTest

@testable import VMergeCLI
@testable import VMergeCore

/// VMERGE_TEST_HIDE_FILTERS is read by the command line and reaches every merge through the options.
final class TestHooksTests: XCTestCase {
    private let hooks = TestHooks(environment: ["VMERGE_TEST_HIDE_FILTERS": "zscale,tonemap"])

    func testHiddenFiltersReachEveryMergingCommand() throws {
        XCTAssertEqual(hooks.hiddenFilters, ["zscale", "tonemap"])
        guard case let .merge(merge) = try hooks.applied(to: ArgumentParser.parse(["a.mp4", "-o", "out.mp4"])) else {
            return XCTFail("not a merge")
        }
        XCTAssertEqual(merge.options.hiddenFilters, ["zscale", "tonemap"])
        guard case let .batch(batch) = try hooks.applied(to: ArgumentParser.parse(["batch", "jobs.jsonl"])) else {
            return XCTFail("not a batch")
        }
        // A job's own options are read over the batch-wide ones, so it inherits them.
        let job = try JobFile.decode(
            ["options": ["width": 160]], over: batch.settings, inputsRequired: false, outputRequired: false)
        XCTAssertEqual(job.settings.merge.hiddenFilters, ["zscale", "tonemap"])
        guard case let .watch(watch) = try hooks.applied(to: ArgumentParser.parse(["watch", "in", "--out", "out"]))
        else { return XCTFail("not a watch") }
        XCTAssertEqual(watch.watch.settings.merge.hiddenFilters, ["zscale", "tonemap"])
    }

    func testWithoutTheVariableNothingIsHidden() throws {
        let none = TestHooks(environment: [:])
        XCTAssertEqual(none.hiddenFilters, [])
        let command = try ArgumentParser.parse(["a.mp4", "-o", "out.mp4"])
        XCTAssertEqual(none.applied(to: command), command)
        XCTAssertEqual(hooks.applied(to: .help), .help)
    }
}
