import Foundation
import TestSupport
import XCTest

/// A watch job's job.json is read strictly: an unknown field or option, a value of the wrong
/// type, no inputs, a bad output name, a job.json that is a folder, a FIFO or 7 MB, a list naming
/// the folder thousands of times: the job fails into .failed, saying why, and the jobs beside it
/// are done. Its own options hold (issue 11, findings 6, 9 and 10).
final class JobFileStrictnessTests: HostileJobTestCase {
    /// A job folder ("bad", one valid clip) with this job.json (or a folder named
    /// job.json) fails into .failed with nothing published; the valid job beside it is done.
    private func assertBadJobJSONFailsOnlyItsJob(
        _ jobJSON: String?, saying reason: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        let bad = try makeJob(inbox, "bad", jobJSON: jobJSON)
        if jobJSON == nil {
            try FileManager.default.createDirectory(
                at: bad.appendingPathComponent("job.json"), withIntermediateDirectories: true)
        }
        try makeJob(inbox, "good")
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertFalse(run.timedOut || run.signalled, run.log, file: file, line: line)
        XCTAssertEqual(run.status, 1, run.log, file: file, line: line)
        assertOnlyVMergeLines(run, file: file, line: line)
        XCTAssertFalse(
            failedEntries(inbox, job: "bad").isEmpty, "bad is in .failed: \(run.log)", file: file, line: line)
        XCTAssertTrue(
            run.lines.contains { $0.hasPrefix("vmerge: watch: failed bad: job.json: \(reason)") },
            "says what is wrong with job.json: \(run.log)", file: file, line: line)
        XCTAssertTrue(
            listing(outbox).allSatisfy { $0.hasPrefix("good") }, "nothing published for bad: \(listing(outbox))",
            file: file, line: line)
        XCTAssertTrue(listing(outbox).contains("good.mp4"), "the valid job is done: \(run.log)", file: file, line: line)
    }

    /// An unknown top-level field.
    func testAnUnknownTopLevelFieldFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"inputz": ["clip1.mov"]}"#, saying: "unknown field 'inputz'")
    }

    /// "inputs" of the wrong type.
    func testInputsOfTheWrongTypeFailTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(
            #"{"inputs": "clip1.mov"}"#, saying: "'inputs' must be a non-empty list of paths")
    }

    /// An empty "inputs" list.
    func testEmptyInputsFailTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"inputs": []}"#, saying: "'inputs' must be a non-empty list of paths")
    }

    /// An option value of the wrong type.
    func testAnOptionOfTheWrongTypeFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(
            #"{"options": {"width": "wide"}}"#, saying: "invalid value 'wide' for '--width'")
    }

    /// An unknown option.
    func testAnUnknownOptionFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"options": {"widht": 320}}"#, saying: "unknown option 'widht'")
    }

    /// An output name with a newline in it.
    func testAnOutputNameWithANewlineFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(
            #"{"output": "a\nb.mp4"}"#, saying: "'output' contains a control character")
    }

    /// Job.json that is a directory.
    func testAJobJSONThatIsAFolderFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(nil, saying: "is a folder, not a file")
    }

    /// A ready job folder whose job.json is a FIFO: the job fails, the worker goes on.
    func testAJobJSONThatIsAFIFOFailsTheJob() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let folder = try makeJob(inbox, "job")
        try makeFIFO(folder.appendingPathComponent("job.json"))
        let run = try watchOnce(dir, timeout: 20)
        XCTAssertFalse(run.timedOut, "hung: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertFalse(failedEntries(inbox, job: "job").isEmpty, "the job is in .failed: \(run.log)")
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("vmerge: watch: failed job: job.json: is a FIFO") }, run.log)
        XCTAssertFalse(listing(dir.appendingPathComponent("out")).contains { $0.hasPrefix("job") }, "nothing published")
    }

    /// A 7 MB job.json fails its job quickly. `padding` builds the oversized but
    /// otherwise valid object from a padding length.
    private func assertHugeJobJSONFailsTheJob(
        _ padding: (Int) -> String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let json = padding(7 << 20)
        XCTAssertGreaterThan(json.utf8.count, 7_000_000)
        XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(json.utf8)), "valid JSON", file: file, line: line)
        try makeJob(inbox, "huge", jobJSON: json)
        let run = try watchOnce(dir, timeout: 10)
        XCTAssertFalse(run.timedOut, "still working after 10 s: \(run.log)", file: file, line: line)
        XCTAssertFalse(run.signalled, run.log, file: file, line: line)
        XCTAssertEqual(run.status, 1, run.log, file: file, line: line)
        XCTAssertFalse(
            failedEntries(inbox, job: "huge").isEmpty, "huge is in .failed: \(run.log)", file: file, line: line)
        XCTAssertTrue(
            run.lines.contains { $0.hasPrefix("vmerge: watch: failed huge: job.json: is larger than") },
            "says the job.json is too large: \(run.log)", file: file, line: line)
        XCTAssertFalse(
            listing(dir.appendingPathComponent("out")).contains { $0.hasPrefix("huge") }, "nothing published",
            file: file, line: line)
    }

    /// 7 MB job.json, padded with a long string field.
    func testAHugeJobJSONWithALongStringFailsTheJob() throws {
        try assertHugeJobJSONFailsTheJob { pad in
            #"{"inputs": ["clip1.mov"], "note": ""# + String(repeating: "x", count: pad) + #""}"#
        }
    }

    /// 7 MB job.json whose only oddity is its size (known fields, whitespace
    /// padding), so that only a size limit can fail it.
    func testAHugeJobJSONPaddedWithWhitespaceFailsTheJob() throws {
        try assertHugeJobJSONFailsTheJob { pad in
            #"{"inputs": ["clip1.mov"]"# + String(repeating: " ", count: pad) + "}"
        }
    }

    /// A job.json naming its folder thousands of times fails at once (bounded), instead
    /// of expanding to millions of paths.
    func testAJobNamingItsFolderOverAndOverFailsFast() throws {
        let dir = try makeScratchDirectory()
        let job = try makeJob(
            dir.appendingPathComponent("in"), "J",
            jobJSON: "{\"inputs\": [" + Array(repeating: "\".\"", count: 5000).joined(separator: ",") + "]}")
        for i in 0..<300 { _ = FileManager.default.createFile(atPath: job.path + "/v\(i).mov", contents: Data([0])) }
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertFalse(run.timedOut, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertLessThan(run.seconds, 20, run.log)
        XCTAssertTrue(run.lines.contains { $0.contains("more than") }, run.log)
    }

    /// A job's own --min-free is honoured: the job does not run.
    func testAJobsOwnMinFreeIsHonoured() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        try makeJob(inbox, "big", jobJSON: #"{"options": {"min-free": "100T"}}"#)
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertTrue(run.lines.contains { $0.contains("not enough free space") && $0.contains("big") }, run.log)
        XCTAssertFalse(listing(outbox).contains { $0.hasSuffix(".mp4") }, "no output: \(listing(outbox))")
        XCTAssertTrue(
            !failedEntries(inbox, job: "big").isEmpty || listing(inbox).contains("big"),
            "failed or put back: \(run.log)")
    }
}
