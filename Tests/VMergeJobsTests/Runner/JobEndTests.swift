import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import VMergeJobs
import XCTest

/// Every way a job ends, as the runner returns it in process: the typed ending each door
/// switches on, and the report rendered from it (its status and exit) agreeing with it.
final class JobEndTests: XCTestCase {
    private let merge = JobRunner.Door.merge(recordsKey: true, remakesDone: false, report: nil)

    /// A job of two fixture clips copied into `dir` (copies: some tests delete their sources).
    private func job(in dir: URL, output: String = "out.mp4", inputs: [String] = ["a_", "e_"]) throws -> Job {
        var paths: [String] = []
        for (index, fixture) in inputs.enumerated() {
            let copy = dir.appendingPathComponent("in\(index).mov")
            try FileManager.default.copyItem(at: Fixtures.url(fixture), to: copy)
            paths.append(copy.path)
        }
        var options = MergeOptions()
        options.minDuration = 0
        return Job(
            name: "j", inputs: paths, output: FileName(dir.appendingPathComponent(output).path), options: options)
    }

    private func run(_ job: Job, _ door: JobRunner.Door? = nil, context: MergeContext = MergeContext()) -> JobOutcome {
        JobRunner(door ?? merge, context: context, diagnostics: .silent).run(job)
    }

    func testAMadeJobIsPublishedUnderTheNameItGot() throws {
        let dir = try makeScratchDirectory()
        let job = try job(in: dir)
        let outcome = run(job)
        guard case let .published(publication) = outcome.end else { return XCTFail("\(outcome.end)") }
        XCTAssertEqual(publication.result.output.path, job.output.escaped)
        XCTAssertEqual(publication.result.plan.clips.count, 2)
        XCTAssertNil(publication.consumption, "no --delete-sources")
        XCTAssertTrue(FileManager.default.fileExists(atPath: job.output.escaped))
        XCTAssertEqual(outcome.report.status, .ok)
        XCTAssertEqual(outcome.exit, .success)
        XCTAssertTrue(
            outcome.summary(output: "out.mp4").hasPrefix("done -> out.mp4 ("), outcome.summary(output: "out.mp4"))
    }

    func testASecondRunFindsItUpToDateAndADeletingOneMadeEarlier() throws {
        let dir = try makeScratchDirectory()
        var job = try job(in: dir)
        guard case .published = run(job).end else { return XCTFail("the first run made nothing") }
        let made = try Data(contentsOf: URL(fileURLWithPath: job.output.escaped))
        let again = run(job)
        guard case let .upToDate(done) = again.end else { return XCTFail("\(again.end)") }
        XCTAssertFalse(done.madeEarlier)
        XCTAssertNil(done.plan, "not probed again without --delete-sources")
        XCTAssertEqual(again.report.status, .skipped)
        XCTAssertEqual(again.exit, .success)
        XCTAssertEqual(again.summary(output: "out.mp4"), "skipped, out.mp4 is up to date")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: job.output.escaped)), made)

        // With --delete-sources the sources go; a run after that finds the output made from
        // files that are gone since, and makes nothing from what is left.
        job.deleteSources = true
        let deleting = run(job)
        guard case let .upToDate(consumed) = deleting.end else { return XCTFail("\(deleting.end)") }
        XCTAssertEqual(consumed.consumption?.deleted.count, 2)
        XCTAssertEqual(consumed.plan?.clips.count, 2, "what the output holds, probed again")
        XCTAssertEqual(deleting.report.deletedSources.count, 2)
        let afterwards = run(job)
        guard case let .upToDate(earlier) = afterwards.end else { return XCTFail("\(afterwards.end)") }
        XCTAssertTrue(earlier.madeEarlier)
        XCTAssertNil(earlier.plan)
        XCTAssertEqual(afterwards.report.inputPaths, job.inputPaths, "named as the job names them")
        XCTAssertEqual(
            afterwards.summary(output: "out.mp4"),
            "skipped, out.mp4 is kept: made earlier from inputs that are not all there now")
    }

    func testADryRunIsPlannedAndWritesNothing() throws {
        let dir = try makeScratchDirectory()
        var job = try job(in: dir)
        job.dryRun = true
        let outcome = run(job)
        guard case let .planned(plan, preflight) = outcome.end else { return XCTFail("\(outcome.end)") }
        XCTAssertEqual(plan.clips.count, 2)
        XCTAssertTrue(preflight.problems.isEmpty)
        XCTAssertNil(preflight.existing)
        XCTAssertEqual(outcome.report.status, .dryRun)
        XCTAssertEqual(outcome.exit, .success)
        XCTAssertFalse(FileManager.default.fileExists(atPath: job.output.escaped))
    }

    func testAReportOntoAnInputIsRefusedBeforeAnyWork() throws {
        let dir = try makeScratchDirectory()
        let job = try job(in: dir)
        // Named by itself, the report is refused before the run (ReportClash); a folder or a list
        // that expands to it reaches the runner.
        let report = try ReportFile(job.inputPaths[1].escaped, against: [], overwrite: true)
        defer { report.discard() }
        let door = JobRunner.Door.merge(recordsKey: true, remakesDone: false, report: report)
        let outcome = run(job, door)
        guard case let .refused(reason) = outcome.end else { return XCTFail("\(outcome.end)") }
        XCTAssertEqual(reason, "the report would overwrite an input video")
        XCTAssertEqual(outcome.exit, .failure)
        XCTAssertFalse(FileManager.default.fileExists(atPath: job.output.escaped))
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: job.inputPaths[1].escaped)),
            try Data(contentsOf: Fixtures.url("e_")))
    }

    func testEveryClipTooShortIsNothingToMergeForGood() throws {
        let dir = try makeScratchDirectory()
        var job = try job(in: dir)
        job.options.minDuration = 3600
        let outcome = run(job)
        guard case let .nothingToMerge(failure) = outcome.end else { return XCTFail("\(outcome.end)") }
        XCTAssertTrue(failure.forGood, "a retry meets the same clips")
        XCTAssertEqual(failure.probed?.inputs.count, 2)
        XCTAssertEqual(outcome.report.status, .nothingToMerge)
        XCTAssertEqual(outcome.exit, .nothingToMerge)
    }

    func testACancelledRunIsCancelledNotFailed() throws {
        let dir = try makeScratchDirectory()
        let job = try job(in: dir)
        let token = try CancelToken()
        token.cancel(signal: SIGINT)
        let outcome = run(job, context: MergeContext(cancel: token))
        guard case let .cancelled(failure) = outcome.end else { return XCTFail("\(outcome.end)") }
        XCTAssertEqual(failure.error, .cancelled(signal: SIGINT))
        XCTAssertFalse(failure.forGood)
        XCTAssertEqual(outcome.exit, .cancelled(signal: SIGINT))
        XCTAssertEqual(outcome.summary(output: "out.mp4"), "cancelled")
        XCTAssertEqual(listing(dir), ["in0.mov", "in1.mov"], "no output, no temporary")
    }

    /// A bad input fails for good (a retry meets it again); a full disk may pass, so it does not.
    func testAFailureSaysWhetherARetryCouldPass() throws {
        let dir = try makeScratchDirectory()
        let bad = try job(in: dir, inputs: ["a_", "bad_text"])
        let outcome = run(bad)
        guard case let .failed(failure) = outcome.end else { return XCTFail("\(outcome.end)") }
        XCTAssertEqual(failure.error.file, bad.inputPaths[1].escaped)
        XCTAssertTrue(failure.forGood)
        XCTAssertEqual(outcome.report.status, .failed)
        XCTAssertEqual(outcome.exit, .failure)
        XCTAssertEqual(outcome.report.error?.file, bad.inputPaths[1].escaped)

        let other = try makeScratchDirectory()
        var full = try job(in: other)
        // More than is free, less than the file system holds: room may come.
        full.minFree = try XCTUnwrap(FreeSpace.capacity(inFolderOf: full.output.escaped)) - 1
        let noRoom = run(full)
        guard case let .failed(room) = noRoom.end else { return XCTFail("\(noRoom.end)") }
        XCTAssertFalse(room.forGood, "\(room.error)")
        XCTAssertEqual(room.error.file, full.output.escaped)
    }
}
