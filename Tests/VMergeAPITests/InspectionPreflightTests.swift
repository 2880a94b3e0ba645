import Foundation
import TestSupport
import VMerge
import XCTest

/// `inspect()` as a preflight: every clip with its fate, what is under the output's name, and
/// everything that would make `run()` fail, returned rather than thrown.
final class InspectionPreflightTests: MergeSessionTestCase {
    func testABadClipAmongGoodOnesIsListedWithItsReasonAndAsAProblem() async throws {
        let bad = Fixtures.url("bad_text")
        let output = folder.appendingPathComponent("out.mp4")
        let job = MergeJob(inputs: [Fixtures.url("a_"), bad, Fixtures.url("b_")], output: output)
        let plan = try await MergeSession(job).inspect()
        XCTAssertEqual(plan.status, .dryRun)
        XCTAssertEqual(plan.clips.map(\.status), [.kept, .invalid, .kept])
        let reason = "not a readable video file (unknown format, or a recording cut off before it was finalised)"
        XCTAssertEqual(plan.clips[1].reason, reason)
        XCTAssertEqual(plan.problems.map(\.code), [.invalidInput])
        XCTAssertEqual(plan.problems.map(\.file), [FileLocation(bad)])
        XCTAssertEqual(plan.problems.map(\.message), [reason])
        XCTAssertEqual(plan.error, "\(bad.path): \(reason)")
        XCTAssertNil(plan.output?.existing)
        XCTAssertEqual(plan.output?.duration ?? 0, 5.5, accuracy: 0.01)
        XCTAssertGreaterThan(plan.output?.estimatedBytes ?? 0, 100_000)
        XCTAssertTrue(plan.warnings.isEmpty, "said as a problem, not as a skipped clip: \(plan.warnings)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    /// Run, then looked at again: the output is this job's, and a second run skips it.
    func testASecondLookSeesTheOutputIsThisJobsAndASecondRunSkipsIt() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        let job = MergeJob(inputs: [Fixtures.url("a_"), Fixtures.url("b_")], output: output)
        let before = try await MergeSession(job).inspect()
        XCTAssertNil(before.output?.existing)
        _ = try await MergeSession(job).run()
        let made = try Data(contentsOf: output)
        let again = try await MergeSession(job).inspect()
        XCTAssertEqual(again.output?.existing, .thisJob)
        XCTAssertEqual(again.problems, [])
        let second = try await MergeSession(job).run()
        XCTAssertEqual(second.status, .skipped)
        XCTAssertEqual(try Data(contentsOf: output), made)

        // Another job (other clips) under the same name: another file, which run() would refuse.
        let other = try await MergeSession(MergeJob(inputs: [Fixtures.url("a_")], output: output)).inspect()
        XCTAssertEqual(other.output?.existing, .anotherFile)
        XCTAssertEqual(other.problems.map(\.code), [.outputExists])
        XCTAssertEqual(
            other.problems.first?.description, "\(output.path): output exists (set overwrites to replace it)")
    }
}
