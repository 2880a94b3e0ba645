import Foundation
import TestSupport
import XCTest

/// Renditions at the doors besides the merge command: a batch job list carries them by the same
/// words, their files are checked against every other job's, and each rendition is the very video
/// vmerge makes of that size alone (decoded once, nothing of one picture reaches another).
final class RenditionDoorTests: XCTestCase {
    /// The video stream of `file`, as ffmpeg copies it out: equal when the encoder was given equal pictures.
    private func videoStream(_ file: String, in dir: URL) throws -> String {
        let run = try runTool(
            "ffmpeg", ["-v", "error", "-i", file, "-map", "0:v", "-c", "copy", "-f", "md5", "-"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// With the decoder's shortcuts off (so no picture decides how another is decoded), each
    /// file of a run with renditions made from the decoded pictures holds exactly the video
    /// vmerge makes of it alone.
    func testEachRenditionIsTheVideoVmergeMakesOfItAlone() throws {
        let dir = try makeScratchDirectory()
        let inputs = [Fixtures.path("a_"), Fixtures.path("b_"), "--skip-deblocking", "never", "-q"]
        XCTAssertEqual(
            try VMergeBinary.run(
                inputs + ["-o", "all.mp4", "--rendition", "16x9-720", "--rendition", "360x640:crf=28"], in: dir
            ).status, 0)
        for (extra, file) in [
            ([String](), "all.mp4"), (["--width", "1280", "--aspect", "16:9"], "all-16x9-720.mp4"),
            (["--width", "360", "--aspect", "9:16", "--crf", "28"], "all-360x640.mp4"),
        ] {
            XCTAssertEqual(try VMergeBinary.run(inputs + extra + ["-o", "alone.mp4", "-y"], in: dir).status, 0)
            XCTAssertEqual(try videoStream(file, in: dir), try videoStream("alone.mp4", in: dir), file)
        }
    }

    /// The job's own 320x240 beside a 640x480 of the same window is scaled from the 640x480's
    /// frames (`DerivedPictures`), not from the decoded ones. On footage with sensor noise (a
    /// 720p clip made here, like set A's) what it shows is within 0.1 dB of the file vmerge makes
    /// of it alone (measured: 0.03), both against vmerge's lossless 320x240 of the clip, and the
    /// extra scaling step is far under x264's own error (both lossless, the two files are 53 dB
    /// apart: 8-bit rounding, mostly). The 640x480 stays the very video made of it alone.
    func testAPictureScaledFromALargerOneIsWithinATenthOfADecibelOfItAlone() throws {
        let dir = try makeScratchDirectory()
        try runFFmpeg(
            [
                "-f", "lavfi", "-i", "testsrc2=s=1280x720:r=30:d=2", "-vf", "noise=alls=12:allf=t,format=yuv420p",
                "-c:v", "libx264", "-crf", "16", "-preset", "ultrafast", "noisy.mov",
            ], in: dir)
        let inputs = ["noisy.mov", "--skip-deblocking", "never", "-q", "-y"]
        // Lossless at the fastest preset (what it shows is the same at every preset), then as made.
        for (crf, preset) in [("0", ["--preset", "ultrafast"]), ("23", [])] {
            let settings = inputs + ["--crf", crf] + preset
            XCTAssertEqual(
                try VMergeBinary.run(settings + ["-o", "all\(crf).mp4", "--rendition", "4x3-480"], in: dir).status, 0)
            XCTAssertEqual(try VMergeBinary.run(settings + ["-o", "alone\(crf).mp4"], in: dir).status, 0)
            XCTAssertNotEqual(try videoStream("all\(crf).mp4", in: dir), try videoStream("alone\(crf).mp4", in: dir))
        }
        XCTAssertEqual(try VMergeBinary.run(inputs + ["--width", "640", "-o", "big.mp4"], in: dir).status, 0)
        XCTAssertEqual(try videoStream("all23-4x3-480.mp4", in: dir), try videoStream("big.mp4", in: dir))
        let step = try ffmpegPSNR("all0.mp4", "alone0.mp4", in: dir).average
        XCTAssertGreaterThan(step, 45, "the extra scaling step alone")
        let derived = try ffmpegPSNR("all23.mp4", "alone0.mp4", in: dir).average
        let alone = try ffmpegPSNR("alone23.mp4", "alone0.mp4", in: dir).average
        XCTAssertEqual(derived, alone, accuracy: 0.1, "PSNR against the lossless picture, dB")
    }

    /// A job list line's "renditions" are the command line's; a bad one names its line; two
    /// jobs may not write one file, nor may a rendition be another job's input.
    func testAJobListCarriesRenditionsAndTheirFilesAreChecked() throws {
        let dir = try makeScratchDirectory()
        let (a, e) = (Fixtures.path("a_"), Fixtures.path("e_"))
        func list(_ lines: String...) throws {
            try lines.joined(separator: "\n").write(
                to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        }
        try list(
            #"{"inputs": ["\#(a)"], "output": "one.mp4", "renditions": ["1x1-720:fit=blur=one-square.mp4"]}"#,
            #"{"inputs": ["\#(e)"], "output": "two.mp4", "renditions": ["16x9-720"]}"#)
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "-q"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        for (file, width, height) in [("one-square.mp4", 720, 720), ("two-16x9-720.mp4", 1280, 720)] {
            let video = try MediaInspector(path: dir.appendingPathComponent(file).path).streams().video
            XCTAssertEqual([video?.width, video?.height], [width, height], file)
        }
        let refusals: [(String, String)] = [
            (
                #"{"inputs": ["\#(a)"], "output": "x.mp4", "renditions": ["9x16"]}"#,
                "line 1: rendition '9x16': each side is even (4:2:0 pictures); the preset is 9x16-1080"
            ),
            (#"{"inputs": ["\#(a)"], "output": "x.mp4", "renditions": []}"#, "line 1: 'renditions' must be a list"),
            (
                #"{"inputs": ["\#(a)"], "output": "x.mp4", "renditions": ["4x3-480=../y.mp4"]}"#,
                "its file is a name in the output's folder"
            ),
        ]
        for (line, message) in refusals {
            try list(line)
            let refused = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
            XCTAssertEqual(refused.status, 1, refused.stderr)
            XCTAssertTrue(refused.stderr.contains(message), refused.stderr)
        }
        try list(
            #"{"inputs": ["\#(a)"], "output": "p.mp4", "renditions": ["4x3-480=same.mp4"]}"#,
            #"{"inputs": ["\#(e)"], "output": "q.mp4", "renditions": ["16x9-720=same.mp4"]}"#)
        let both = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(both.status, 1, both.stderr)
        XCTAssertTrue(both.stderr.contains("would both write same.mp4"), both.stderr)
        try FileManager.default.copyItem(atPath: e, toPath: dir.appendingPathComponent("taken.mov").path)
        try list(
            #"{"inputs": ["\#(a)"], "output": "p.mp4", "renditions": ["4x3-480=taken.mov"]}"#,
            #"{"inputs": ["taken.mov"], "output": "q.mp4"}"#)
        let input = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(input.status, 1, input.stderr)
        XCTAssertTrue(input.stderr.contains("rendition"), input.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("p.mp4").path))
    }

    /// --delete-sources deletes only what every file holds: a rendition --max-size ended early
    /// keeps the sources it does not hold, though the job's own file holds them all.
    func testDeleteSourcesDeletesOnlyWhatEveryRenditionHolds() throws {
        let dir = try makeScratchDirectory()
        for (fixture, name) in [("a_", "a.mov"), ("b_", "b.mov")] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path(fixture), toPath: dir.appendingPathComponent(name).path)
        }
        let run = try VMergeBinary.run(
            [
                "a.mov", "b.mov", "-o", "out.mp4", "--rendition", "9x16-1080:crf=0", "--max-size", "100K",
                "--delete-sources", "--report", "r.json",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json"))) as? [String: Any]
        )
        let outputs = try XCTUnwrap(report["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["truncated_by"] as? String }, [nil, "max-size"], "the premise")
        let rendition = try MediaInspector(path: dir.appendingPathComponent("out-9x16-1080.mp4").path).videoFrames()
        // b starts at 3 s: a rendition that ends before its end does not hold it, so it stays.
        XCTAssertLessThan(rendition.times.count, 165)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("b.mov").path), run.stderr)
        XCTAssertTrue(run.stderr.contains("b.mov: kept"), run.stderr)
        // a (3 s, 90 frames) goes only if the rendition holds all of it.
        let deleted = report["deleted_sources"] as? [String] ?? []
        XCTAssertEqual(deleted, rendition.times.count >= 90 ? ["a.mov"] : [], run.stderr)
        XCTAssertEqual(
            FileManager.default.fileExists(atPath: dir.appendingPathComponent("a.mov").path), deleted.isEmpty)
    }

    /// A batch re-run skips a job whose every file is there with its key; one whose rendition
    /// went missing, or that names one more, makes only the renditions that are not there (the
    /// files there are left as they are: same file, same bytes); one whose rendition's name now
    /// holds someone else's file fails naming it and leaves it.
    func testABatchRerunMakesOnlyTheRenditionsThatAreNotThere() throws {
        let dir = try makeScratchDirectory()
        let line = { (renditions: String) in
            #"{"inputs": ["\#(Fixtures.path("a_"))"], "output": "trip.mp4", "options": {"poster": "trip.jpg"}, "renditions": [\#(renditions)]}"#
        }
        try line(#""4x3-480""#).write(to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let rendition = dir.appendingPathComponent("trip-4x3-480.mp4")
        XCTAssertEqual(try VMergeBinary.run(["batch", "jobs.jsonl", "-q"], in: dir).status, 0)
        let skipped = try VMergeBinary.run(["batch", "jobs.jsonl", "--report", "-"], in: dir)
        XCTAssertEqual(skipped.status, 0, skipped.stderr)
        XCTAssertTrue(
            skipped.stdout.contains(#""status" : "skipped""#) || skipped.stdout.contains(#""status": "skipped""#),
            skipped.stdout)
        // Each file as it is on disk: its inode, its time and its bytes.
        let state = { (name: String) throws -> String in
            let path = dir.appendingPathComponent(name).path
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            return "\(attributes[.systemFileNumber] ?? 0) \(attributes[.modificationDate] ?? 0) \(bytes.hashValue)"
        }
        let video = try state("trip.mp4"), poster = try state("trip.jpg")
        try FileManager.default.removeItem(at: rendition)
        let again = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(
            again.stderr.contains("trip.mp4: made earlier; making the rendition not there: trip-4x3-480.mp4"),
            again.stderr)
        XCTAssertEqual(try MediaInspector(path: rendition.path).streams().video?.width, 640)
        XCTAssertEqual(try state("trip.mp4"), video, "the job's video is left as it is")
        XCTAssertEqual(try state("trip.jpg"), poster, "and its poster")
        // One more rendition: only that one is made; the report lists every file, the ones made
        // before as made earlier.
        let made = try state("trip-4x3-480.mp4")
        try line(#""4x3-480", "1x1-720""#).write(
            to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let more = try VMergeBinary.run(["batch", "jobs.jsonl", "--report", "r.json"], in: dir)
        XCTAssertEqual(more.status, 0, more.stderr)
        XCTAssertTrue(more.stderr.contains("making the rendition not there: trip-1x1-720.mp4"), more.stderr)
        XCTAssertEqual(
            try MediaInspector(path: dir.appendingPathComponent("trip-1x1-720.mp4").path).streams().video?.width, 720)
        XCTAssertEqual(try state("trip.mp4"), video)
        XCTAssertEqual(try state("trip-4x3-480.mp4"), made)
        let jobs = try jsonObject(at: dir.appendingPathComponent("r.json"))["jobs"] as? [[String: Any]] ?? []
        let report = jobs.first?["report"] as? [String: Any] ?? [:]
        let outputs = report["outputs"] as? [[String: Any]] ?? []
        XCTAssertEqual(outputs.map { $0["rendition"] as? String ?? "own" }, ["own", "4x3-480", "1x1-720"])
        XCTAssertEqual(outputs.map { $0["made_earlier"] as? Bool }, [true, true, false])
        XCTAssertEqual(outputs.map { $0["written"] as? Bool }, [true, true, true])
        let sizes = try ["trip.mp4", "trip-4x3-480.mp4", "trip-1x1-720.mp4"].map {
            try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent($0).path)[.size] as? Int
        }
        XCTAssertEqual(outputs.map { ($0["bytes"] as? NSNumber)?.intValue }, sizes)
        XCTAssertEqual((report["output"] as? [String: Any])?["poster"] as? String, "trip.jpg")
        XCTAssertEqual(
            try VMergeBinary.run(["batch", "jobs.jsonl", "-q"], in: dir).stderr, "", "done: every file is there")
        try Data("someone's".utf8).write(to: rendition)
        let foreign = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(foreign.status, 1, foreign.stderr)
        XCTAssertTrue(foreign.stderr.contains("trip-4x3-480.mp4: output exists"), foreign.stderr)
        XCTAssertEqual(try String(contentsOf: rendition, encoding: .utf8), "someone's")
    }
}
