import Foundation
import TestSupport
import XCTest

/// What `vmerge batch` says while it runs: each job's progress with its place in the batch
/// (--progress json and plain lines), every message tagged with its job, and the words of its
/// report (nothing-to-merge is not "failed").
final class BatchProgressTests: XCTestCase {
    /// Two jobs of a and b, one of a clip too short to keep (its warning is the job's), one of
    /// only too-short clips (nothing to merge).
    private func jobList(_ dir: URL) throws {
        let lines = [
            #"{"inputs": ["\#(Fixtures.path("a_"))", "\#(Fixtures.path("i_short"))"], "output": "one.mp4", "name": "one"}"#,
            #"{"inputs": ["\#(Fixtures.path("b_"))"], "output": "two.mp4", "name": "two"}"#,
            #"{"inputs": ["\#(Fixtures.path("i_short"))"], "output": "three.mp4", "name": "three"}"#,
        ]
        try Data(lines.joined(separator: "\n").utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
    }

    func testJSONProgressNamesEachJobAndEveryMessageIsTagged() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try jobList(dir)
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "-j", "2", "--progress", "json", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        let objects = run.stderrLines.filter { $0.hasPrefix("{") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        // Each job's progress, with its place; its last object is its end, with the report's status.
        for (job, name, status) in [(1, "one", "ok"), (2, "two", "ok"), (3, "three", "nothing-to-merge")] {
            let mine = objects.filter { $0["job"] as? Int == job }
            XCTAssertTrue(mine.allSatisfy { $0["name"] as? String == name && $0["jobs"] as? Int == 3 }, "\(mine)")
            XCTAssertEqual(mine.last?["status"] as? String, status, "\(mine)")
            XCTAssertEqual(mine.last?["progress"] as? String, "end")
            if status == "ok" {
                XCTAssertTrue(mine.contains { $0["phase"] as? String == "encoding" }, "\(mine)")
                let done = try XCTUnwrap(mine.first { $0["phase"] as? String == "done" })
                XCTAssertGreaterThan(done["total_size"] as? Int ?? 0, 1000, "bytes written: \(done)")
            }
        }
        // Every line is JSON; the messages are events carrying their line. The dropped clip's
        // warning says whose it is.
        XCTAssertEqual(objects.count, run.stderrLines.count, run.stderr)
        let texts = objects.compactMap { $0["text"] as? String }
        let short = Fixtures.path("i_short")
        XCTAssertTrue(texts.contains { $0.hasPrefix("vmerge: batch: [1/3] one: \(short): dropped: ") }, run.stderr)
        // The report's words, in the job's line and the summary.
        XCTAssertTrue(
            texts.contains { $0 == "vmerge: batch: [3/3] three: nothing to merge: its one input clip was dropped" },
            run.stderr)
        XCTAssertTrue(
            texts.contains {
                $0.hasPrefix("vmerge: batch: 2 done, 0 skipped, 1 failed (1 nothing-to-merge) of 3 jobs")
            },
            run.stderr)
        let report = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json"))) as? [String: Any])
        XCTAssertEqual(report["failed"] as? Int, 1)
    }

    /// A job list that cannot be used still gets its report: no job, the reason, exit 1.
    func testAnUnusableListStillWritesItsReport() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"inputs": [], "output": "x.mp4"}"#.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        let report = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json"))) as? [String: Any])
        XCTAssertEqual(report["status"] as? String, "failed")
        XCTAssertEqual(report["exit_code"] as? Int, 1)
        XCTAssertEqual(report["jobs_total"] as? Int, 0)
        let error = try XCTUnwrap(report["error"] as? [String: Any])
        XCTAssertEqual(error["file"] as? String, "jobs.jsonl")
        XCTAssertEqual(
            error["message"] as? String, "jobs.jsonl: line 1: 'inputs' must be a non-empty list of paths")
        XCTAssertEqual(run.stderrLines, ["vmerge: jobs.jsonl: line 1: 'inputs' must be a non-empty list of paths"])
        // A good list's report has error null.
        try Data(#"{"inputs": ["\#(Fixtures.path("a_"))"], "output": "x.mp4"}"#.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        XCTAssertEqual(try VMergeBinary.run(["batch", "jobs.jsonl", "--report", "r.json", "-y"], in: dir).status, 0)
        let good = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json"))) as? [String: Any])
        XCTAssertTrue(good["error"] is NSNull, "\(good)")
    }

    /// Without a terminal, auto is plain lines; -q shows none; a bad --progress is refused.
    func testPlainLinesWithoutATerminal() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try jobList(dir)
        // 5 s between lines: the 1080p job lasts less, so at most the first one shows.
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "-y"], in: dir)
        XCTAssertFalse(run.stderrLines.contains { $0.hasPrefix("{") }, run.stderr)
        XCTAssertFalse(run.stderr.contains("\r"), "no carriage returns off a terminal")
        let quiet = try VMergeBinary.run(["batch", "jobs.jsonl", "-y", "-q"], in: dir)
        XCTAssertFalse(quiet.stderr.contains("jobs:"), quiet.stderr)
        let bad = try VMergeBinary.run(["batch", "jobs.jsonl", "--progress", "loud"], in: dir)
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(
            bad.stderrLines.first, "vmerge: invalid value 'loud' for '--progress': expected auto, bar, plain, json or none")
    }
}
