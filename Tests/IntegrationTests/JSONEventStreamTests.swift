import Foundation
import TestSupport
import XCTest

/// With `--progress json` on stderr, every line there is a JSON object a pipeline can parse:
/// progress, warnings, the summary and the final error as events; `--progress-fd` leaves stderr
/// to people. Merge and batch, the two commands that take `--progress`.
final class JSONEventStreamTests: XCTestCase {
    /// Every stderr line parsed; fails on the first that is not a JSON object.
    private func events(_ run: RunResult, file: StaticString = #filePath, line: UInt = #line) -> [[String: Any]] {
        run.stderrLines.compactMap { text in
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            XCTAssertNotNil(object, "not a JSON object on stderr: \(text)", file: file, line: line)
            return object
        }
    }

    /// The progress stream always ends with "progress": "end", whatever the run came to: a dry
    /// run, an output found up to date (no progress at all before), a merge; a reader waits for it.
    func testTheProgressStreamAlwaysEnds() throws {
        let dir = try makeScratchDirectory()
        let clips = [Fixtures.path("a_"), Fixtures.path("e_")]
        for arguments in [["-n"], [], []] {  // a dry run, the merge, the merge again (up to date)
            let run = try VMergeBinary.run(clips + arguments + ["-o", "out.mp4", "--progress", "json"], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
            let progress = events(run).filter { $0["event"] as? String == "progress" }
            XCTAssertEqual(progress.last?["progress"] as? String, "end", "\(arguments): \(run.stderr)")
            XCTAssertEqual(progress.filter { $0["progress"] as? String == "end" }.count, 1, run.stderr)
        }
    }

    func testEveryStderrLineOfAMergeIsJSON() throws {
        let dir = try makeScratchDirectory()
        let short = Fixtures.path("i_short"), text = Fixtures.path("bad_text")
        let run = try VMergeBinary.run(
            [Fixtures.path("a_"), short, text, "--skip-invalid", "-o", "out.mp4", "--progress", "json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let events = events(run)
        XCTAssertEqual(events.count, run.stderrLines.count)
        XCTAssertTrue(events.contains { $0["event"] as? String == "progress" && $0["phase"] as? String == "done" })
        let warnings = events.filter { $0["event"] as? String == "warning" }
        XCTAssertEqual(warnings.compactMap { $0["file"] as? String }.sorted(), [short, text].sorted(), "\(warnings)")
        let dropped = try XCTUnwrap(warnings.first { $0["file"] as? String == short })
        XCTAssertEqual(dropped["message"] as? String, "dropped: video lasts 1.5 s, under the 2 s minimum")
        XCTAssertEqual(
            dropped["text"] as? String, "vmerge: \(short): dropped: video lasts 1.5 s, under the 2 s minimum")
        let summary = try XCTUnwrap(events.last)
        XCTAssertEqual(summary["event"] as? String, "summary")
        XCTAssertEqual(summary["output"] as? String, "out.mp4")
        XCTAssertEqual(summary["clips"] as? Int, 1)
        XCTAssertTrue(
            (summary["text"] as? String)?.hasPrefix("vmerge: wrote out.mp4 (1 clip, 3 s, ") ?? false, "\(summary)")
    }

    /// The error a run ends with is an event with its exit status, and the status stays the process's.
    func testAFailedMergeEndsWithAnErrorEvent() throws {
        let dir = try makeScratchDirectory()
        let text = Fixtures.path("bad_text")
        let run = try VMergeBinary.run([Fixtures.path("a_"), text, "-o", "out.mp4", "--progress", "json"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        let last = try XCTUnwrap(events(run).last)
        XCTAssertEqual(last["event"] as? String, "error")
        XCTAssertEqual(last["exit"] as? Int, 1)
        XCTAssertTrue(
            (last["text"] as? String)?.hasPrefix("vmerge: \(text): not a readable video file") ?? false, "\(last)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.mp4").path))
    }

    /// A mistake in the command line, found before the command runs: an event too (exit 2),
    /// with the forgotten -o's hint.
    func testAUsageErrorIsAnEventWhenJSONWasAskedFor() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), "out.mp4", "--progress", "json"], in: dir)
        XCTAssertEqual(run.status, 2, run.stderr)
        let events = events(run)
        XCTAssertEqual(events.map { $0["event"] as? String }, ["error", "usage"])
        XCTAssertEqual(events.first?["exit"] as? Int, 2)
        XCTAssertTrue((events.first?["message"] as? String)?.contains("say so with -o: vmerge ") ?? false, "\(events)")
        let unknown = try VMergeBinary.run(
            [Fixtures.path("a_"), "-loglevel", "quiet", "-o", "o.mp4", "--progress", "json"], in: dir)
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(self.events(unknown).first?["event"] as? String, "error")
    }

    func testEveryStderrLineOfABatchIsJSON() throws {
        let dir = try makeScratchDirectory()
        let short = Fixtures.path("i_short")
        let lines = [
            #"{"name": "one", "inputs": ["\#(Fixtures.path("a_"))", "\#(short)"], "output": "one.mp4"}"#,
            #"{"name": "two", "inputs": ["\#(Fixtures.path("bad_text"))"], "output": "two.mp4"}"#,
        ]
        try Data(lines.joined(separator: "\n").utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "--progress", "json"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        let events = events(run)
        XCTAssertEqual(events.count, run.stderrLines.count)
        XCTAssertTrue(
            events.contains {
                $0["event"] as? String == "warning" && ($0["text"] as? String)?.contains("dropped") == true
            })
        XCTAssertTrue(events.contains { $0["event"] as? String == "progress" && $0["job"] as? Int == 1 })
        let summary = try XCTUnwrap(events.last { $0["event"] as? String == "summary" })
        XCTAssertEqual(summary["done"] as? Int, 1)
        XCTAssertEqual(summary["failed"] as? Int, 1)
        XCTAssertEqual(summary["exit"] as? Int, 1)
    }

    /// Progress sent elsewhere: stderr stays for people, the stream on the descriptor is JSON.
    func testWithProgressFDStderrStaysLines() throws {
        let dir = try makeScratchDirectory()
        let short = Fixtures.path("i_short")
        let run = try runProgram(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", "exec \"$0\" \"$@\" 3>progress.jsonl", VMergeBinary.url.path, Fixtures.path("a_"), short, "-o",
                "out.mp4", "--progress", "json", "--progress-fd", "3",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderrLines.first, "vmerge: \(short): dropped: video lasts 1.5 s, under the 2 s minimum")
        XCTAssertTrue(run.stderrLines.last?.hasPrefix("vmerge: wrote out.mp4") ?? false, run.stderr)
        let stream = try String(contentsOf: dir.appendingPathComponent("progress.jsonl"), encoding: .utf8)
        XCTAssertTrue(stream.split(separator: "\n").allSatisfy { $0.hasPrefix(#"{"event":"progress","#) }, stream)
    }
}
