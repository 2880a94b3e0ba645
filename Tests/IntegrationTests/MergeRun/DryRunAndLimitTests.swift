import Foundation
import TestSupport
import XCTest

/// A dry run, and the limits on what a merge writes: --max-duration, --max-size and --min-free.
final class DryRunAndLimitTests: MergeRunTestCase {
    func testDryRunWritesNothingAndSaysWhatWouldHappen() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [
                Fixtures.path("a_"), Fixtures.path("b_"), Fixtures.path("i_"), "--dry-run", "-o", "out.mp4", "--report",
                "r.json",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(dir), ["r.json"], "no output file")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, run.stdout)
        XCTAssertTrue(
            lines[0].hasPrefix("keep  \(Fixtures.path("a_"))  3 s, h264 640x480 30 fps, upright, crop 640x480+0+0"),
            lines[0])
        XCTAssertTrue(lines[1].contains("rotate 90, crop 810x1080+555+0"), lines[1])
        XCTAssertTrue(lines[1].hasSuffix("; at 3 s"), lines[1])
        XCTAssertEqual(lines[2], "drop  \(Fixtures.path("i_"))  dropped: video lasts 1.5 s, under the 2 s minimum")
        XCTAssertTrue(lines[3].hasPrefix("output  out.mp4  2 clips, 5.5 s, 320x240 at 30 fps"), lines[3])
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "dry-run")
        XCTAssertEqual((r["output"] as? [String: Any])?["written"] as? Bool, false)
        XCTAssertEqual((r["output"] as? [String: Any])?["duration"] as? Double, 5.5)
    }

    func testMaxDurationEndsWithAPlayableFileOfThatLength() throws {
        let dir = try makeScratchDirectory()
        let clips = ["a_", "b_", "c_", "d_"].map(Fixtures.path)
        let run = try VMergeBinary.run(clips + ["--max-duration", "7", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = MediaInspector(path: dir.appendingPathComponent("out.mp4").path)
        let frames = try out.videoFrames().times
        XCTAssertEqual(frames.count, 210, "7 s at 30 fps")
        XCTAssertEqual(frames.last ?? 0, 209.0 / 30, accuracy: 1e-3)
        let audio = try out.audioSamples()
        // AAC decodes in 1024-sample frames: the last one may run past the edit list's end.
        XCTAssertLessThanOrEqual(audio.samples.count, 7 * 44100 + 1024)
        XCTAssertGreaterThan(audio.samples.count, 7 * 44100 - 1024)
        let list = inputs(try report(at: dir.appendingPathComponent("r.json")))
        XCTAssertEqual(list.map { $0["status"] as? String }, ["kept", "kept", "kept", "beyond-limit"])
        let cut = try XCTUnwrap(list[2]["placement"] as? [String: Any])
        XCTAssertEqual(cut["cut_by"] as? String, "max-duration")
        XCTAssertEqual(cut["cut_at"] as? Double ?? 0, 1.5, accuracy: 1e-6)
        XCTAssertTrue(run.stderr.contains("cut at its --max-duration"), run.stderr)
    }

    func testMaxDurationOnAClipBoundaryLeavesTheRestOutUnprobed() throws {
        let dir = try makeScratchDirectory()
        // The truncated recording after the limit is never opened, so it cannot fail the run.
        let run = try VMergeBinary.run(
            [
                Fixtures.path("a_"), Fixtures.path("bad_truncated"), "--max-duration", "3", "-o", "out.mp4", "--report",
                "r.json",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(inputs(r).map { $0["status"] as? String }, ["kept", "beyond-limit"])
        XCTAssertEqual((r["output"] as? [String: Any])?["truncated_by"] as? String, "max-duration")
        XCTAssertEqual((r["output"] as? [String: Any])?["video_frames"] as? Int, 90)
    }

    func testMaxSizeIsNeverExceededAndTheFileEndsCleanly() throws {
        let dir = try makeScratchDirectory()
        let clips = ["a_", "b_", "c_", "d_", "e_", "f_", "g_", "h_"].map(Fixtures.path)
        for limit in [60 * 1024, 100 * 1024] {
            let run = try VMergeBinary.run(
                clips + ["--max-size", "\(limit / 1024)K", "-y", "-o", "out.mp4", "--report", "r.json"], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
            let url = dir.appendingPathComponent("out.mp4")
            let size = fileSize(url)
            XCTAssertLessThanOrEqual(size, Int64(limit))
            XCTAssertGreaterThan(size, Int64(limit) * 8 / 10, "ends near the limit, not far under it")
            XCTAssertEqual(try topLevelBoxes(url.path).prefix(2), ["ftyp", "moov"])
            let r = try report(at: dir.appendingPathComponent("r.json"))
            let output = try XCTUnwrap(r["output"] as? [String: Any])
            XCTAssertEqual(output["truncated_by"] as? String, "max-size")
            XCTAssertEqual(output["bytes"] as? Int64, size)
            // Every picture up to the end decodes, with none missing.
            let frames = try MediaInspector(path: url.path).videoFrames().times
            XCTAssertEqual(frames.count, output["video_frames"] as? Int)
            for (i, t) in frames.sorted().enumerated() { XCTAssertEqual(t, Double(i) / 30, accuracy: 1e-3) }
            let audio = try MediaInspector(path: url.path).audioSamples()
            XCTAssertEqual(Double(audio.samples.count) / 44100, Double(frames.count) / 30, accuracy: 0.05)
            XCTAssertTrue(
                inputs(r).contains { ($0["placement"] as? [String: Any])?["cut_by"] as? String == "max-size" })
        }
    }

    func testMaxSizeTooSmallForTheFirstPicturesFails() throws {
        let dir = try makeScratchDirectory()
        // Noise: its first picture alone is far over 16K (the fixtures' flat pictures are not).
        let ffmpeg = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "nullsrc=s=640x480:r=30:d=1,geq=random(1)*255:128:128",
                "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "noise.mov",
            ], in: dir)
        XCTAssertEqual(ffmpeg.status, 0, ffmpeg.stderr)
        let run = try VMergeBinary.run(
            [
                "noise.mov", "--width", "640", "--quality", "high", "--min-duration", "0", "--max-size", "16K", "-q",
                "-o", "out.mp4", "--report", "r.json",
            ], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(
            run.stderrLines, ["vmerge: out.mp4: --max-size 16 KiB is too small to hold even the first pictures"])
        XCTAssertEqual(listing(dir), ["noise.mov", "r.json"], "no output")
        XCTAssertEqual(try report(at: dir.appendingPathComponent("r.json"))["status"] as? String, "failed")
    }

    func testTooLittleFreeSpaceFailsBeforeWriting() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), "--min-free", "1000T", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("vmerge: out.mp4: not enough free space: "), run.stderr)
        XCTAssertTrue(run.stderr.contains("--min-free asks for 1000 TiB"), run.stderr)
        XCTAssertEqual(listing(dir), [])
    }
}
