import Foundation
import TestSupport
import XCTest

/// The JSON report of a merge (--report): what it says of a run that succeeded, failed, skipped
/// an input, had nothing to merge or was interrupted, and where it may not be written.
final class RunReportTests: MergeRunTestCase {
    func testReportOfASuccessfulMergeDescribesEveryInputAndTheOutput() throws {
        let dir = try makeScratchDirectory()
        let names = ["a_", "b_", "c_", "f_", "g_", "i_"]
        let run = try VMergeBinary.run(names.map(Fixtures.path) + ["-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "ok")
        XCTAssertEqual(r["exit_code"] as? Int, 0)
        XCTAssertTrue(r["error"] is NSNull)
        let list = inputs(r)
        XCTAssertEqual(list.map { $0["path"] as? String }, names.map(Fixtures.path))
        XCTAssertEqual(list.map { $0["status"] as? String }, ["kept", "kept", "kept", "kept", "kept", "dropped-short"])
        // The dropped clip's reason is the warning printed on stderr.
        let reason = try XCTUnwrap(list[5]["reason"] as? String)
        XCTAssertTrue(run.stderrLines.contains("vmerge: \(Fixtures.path("i_")): \(reason)"), run.stderr)
        let video = { (i: Int, key: String) in (list[i]["video"] as? [String: Any])?[key] }
        XCTAssertEqual(video(1, "rotation") as? Int, 90)
        XCTAssertEqual(video(1, "width") as? Int, 1920)
        XCTAssertEqual(video(2, "rotation") as? Int, 180)
        XCTAssertEqual(video(3, "codec") as? String, "hevc")
        XCTAssertEqual(video(3, "mirrored") as? Bool, true)
        XCTAssertEqual(video(4, "orientation") as? String, "transpose")
        XCTAssertTrue(list[2]["audio"] is NSNull, "c has no audio")
        XCTAssertEqual((list[1]["audio"] as? [String: Any])?["sample_rate"] as? Int, 48000)
        let starts = list.prefix(5).map { ($0["placement"] as? [String: Any])?["start"] as? Double ?? -1 }
        XCTAssertEqual(starts[0], 0)
        XCTAssertEqual(starts[1], 3, accuracy: 1e-6)
        XCTAssertEqual(starts[2], 5.5, accuracy: 1e-6)
        XCTAssertEqual((list[1]["crop"] as? [String: Any])?["width"] as? Int, 810)
        let output = try XCTUnwrap(r["output"] as? [String: Any])
        XCTAssertEqual(output["bytes"] as? Int64, fileSize(dir.appendingPathComponent("out.mp4")))
        XCTAssertEqual(output["faststart"] as? Bool, true)
        XCTAssertEqual(output["truncated"] as? Bool, false)
        let frames = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).videoFrames().times.count
        XCTAssertEqual(output["video_frames"] as? Int, frames)
        XCTAssertEqual(output["duration"] as? Double ?? 0, Double(frames) / 30, accuracy: 1e-5)
        let timings = try XCTUnwrap(r["timings"] as? [String: Any])
        XCTAssertGreaterThan(timings["speed"] as? Double ?? 0, 0)
        // How long each side of the frame queue waited for the other: parts of the wall time.
        let wall = try XCTUnwrap(timings["wall_seconds"] as? Double)
        for side in ["decode_waited_seconds", "encode_waited_seconds"] {
            let waited = try XCTUnwrap(timings[side] as? Double, side)
            XCTAssertTrue(waited >= 0 && waited <= wall, "\(side) \(waited) of \(wall) s")
        }
        // The version the binary itself prints.
        let version = try VMergeBinary.run(["--version"], in: dir).stdout.split(separator: "\n").first ?? ""
        XCTAssertEqual("vmerge " + ((r["versions"] as? [String: Any])?["vmerge"] as? String ?? "?"), String(version))
    }

    func testReportOfAFailedRunNamesTheBadInputAndWhatWasNotReached() throws {
        let dir = try makeScratchDirectory()
        let bad = Fixtures.path("bad_text")
        let run = try VMergeBinary.run(
            [Fixtures.path("a_"), bad, Fixtures.path("c_"), "-o", "out.mp4", "--report", "-"], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
        let r = try report(run.stdout)
        XCTAssertEqual(r["status"] as? String, "failed")
        XCTAssertEqual(r["exit_code"] as? Int, 1)
        let error = try XCTUnwrap(r["error"] as? [String: Any])
        XCTAssertEqual(error["file"] as? String, bad)
        XCTAssertEqual("vmerge: \(error["message"] as? String ?? "")", run.stderrLines.first)
        XCTAssertEqual(inputs(r).map { $0["status"] as? String }, ["probed", "invalid", "not-probed"])
        XCTAssertEqual(
            inputs(r)[1]["reason"] as? String,
            "not a readable video file (unknown format, or a recording cut off before it was finalised)")
        XCTAssertTrue(inputs(r)[0]["placement"] is NSNull, "nothing was merged")
        XCTAssertTrue(r["output"] is NSNull)
        XCTAssertTrue((r["timings"] as? [String: Any])?["media_seconds"] is NSNull)
        XCTAssertEqual(listing(dir), [], "no output")
    }

    func testSkippedInvalidInputIsReportedAndTheRestMerged() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [Fixtures.path("bad_empty"), Fixtures.path("a_"), "--skip-invalid", "-o", "out.mp4", "--report", "r.json"],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(inputs(r).map { $0["status"] as? String }, ["invalid", "kept"])
        XCTAssertTrue((inputs(r)[0]["reason"] as? String ?? "").contains("empty"), "\(inputs(r)[0])")
    }

    /// A report in a folder that is not there is the command's mistake: exit 2, before any work.
    func testAReportInAMissingFolderIsRefusedBeforeAnyWork() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), "-o", "out.mp4", "--report", "no/such/r.json"], in: dir)
        XCTAssertEqual(run.status, 2)
        XCTAssertEqual(
            run.stderrLines,
            ["vmerge: no/such/r.json: folder no/such does not exist (vmerge makes no folder for '--report'; mkdir -p no/such first)"])
        XCTAssertEqual(listing(dir), [])
    }

    func testTheReportNeverOverwritesAVideo() throws {
        let dir = try makeScratchDirectory()
        let input = dir.appendingPathComponent("in.mov")
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: input.path)
        let original = try Data(contentsOf: input)
        let onInput = try VMergeBinary.run(["in.mov", "-o", "out.mp4", "--report", "./in.mov"], in: dir)
        XCTAssertEqual(onInput.status, 2, "known from the command line: a usage error")
        XCTAssertEqual(onInput.stderrLines, ["vmerge: ./in.mov: the report would overwrite an input video"])
        XCTAssertEqual(try Data(contentsOf: input), original)
        let onOutput = try VMergeBinary.run(["in.mov", "-o", "out.mp4", "--report", "out.mp4"], in: dir)
        XCTAssertEqual(onOutput.status, 2)
        XCTAssertEqual(onOutput.stderrLines, ["vmerge: out.mp4: the report would overwrite the output video"])
        XCTAssertEqual(listing(dir), ["in.mov"])
    }

    func testNothingToMergeIsReportedWithExitThree() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("i_"), "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 3)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "nothing-to-merge")
        XCTAssertEqual(r["exit_code"] as? Int, 3)
        XCTAssertEqual(listing(dir), ["r.json"])
    }

    /// SIGINT mid-run: stops within a second, no output or temporary file, report says
    /// cancelled, exit 130. Non-TTY progress (auto = plain) has no carriage returns.
    func testInterruptWritesACancelledReport() throws {
        let dir = try makeScratchDirectory()
        let list = String(repeating: Fixtures.path("b_") + "\n", count: 300)
        try list.write(to: dir.appendingPathComponent("list.txt"), atomically: true, encoding: .utf8)
        var signalledAt: Date?
        let run = try VMergeBinary.run(["--inputs-from", "list.txt", "-o", "out.mp4", "--report", "r.json"], in: dir) {
            process in
            // Past the first plain progress line (every 5 s), then interrupt.
            let deadline = Date().addingTimeInterval(120)
            var sawTemporary: Date?
            while Date() < deadline && process.isRunning {
                // The output's temporary (the report's is made before probing): encoding has begun.
                if sawTemporary == nil && listing(dir).contains(where: { $0.hasPrefix(".out.mp4.") && $0.hasSuffix(".tmp") }) {
                    sawTemporary = Date()
                }
                if let seen = sawTemporary, Date().timeIntervalSince(seen) > 5.5 {
                    kill(process.processIdentifier, SIGINT)
                    signalledAt = Date()
                    process.waitUntilExit()
                    return
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        let stopped = try XCTUnwrap(signalledAt, "the merge finished before it could be interrupted")
        XCTAssertLessThan(Date().timeIntervalSince(stopped), 1.0, "stops within a second")
        XCTAssertEqual(run.status, 130, run.stderr)
        XCTAssertEqual(listing(dir), ["list.txt", "r.json"], "no output, no temporary file")
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "cancelled")
        XCTAssertEqual(r["exit_code"] as? Int, 130)
        XCTAssertTrue(r["output"] is NSNull)
        XCTAssertEqual(inputs(r).count, 300)
        // Plain progress: whole lines, no carriage returns or escape sequences.
        XCTAssertFalse(run.stderr.contains("\r"), run.stderr)
        XCTAssertFalse(run.stderr.contains("\u{1B}"), run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains { $0.hasPrefix("vmerge: ") && $0.contains("% clip ") && $0.contains("/300") },
            run.stderr)
        XCTAssertEqual(run.stderrLines.last, "vmerge: interrupted (SIGINT): stopped, no output written")
    }
}
