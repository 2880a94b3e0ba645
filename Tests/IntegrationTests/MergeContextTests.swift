import Foundation
import TestSupport
import XCTest

@testable import VMergeAV
@testable import VMergeCore
@testable import VMergeJobs

/// A run's context (MergeContext) is built by the job runner and read by the merger; the user's
/// options stay what the option rows set.
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
            _ = try Merger(options: options, context: context, report: { _ in })
                .merge(inputs: [Fixtures.path("a_")], output: output)
            XCTAssertEqual(Probe.recordedJobKey(at: output), keyed ? "ktrue" : nil, "keyed: \(keyed)")
        }
    }

    /// The runner gives a watch job's confinement to the merge: an input outside it is refused
    /// by the probe, naming the file, though the job's inputs were resolved without it.
    func testTheRunnerConfinesTheJobsReads() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let inside = dir.appendingPathComponent("job")
        try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
        let folder = FileDescriptor(open(inside.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        var job = Job(
            name: "j", inputs: [Fixtures.path("a_")], output: dir.appendingPathComponent("o.mp4").path,
            options: MergeOptions())
        job.confinement = InputConfinement(root: inside.path, allowed: [], rootFolder: folder)
        let outcome = JobRunner(onDiagnostic: { _ in }).run(job)
        XCTAssertEqual(outcome.report.status, .failed)
        XCTAssertEqual(outcome.failure?.file, Fixtures.path("a_"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: job.output))
        // Without it, the same job merges.
        job.confinement = nil
        XCTAssertEqual(JobRunner(onDiagnostic: { _ in }).run(job).report.status, .ok)
    }
}
