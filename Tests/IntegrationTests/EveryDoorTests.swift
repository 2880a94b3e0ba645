import Foundation
import TestSupport
import XCTest

/// A job reaches vmerge by several doors (the command line, --inputs-from, a job list line, a
/// watch job.json, queue add; the Swift API in VMergeAPITests): each takes the same number of
/// inputs and reads a time by one grammar, refusing in the same words (issue 33, item 7).
final class EveryDoorTests: XCTestCase {
    private let tooMany = "too many inputs (10001): a job takes at most 10000"

    private func names(_ count: Int) -> [String] { (1...count).map { "c\($0).mov" } }

    private func write(_ text: String, to name: String, in dir: URL) throws {
        try Data(text.utf8).write(to: dir.appendingPathComponent(name))
    }

    /// A job line or job.json naming `count` inputs, with `extra` JSON fields.
    private func job(_ count: Int, _ extra: String = "") -> String {
        #"{"inputs": ["# + names(count).map { "\"\($0)\"" }.joined(separator: ",") + "]" + extra + "}"
    }

    func testEveryDoorTakesAtMostTenThousandInputsAndSaysSoAlike() throws {
        let dir = try makeScratchDirectory()
        // The command line: a usage error.
        let argv = try VMergeBinary.run(names(10_001) + ["-o", "out.mp4", "-n"], in: dir)
        XCTAssertEqual(argv.status, 2, argv.stderr)
        XCTAssertEqual(argv.stderrLines.first, "vmerge: \(tooMany)")
        // 10,000 pass the count (and fail on the first missing file).
        let atLimit = try VMergeBinary.run(names(10_000) + ["-o", "out.mp4", "-n"], in: dir)
        XCTAssertEqual(atLimit.status, 1, atLimit.stderr)
        XCTAssertEqual(atLimit.stderrLines.first, "vmerge: c1.mov: no such file or directory")
        // --inputs-from counts with the named ones.
        try write(names(10_000).joined(separator: "\n"), to: "list.txt", in: dir)
        let listed = try VMergeBinary.run(["x.mov", "--inputs-from", "list.txt", "-o", "out.mp4", "-n"], in: dir)
        XCTAssertEqual(listed.status, 1, listed.stderr)
        XCTAssertEqual(listed.stderrLines.first, "vmerge: list.txt: \(tooMany)")
        // A job list, and queue add reading one (refused before it connects).
        try write(job(10_001, #", "output": "o.mp4""#), to: "jobs.jsonl", in: dir)
        for arguments in [["batch", "jobs.jsonl"], ["queue", "add", "jobs.jsonl", "--db", "host=/nonexistent dbname=none"]] {
            let run = try VMergeBinary.run(arguments, in: dir)
            XCTAssertEqual(run.status, 1, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderrLines.first, "vmerge: jobs.jsonl: line 1: \(tooMany)", "\(arguments)")
        }
        // A watch job.json: the job fails, saying so.
        let folder = dir.appendingPathComponent("inbox/trip")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        try write(job(10_001), to: "job.json", in: folder)
        let watch = try VMergeBinary.run(["watch", "inbox", "--out", "out", "--once", "--settle", "0"], in: dir)
        XCTAssertEqual(watch.status, 1, watch.stderr)
        XCTAssertTrue(
            watch.stderrLines.contains { $0.hasPrefix("vmerge: watch: failed trip: job.json: \(tooMany); moved to .failed/") },
            watch.stderr)
    }

    /// One grammar of a time, said one way: spaces around a time are refused wherever one is typed
    /// (before, `--trim " 1,2"` was taken), and a number past the range is out of range, not "not a
    /// time" (before, `--trim 1e308,` was "not a time" while `--min-duration 1e308` was "expected
    /// seconds, 0 or more").
    func testATimeReadsAndIsRefusedAlikeAtEveryDoor() throws {
        let dir = try makeScratchDirectory()
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: dir.appendingPathComponent("a.mov").path)
        let spaced = "not a time: no spaces around it"
        let clipRange = "out of range (0 to 86400 s, the longest clip vmerge reads)"
        let refusals: [([String], String)] = [
            (["a.mov", "--trim", " 1,2"], "vmerge: a.mov: invalid value ' 1,2' for '--trim': ' 1' is \(spaced)"),
            (["a.mov", "--trim", "1,2 "], "vmerge: a.mov: invalid value '1,2 ' for '--trim': '2 ' is \(spaced)"),
            (["--min-duration", " 1", "a.mov"], "vmerge: invalid value ' 1' for '--min-duration': \(spaced)"),
            (["--max-duration", "1:30 ", "a.mov"], "vmerge: invalid value '1:30 ' for '--max-duration': \(spaced)"),
            (["a.mov", "--trim", "1e308,"], "vmerge: a.mov: invalid value '1e308,' for '--trim': '1e308' is \(clipRange)"),
            (["a.mov", "--trim", "-1,2"], "vmerge: a.mov: invalid value '-1,2' for '--trim': '-1' is \(clipRange)"),
            (["--min-duration", "1e308", "a.mov"], "vmerge: invalid value '1e308' for '--min-duration': out of range (0 to 10000000 s)"),
            (["--poster-at", "1e308", "a.mov"], "vmerge: invalid value '1e308' for '--poster-at': out of range (0 to 10000000 s)"),
            (
                ["--max-duration", "0", "a.mov"],
                "vmerge: invalid value '0' for '--max-duration': out of range (more than 0, up to 10000000 s)"
            ),
            (
                ["a.mov", "--trim", "soon,"],
                "vmerge: a.mov: invalid value 'soon,' for '--trim': 'soon' is not a time (seconds such as 1.5, or m:ss such as 1:02.5)"
            ),
        ]
        for (arguments, line) in refusals {
            let run = try VMergeBinary.run(arguments + ["-o", "out.mp4", "-n"], in: dir)
            XCTAssertEqual(run.status, 2, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderrLines.first, line, "\(arguments)")
        }
        // The same grammar takes a time written as a plain number with an exponent, as options do.
        let exponent = try VMergeBinary.run(["a.mov", "--trim", "1e0,2.5e0", "--min-duration", "1e0", "-o", "out.mp4", "-n"], in: dir)
        XCTAssertEqual(exponent.status, 0, exponent.stderr)
        XCTAssertTrue(exponent.stdout.contains("from 1 s to 2.5 s (1.5 s)"), exponent.stdout)
        // A job list says it in the same words.
        let lines: [(String, String)] = [
            (#"{"start": " 1"}"#, "input a.mov: 'start': ' 1' is \(spaced)"),
            (#"{"start": "1e308"}"#, "input a.mov: 'start': '1e308' is \(clipRange)"),
            (#"{"end": 1e308}"#, "input a.mov: 'end': '1e+308' is \(clipRange)"),
            (#"{"end": -1}"#, "input a.mov: 'end': '-1' is \(clipRange)"),
        ]
        for (fields, message) in lines {
            let input = #"{"path": "a.mov", "# + fields.dropFirst()
            try write(#"{"inputs": ["# + input + #"], "output": "o.mp4"}"#, to: "jobs.jsonl", in: dir)
            let run = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
            XCTAssertEqual(run.status, 1, "\(fields): \(run.stderr)")
            XCTAssertEqual(run.stderrLines.first, "vmerge: jobs.jsonl: line 1: \(message)", fields)
        }
        try write(#"{"inputs": ["a.mov"], "output": "o.mp4", "options": {"min-duration": " 1"}}"#, to: "jobs.jsonl", in: dir)
        let option = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(option.stderrLines.first, "vmerge: jobs.jsonl: line 1: invalid value ' 1' for '--min-duration': \(spaced)")
    }
}
