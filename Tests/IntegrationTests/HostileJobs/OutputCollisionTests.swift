import Foundation
import TestSupport
import XCTest

/// The report and the output never land on an input, an input list, a job list, each other or
/// another job's output, however the path is spelled, with -y or without (issue 11, findings 3
/// and 4, and its reviews); a name taken while a job ran goes to the next free one.
final class OutputCollisionTests: HostileJobTestCase {
    /// A report path spelled differently from -o but naming the same (not yet
    /// existing) file.
    private func assertReportOnTheOutputIsRefused(_ report: (URL) -> String) throws {
        let dir = try makeScratchDirectory()
        let input = dir.appendingPathComponent("a.mov")
        try copyFixture("l_tiny", to: input)
        let before = try Data(contentsOf: input)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--report", report(dir), "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["out.mp4"], saying: "the report would overwrite the output video")
        if let written = FileManager.default.contents(atPath: dir.appendingPathComponent("out.mp4").path) {
            XCTAssertNotEqual(written.first, UInt8(ascii: "{"), "out.mp4 is not the JSON report")
        }
        XCTAssertEqual(try Data(contentsOf: input), before, "the input is untouched")
    }

    /// --report ./out.mp4 with -o out.mp4.
    func testAReportSpelledDotSlashOutputIsRefused() throws {
        try assertReportOnTheOutputIsRefused { _ in "./out.mp4" }
    }

    /// --report $PWD/out.mp4 with -o out.mp4.
    func testAReportAtTheOutputsAbsolutePathIsRefused() throws {
        try assertReportOnTheOutputIsRefused { $0.appendingPathComponent("out.mp4").path }
    }

    /// --report naming an input.
    func testAReportOnAnInputIsRefused() throws {
        let dir = try makeScratchDirectory()
        let input = dir.appendingPathComponent("a.mov")
        try copyFixture("l_tiny", to: input)
        let before = try Data(contentsOf: input)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--report", "a.mov", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["a.mov"], saying: "the report would overwrite an input video")
        XCTAssertEqual(try Data(contentsOf: input), before, "the input is untouched")
        if let written = FileManager.default.contents(atPath: dir.appendingPathComponent("out.mp4").path) {
            XCTAssertNotEqual(written.first, UInt8(ascii: "{"), "out.mp4 is not the JSON report")
        }
    }

    /// A batch of one job (a.mov -> x.mp4) whose report is named `report`: refused, saying `why`,
    /// with the job list and the input untouched.
    private func assertBatchReportRefused(
        _ report: String, saying why: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let dir = try makeScratchDirectory()
        let input = dir.appendingPathComponent("a.mov")
        try copyFixture("l_tiny", to: input)
        let list = dir.appendingPathComponent("jobs.jsonl")
        try writeLines([#"{"inputs":["a.mov"],"output":"x.mp4"}"#], to: list)
        let (listBefore, inputBefore) = (try Data(contentsOf: list), try Data(contentsOf: input))
        let run = try vmerge(["batch", "jobs.jsonl", "--report", report, "--min-duration", "0"], in: dir)
        assertRefused(run, naming: [report], saying: why)
        XCTAssertEqual(try Data(contentsOf: list), listBefore, "the job list is untouched", file: file, line: line)
        XCTAssertEqual(try Data(contentsOf: input), inputBefore, "the input is untouched", file: file, line: line)
    }

    /// A batch report naming the job list itself.
    func testABatchReportOnItsJobListIsRefused() throws {
        try assertBatchReportRefused("jobs.jsonl", saying: "the report would overwrite the job list")
    }

    /// A batch report naming an input of one of its jobs.
    func testABatchReportOnAJobsInputIsRefused() throws {
        try assertBatchReportRefused("a.mov", saying: "the report would overwrite an input video")
    }

    /// With -y the batch report may still not replace a video inside a folder input.
    func testABatchReportNeverReplacesAVideoInAFolderInput() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("jobs/A/a.mov"))
        try copyFixture("l_tiny", to: dir.appendingPathComponent("jobs/A/b.mov"))
        let before = try Data(contentsOf: dir.appendingPathComponent("jobs/A/b.mov"))
        let run = try vmerge(
            ["batch", "jobs", "--out", "out", "--min-duration", "0", "-y", "--report", "jobs/A/b.mov"], in: dir)
        assertRefused(run, naming: ["jobs/A/b.mov"], saying: "the report would overwrite an input video")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("jobs/A/b.mov")), before)
    }

    /// With -y the output may still not replace the input list or the job list. The lists are
    /// named .mp4 so that the output's name passes the container rule and the collision itself
    /// is what refuses the run; each is also named as the output spelled another way.
    func testTheOutputNeverReplacesTheInputListOrTheJobList() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let inputList = dir.appendingPathComponent("list.mp4")
        try "a.mov\n".write(to: inputList, atomically: true, encoding: .utf8)
        for output in ["list.mp4", "./list.mp4", inputList.path] {
            let merge = try vmerge(["--inputs-from", "list.mp4", "-o", output, "-y", "--min-duration", "0"], in: dir)
            assertRefused(merge, naming: ["list.mp4"], saying: "output is also an input; refusing to overwrite it")
            XCTAssertEqual(try String(contentsOf: inputList, encoding: .utf8), "a.mov\n", "-o \(output)")
        }
        let jobList = dir.appendingPathComponent("jobs.mp4")
        for output in ["jobs.mp4", "./jobs.mp4", jobList.path] {
            let line = #"{"inputs": ["a.mov"], "output": "\#(output)"}"# + "\n"
            try line.write(to: jobList, atomically: true, encoding: .utf8)
            let batch = try vmerge(["batch", "jobs.mp4", "-y", "--min-duration", "0"], in: dir)
            assertRefused(batch, naming: ["jobs.mp4"], saying: "is this job list")
            XCTAssertEqual(try String(contentsOf: jobList, encoding: .utf8), line, "output \(output)")
        }
        XCTAssertEqual(listing(dir), ["a.mov", "jobs.mp4", "list.mp4"], "no output and no report made")
    }

    private func twoBatchesOneOutput(_ dir: URL) throws -> Data {
        try copyFixture("a_", to: dir.appendingPathComponent("a.mov"))
        try copyFixture("l_tiny", to: dir.appendingPathComponent("b.mov"))
        try writeLines([#"{"inputs":["a.mov"],"output":"same.mp4"}"#], to: dir.appendingPathComponent("jobsA.jsonl"))
        try writeLines([#"{"inputs":["b.mov"],"output":"same.mp4"}"#], to: dir.appendingPathComponent("jobsB.jsonl"))
        let a = try vmerge(["batch", "jobsA.jsonl", "--min-duration", "0"], in: dir)
        XCTAssertEqual(a.status, 0, a.log)
        return try Data(contentsOf: dir.appendingPathComponent("same.mp4"))
    }

    /// Batch B (a different job list) does not replace batch A's output without -y.
    func testABatchDoesNotReplaceAnotherJobListsOutput() throws {
        let dir = try makeScratchDirectory()
        let first = try twoBatchesOneOutput(dir)
        let b = try vmerge(["batch", "jobsB.jsonl", "--min-duration", "0"], in: dir)
        XCTAssertFalse(b.timedOut || b.signalled, b.log)
        XCTAssertEqual(b.status, 1, "B's job failed: \(b.log)")
        assertOnlyVMergeLines(b)
        XCTAssertTrue(b.lines.contains { $0.contains("same: failed: same.mp4: output exists") }, "says why: \(b.log)")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("same.mp4")), first, "A's result kept")
    }

    /// With -y, batch B does replace it.
    func testABatchReplacesAnotherJobListsOutputWithOverwrite() throws {
        let dir = try makeScratchDirectory()
        let first = try twoBatchesOneOutput(dir)
        let b = try vmerge(["batch", "jobsB.jsonl", "-y", "--min-duration", "0"], in: dir)
        XCTAssertEqual(b.status, 0, b.log)
        XCTAssertNotEqual(try Data(contentsOf: dir.appendingPathComponent("same.mp4")), first, "B's result")
    }

    /// An output name taken while the job ran (another worker, anyone) does not fail
    /// the job or encode it again: the finished file goes to the next free name.
    func testAnOutputNameTakenMidJobGoesToTheNextName() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "J", fixture: "b_", clips: 10, jobJSON: #"{"output": "x.mp4"}"#)
        let outbox = dir.appendingPathComponent("out")
        let (watcher, err) = try startWatcher(["--once"], in: dir)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && !listing(outbox).contains(where: { $0.hasSuffix(".tmp") }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        try Data("someone's".utf8).write(to: outbox.appendingPathComponent("x.mp4"))
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watcher.waitUntilExit()
        XCTAssertEqual(watcher.terminationStatus, 0, log)
        XCTAssertFalse(log.contains("retrying"), log)
        XCTAssertEqual(try String(contentsOf: outbox.appendingPathComponent("x.mp4"), encoding: .utf8), "someone's")
        XCTAssertEqual(listing(outbox), ["x-2.mp4", "x-2.mp4.json", "x.mp4"])
        XCTAssertTrue(log.contains("done J -> out/x-2.mp4"), log)
    }
}
