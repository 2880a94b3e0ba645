import Foundation
import TestSupport
import XCTest

@testable import VMergeAV
@testable import VMergeCore

/// A run's context (MergeContext) is read by the merger; the user's options stay what the option
/// rows set. How the job runner builds it: RunnerContextTests (VMergeJobsTests).
final class MergeContextTests: XCTestCase {
    /// Hidden filters count as missing, at init and when the hooks change later.
    func testHiddenFiltersDecideTheCapabilities() {
        XCTAssertEqual(
            MergeContext().capabilities.canToneMap, Capabilities.ofThisBuild().canToneMap, "no hooks: the build's own")
        var hooks = MergeHooks()
        hooks.hiddenFilters = ["zscale"]
        let hidden = MergeContext(hooks: hooks)
        XCTAssertFalse(hidden.capabilities.canToneMap)
        XCTAssertTrue(hidden.capabilities.missingToneMapFilters.contains("zscale"))
        XCTAssertFalse(hidden.capabilities.missingToneMapFilters.contains("tonemap") && Capabilities.ofThisBuild().canToneMap)
        var later = MergeContext()
        later.hooks.hiddenFilters = ["tonemap", "zscale"]
        XCTAssertEqual(later.capabilities.missingToneMapFilters, ["zscale", "tonemap"], "in the order the plan names them")
        later.hooks = MergeHooks()
        XCTAssertEqual(later.capabilities, Capabilities.ofThisBuild())
    }

    /// Only a keyed run records its key in the output; any run's poster may carry it.
    func testOnlyAKeyedRunRecordsItsKey() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = MergeOptions()
        options.minDuration = 0
        for keyed in [false, true] {
            var context = MergeContext()
            context.jobKey = "k\(keyed)"
            context.recordsJobKey = keyed
            let output = dir.appendingPathComponent("\(keyed).mp4").path
            _ = try Merger(options: options, context: context, onDiagnostic: { _ in })
                .merge(inputs: [Fixtures.path("a_")], output: output)
            XCTAssertEqual(Probe.recordedJobKey(at: output), keyed ? "ktrue" : nil, "keyed: \(keyed)")
        }
    }
}
