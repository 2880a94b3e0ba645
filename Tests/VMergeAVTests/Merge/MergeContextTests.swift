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

    /// Only a keyed run records its key in the output, and the key is the job's.
    func testOnlyAKeyedRunRecordsItsKey() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = MergeOptions()
        options.minDuration = 0
        let inputs = [JobInput(Fixtures.path("a_"))]
        for keyed in [false, true] {
            let output = dir.appendingPathComponent("\(keyed).mp4").path
            _ = try runnerMerge(inputs, output: output, options: options, keyed: keyed)
            let key = keyed ? JobKey.make(inputs: inputs, root: nil, options: options, salt: nil) : nil
            XCTAssertEqual(Probe.recordedJobKey(at: output), key, "keyed: \(keyed)")
        }
    }
}
