import Foundation
import TestSupport
import VMergeCore
import VMergeJobs
import XCTest

/// Two runs of one keyed job (a queue worker whose lease ran out while it was stopped, and the
/// worker that took the job over): whichever publishes second finds the name taken by this very
/// job and ends as done, never as a failure and never publishing a second time, at whatever step
/// it meets the name.
final class PublishedMeanwhileTests: XCTestCase {
    func testAnotherRunPublishingTheJobWhileThisOneProbesEndsItAsDone() throws {
        let dir = try makeScratchDirectory()
        let output = dir.appendingPathComponent("out.mp4").path
        let aside = dir.appendingPathComponent("other-run.mp4").path
        var options = MergeOptions()
        options.minDuration = 0
        let job = Job(name: "j", inputs: [Fixtures.path("a_")], output: FileName(output), options: options)
        let first = JobRunner(.worker, diagnostics: .silent)
        XCTAssertEqual(first.run(job).end.status, .ok)
        XCTAssertEqual(rename(output, aside), 0)
        let published = try FileManager.default.attributesOfItem(atPath: aside)[.systemFileNumber] as? Int

        // The other run's output lands while this one probes: after it checked the output's name,
        // before it makes its own output there.
        let second = JobRunner(.worker, diagnostics: .silent) { progress in
            if progress.phase == .probing, FileManager.default.fileExists(atPath: aside) { _ = rename(aside, output) }
        }
        let outcome = second.run(job)
        guard case .upToDate = outcome.end else { return XCTFail("\(outcome.end)") }
        XCTAssertEqual(outcome.report.status, .skipped)
        XCTAssertEqual(listing(dir), ["out.mp4"], "the other run's output alone, no temporary of this one")
        let kept = try FileManager.default.attributesOfItem(atPath: output)[.systemFileNumber] as? Int
        XCTAssertEqual(kept, published, "published once: the other run's file")
    }
}
