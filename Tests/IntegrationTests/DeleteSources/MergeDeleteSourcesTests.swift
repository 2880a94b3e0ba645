import Foundation
import TestSupport
import XCTest

/// --delete-sources on a merge: a file goes once the published output holds all of it (every
/// use, every stream), never on a failure, a dry run or an interruption, and the run says what it
/// deleted and why it kept the rest.
final class MergeDeleteSourcesTests: DeleteSourcesTestCase {
    func testAMergeDeletesWhatItConsumedOnceTheOutputIsPublished() throws {
        let dir = try makeScratchDirectory()
        let inputs = try copies([("a_", "a.mov"), ("i_", "short.mov"), ("bad_text", "bad.mov"), ("c_", "c.mov")], in: dir)
        let run = try VMergeBinary.run(
            ["--delete-sources", "--skip-invalid"] + inputs + ["-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        // Merged (a, c) are gone; the one dropped as too short is in no output and stays, with
        // why; the unreadable one stays.
        XCTAssertEqual(listing(dir), ["bad.mov", "out.mp4", "r.json", "short.mov"])
        XCTAssertEqual(try jsonObject(at: dir.appendingPathComponent("r.json"))["deleted_sources"] as? [String], ["a.mov", "c.mov"])
        XCTAssertTrue(
            run.stderrLines.contains {
                $0.hasPrefix("vmerge: short.mov: kept: a use of it is in no output (dropped: video lasts 1.5 s")
            }, run.stderr)
        let frames = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).videoFrames().times
        XCTAssertEqual(frames.count, 156, "a (90 frames) and c (66) are in the output")
    }

    /// A trimmed input is never consumed: what the trim cut away is in no output.
    func testTrimmedInputsAreDeletedOnlyWhenTheirPartWasMerged() throws {
        let dir = try makeScratchDirectory()
        let inputs = try copies([("t1_", "t.mov"), ("a_", "a.mov")], in: dir)
        let run = try VMergeBinary.run(
            ["--delete-sources", inputs[0], "--trim", "2,3.5", inputs[1], "--trim", "1,2.5", "--min-duration", "2",
             "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 3, "both parts too short: nothing to merge, nothing deleted. \(run.stderr)")
        XCTAssertEqual(listing(dir), ["a.mov", "r.json", "t.mov"])
        let merged = try VMergeBinary.run(
            ["--delete-sources", inputs[0], "--trim", "2,4.5", inputs[1], "--trim", "1,2.5", "--min-duration", "2",
             "-o", "out2.mp4"], in: dir)
        XCTAssertEqual(merged.status, 0, merged.stderr)
        XCTAssertEqual(listing(dir), ["a.mov", "out2.mp4", "r.json", "t.mov"], "t's 2.5 s part merged, a's 1.5 s too short")
        XCTAssertTrue(merged.stderrLines.contains("vmerge: t.mov: kept: only a part of it was merged (--trim)"), merged.stderr)
    }

    /// Deleting is decided per file, over every use and every stream (issue 23's cases): a photo
    /// dropped as too short, a file named twice with one use dropped, a clip whose sound runs on
    /// past its picture and one with a second sound track are all kept, each saying why; the
    /// clip merged whole beside them is deleted.
    func testOnlyFilesTheOutputHoldsWhollyAreDeleted() throws {
        let dir = try makeScratchDirectory()
        _ = try copies([("a_", "a.mov"), ("c_", "twice.mov")], in: dir)
        try runFFmpeg(["-i", Fixtures.path("a_"), "-frames:v", "1", "photo.jpg"], in: dir)
        // 2 s of picture, 3 s of sound.
        try runFFmpeg(["-i", Fixtures.path("a_"), "-t", "2", "-an", "-c", "copy", "picture.mov"], in: dir)
        try runFFmpeg(["-i", "picture.mov", "-i", Fixtures.path("a_"), "-map", "0:v", "-map", "1:a", "-c", "copy", "longsound.mov"], in: dir)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("picture.mov"))
        try runFFmpeg(["-i", Fixtures.path("a_"), "-map", "0:v", "-map", "0:a", "-map", "0:a", "-c", "copy", "twotracks.mov"], in: dir)
        // The picture from 0.5 s, the sound from 0: its first 0.5 s is in no output.
        try runFFmpeg(
            ["-itsoffset", "0.5", "-i", Fixtures.path("a_"), "-i", Fixtures.path("a_"), "-map", "0:v", "-map", "1:a", "-c", "copy",
             "earlysound.mov"], in: dir)
        let run = try VMergeBinary.run(
            ["--delete-sources", "a.mov", "photo.jpg", "twice.mov", "twice.mov", "--trim", "0,0.5", "longsound.mov",
             "twotracks.mov", "earlysound.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            listing(dir), ["earlysound.mov", "longsound.mov", "out.mp4", "photo.jpg", "twice.mov", "twotracks.mov"])
        for (file, reason) in [
            ("photo.jpg", "kept: it is a still image"),
            ("twice.mov", "kept: a use of it is in no output (dropped: the trimmed part lasts 0.5 s, under the 2 s minimum)"),
            ("longsound.mov", "kept: the output does not hold its sound's last 0.933 s, past its picture"),
            ("twotracks.mov", "kept: the output does not hold its other sound track (stream 2)"),
            ("earlysound.mov", "kept: the output does not hold its sound's first 0.5 s, before its picture"),
        ] {
            XCTAssertTrue(run.stderrLines.contains { $0.hasPrefix("vmerge: \(file): \(reason)") }, "\(file): \(run.stderr)")
        }
    }

    /// A data track is footage the output does not carry (issue 33, item 5): a GoPro clip's
    /// telemetry (gpmd: GPS, IMU) and a QuickTime chapter track keep their file, saying which
    /// track, on stderr and in the report's `left_out`; a timecode does not, so a clip with only a
    /// tmcd track beside its picture and sound goes. Before, all three were deleted.
    func testATelemetryTrackKeepsItsFileATimecodeDoesNot() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: dir.appendingPathComponent("gpmf.bin"))
        try runFFmpeg(
            ["-i", a, "-f", "data", "-i", "gpmf.bin", "-map", "0:v", "-map", "0:a", "-map", "1", "-c", "copy", "-tag:d", "gpmd",
             "gopro.mov"], in: dir)
        try runFFmpeg(["-i", a, "-map", "0", "-c", "copy", "-timecode", "01:00:00:00", "timecode.mov"], in: dir)
        try Data(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=3000\ntitle=Arrival\n".utf8)
            .write(to: dir.appendingPathComponent("chapters.txt"))
        try runFFmpeg(["-i", a, "-i", "chapters.txt", "-map", "0", "-map_chapters", "1", "-c", "copy", "chapters.mov"], in: dir)
        for name in ["gpmf.bin", "chapters.txt"] { try FileManager.default.removeItem(at: dir.appendingPathComponent(name)) }
        // The tracks are there as FFmpeg (and so vmerge) sees them: data streams tagged so.
        for (file, tag) in [("gopro.mov", "gpmd"), ("timecode.mov", "tmcd"), ("chapters.mov", "text")] {
            let probe = try runProgram(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["ffprobe", "-v", "error", "-show_entries", "stream=index,codec_type,codec_tag_string", "-of", "csv=p=0", file],
                in: dir)
            XCTAssertEqual(probe.stdout.split(separator: "\n").last.map(String.init), "2,data,\(tag)", probe.stdout)
        }
        let run = try VMergeBinary.run(
            ["--delete-sources", "gopro.mov", "timecode.mov", "chapters.mov", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(dir), ["chapters.mov", "gopro.mov", "out.mp4", "r.json"])
        XCTAssertTrue(
            run.stderrLines.contains("vmerge: gopro.mov: kept: the output does not hold its GoPro telemetry track (gpmd, stream 2)"),
            run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains("vmerge: chapters.mov: kept: the output does not hold its chapter track (text, stream 2)"),
            run.stderr)
        XCTAssertTrue(run.stderrLines.contains("vmerge: timecode.mov: deleted (--delete-sources: the output holds all of it)"), run.stderr)
        let report = try jsonObject(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(report["deleted_sources"] as? [String], ["timecode.mov"])
        let leftOut = (report["inputs"] as? [[String: Any]] ?? []).map { $0["left_out"] as? [String] }
        XCTAssertEqual(
            leftOut, [["its GoPro telemetry track (gpmd, stream 2)"], [], ["its chapter track (text, stream 2)"]])
    }

    /// A clip whose corrupt packets were concealed, or whose edit list hides part of its picture,
    /// is kept: the output does not hold that footage. Both were deleted before (found by a
    /// hostile pass).
    func testConcealedDamageAndHiddenPictureKeepTheFile() throws {
        let dir = try makeScratchDirectory()
        try writeDamagedCopy(to: dir.appendingPathComponent("damaged.mov"))
        try runFFmpeg(["-ss", "1.2", "-i", Fixtures.path("t1_"), "-c", "copy", "-t", "3", "edited.mov"], in: dir)
        _ = try copies([("e_", "e.mov")], in: dir)
        let run = try VMergeBinary.run(["--delete-sources", "damaged.mov", "edited.mov", "e.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains { $0.hasPrefix("vmerge: damaged.mov: kept: ") && $0.contains("corrupt packet") },
            run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains { $0.hasPrefix("vmerge: edited.mov: kept: the output does not hold ") && $0.hasSuffix("of its picture that its edit list hides") },
            run.stderr)
        XCTAssertEqual(listing(dir), ["damaged.mov", "edited.mov", "out.mp4"])
    }

    /// A file whose later use is never read (left out once --max-duration is reached, so never
    /// probed) keeps the file, as a use dropped does. Found by the invariant test (seed 151): the
    /// ledger passed over uses without a probe, so the file went with its first, whole use.
    func testAUseLeftOutUnreadKeepsTheFile() throws {
        let dir = try makeScratchDirectory()
        _ = try copies([("a_", "a.mov"), ("e_", "e.mov")], in: dir)
        let run = try VMergeBinary.run(
            ["--delete-sources", "a.mov", "e.mov", "a.mov", "--max-duration", "5.2", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderrLines.contains("vmerge: a.mov: kept: a use of it was not reached"), run.stderr)
        XCTAssertEqual(listing(dir), ["a.mov", "out.mp4"])
    }

    func testNothingIsDeletedOnFailureOrDryRun() throws {
        let dir = try makeScratchDirectory()
        let inputs = try copies([("a_", "a.mov"), ("bad_text", "bad.mov")], in: dir)
        let failed = try VMergeBinary.run(["--delete-sources"] + inputs + ["-o", "out.mp4"], in: dir)
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertEqual(listing(dir), ["a.mov", "bad.mov"])
        let dry = try VMergeBinary.run(["--delete-sources", "-n", "a.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertEqual(listing(dir), ["a.mov", "bad.mov"])
        // A clip the output holds only part of is not deleted: --max-size ended the file inside a.
        let cut = try VMergeBinary.run(["--delete-sources", "a.mov", "--max-size", "16K", "-o", "cut.mp4"], in: dir)
        XCTAssertEqual(cut.status, 0, cut.stderr)
        XCTAssertEqual(listing(dir), ["a.mov", "bad.mov", "cut.mp4"])
        let short = try VMergeBinary.run(["--delete-sources", "a.mov", "--max-duration", "1", "-o", "short.mp4"], in: dir)
        XCTAssertEqual(short.status, 0, short.stderr)
        XCTAssertEqual(listing(dir), ["a.mov", "bad.mov", "cut.mp4", "short.mp4"])
    }

    func testNothingIsDeletedWhenTheMergeIsInterrupted() throws {
        let dir = try makeScratchDirectory()
        // 40 names of one file (hard links): each is an input that would be deleted.
        let source = dir.appendingPathComponent("b.mov").path
        try FileManager.default.copyItem(atPath: Fixtures.path("b_"), toPath: source)
        let names = (0..<40).map { "b\($0).mov" }
        for name in names { XCTAssertEqual(link(source, dir.appendingPathComponent(name).path), 0) }
        let (run, signalled) = try runInterrupted(["--delete-sources"] + names + ["-o", "out.mp4"], in: dir)
        XCTAssertTrue(signalled, "the merge finished before it could be interrupted")
        XCTAssertEqual(run.status, 130, run.stderr)
        XCTAssertEqual(listing(dir), (["b.mov"] + names).sorted())
    }

    /// What was deleted is said on stderr, one line per file, and with -q as a count.
    func testARunThatDeletesSaysSo() throws {
        let dir = try makeScratchDirectory()
        _ = try copies([("a_", "a.mov"), ("c_", "c.mov")], in: dir)
        let run = try VMergeBinary.run(["--delete-sources", "a.mov", "c.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderrLines.contains("vmerge: a.mov: deleted (--delete-sources: the output holds all of it)"), run.stderr)
        XCTAssertTrue(run.stderrLines.contains("vmerge: c.mov: deleted (--delete-sources: the output holds all of it)"), run.stderr)
        _ = try copies([("a_", "a2.mov"), ("c_", "c2.mov")], in: dir)
        let quiet = try VMergeBinary.run(["-q", "--delete-sources", "a2.mov", "c2.mov", "-o", "out2.mp4"], in: dir)
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertEqual(quiet.stderrLines, ["vmerge: deleted 2 source files (--delete-sources)"])
        XCTAssertEqual(listing(dir), ["out.mp4", "out2.mp4"])
    }

    /// The report may not take the poster's name, nor the poster the report's.
    func testTheReportAndThePosterNeverShareAName() throws {
        let dir = try makeScratchDirectory()
        _ = try copies([("a_", "a.mov")], in: dir)
        let run = try VMergeBinary.run(["a.mov", "-o", "out.mp4", "--poster", "x.jpg", "--report", "x.jpg"], in: dir)
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertEqual(run.stderrLines.first, "vmerge: x.jpg: the report would overwrite the poster")
        XCTAssertEqual(listing(dir), ["a.mov"])
    }
}
