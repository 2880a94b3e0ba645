import Foundation
import TestSupport
import XCTest

/// Per-clip trim (`--trim START,END` after a file, or an input object in a job file): pictures
/// to the frame, sound to the sample, in sync with the rest of the timeline. t1 shows its frame
/// number as a bar code and sounds a tone at 0.5, 1.5, ... 5.5 s (make_trim_fixture.sh); its
/// keyframes are 2 s apart, so a trim starts mid-GOP. That reading from the keyframe before a
/// trim gives what reading from the top gives: TrimSeekTests (VMergeAVTests).
final class TrimTests: XCTestCase {
    private let t1 = Fixtures.path("t1_")
    /// s6: 44 frames at 30 fps, no sound.
    private let s6 = Fixtures.path("s6_")

    /// s6 (1.467 s), t1 from 3.37 s to 5.2 s, then t1 again up to 1.2 s: which source frame each
    /// output frame shows, where each tone lands, and how long picture and sound last.
    func testTrimmedClipsAreFrameAndSampleAccurateInSync() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [s6, t1, "--trim", "3.37,5.2", t1, "--trim", ",1.2", "--min-duration", "1", "-o", "out.mp4", "--report", "r.json"],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = dir.appendingPathComponent("out.mp4")
        let numbers = try barCodeFrameNumbers(out.path)
        // Clip starts on the frame nearest the exact sums: 44/30, +1.83 s = 3.2967 (frame 99),
        // +1.2 s = 4.4967 (frame 135). At 3.37 s source frame 101 (3.3667 s) is on screen, so it
        // opens the clip; then one source frame per output frame.
        XCTAssertEqual(numbers.count, 135, "the output lasts the trimmed lengths' sum to the nearest frame")
        XCTAssertEqual(Array(numbers[44..<99]), (101..<156).map { Optional($0) }, "t1 from 3.37 s")
        XCTAssertEqual(Array(numbers[99..<135]), (0..<36).map { Optional($0) }, "t1 up to 1.2 s")

        let (samples, rate, _) = try MediaInspector(path: out.path).audioSamples()
        XCTAssertEqual(Double(samples.count), 4.5 * Double(rate), accuracy: 1024, "sound as long as the pictures")
        // Tones at 3.5 and 4.5 s of t1 land 0.13 and 1.13 s into its first slot (at 44/30 s, to
        // the sample), the tone at 0.5 s 0.5 s into the second slot (frame 99, 3.3 s).
        let expected = [44.0 / 30 + 0.13, 44.0 / 30 + 1.13, 3.3 + 0.5]
        let tones = toneOnsets(in: samples, rate: rate)
        XCTAssertEqual(tones.count, expected.count, "\(tones)")
        for (tone, want) in zip(tones, expected) {
            XCTAssertEqual(tone, want, accuracy: 0.001, "tone at \(tone) s, expected \(want) s")
        }

        // The report: each input's part, and its place on the output.
        let inputs = try jsonObject(at: dir.appendingPathComponent("r.json"))["inputs"] as? [[String: Any]] ?? []
        func assertSeconds(_ values: [Any?], _ expected: [Double], _ what: String) {
            XCTAssertEqual(values.count, expected.count, what)
            for (value, want) in zip(values, expected) {
                XCTAssertEqual(value as? Double ?? -1, want, accuracy: 1e-6, what)
            }
        }
        assertSeconds(inputs.map { $0["start"] }, [0, 3.37, 0], "start")
        assertSeconds(inputs.map { $0["end"] }, [44.0 / 30, 5.2, 1.2], "end")
        let placements = inputs.map { $0["placement"] as? [String: Any] }
        assertSeconds(placements.map { $0?["start"] }, [0, 44.0 / 30, 3.3], "placement.start")
        assertSeconds(placements.map { $0?["duration"] }, [44.0 / 30, 99.0 / 30 - 44.0 / 30, 1.2], "placement.duration")
    }

    /// --min-duration is judged on the part kept; a trim past the clip's end is a bad input.
    func testMinDurationAppliesToTheTrimmedPartAndATrimPastTheEndFails() throws {
        let dir = try makeScratchDirectory()
        let short = try VMergeBinary.run(
            [t1, "--trim", "1,1.8", t1, "--trim", "2,", "--min-duration", "1", "-o", "out.mp4", "--report", "r.json"],
            in: dir)
        XCTAssertEqual(short.status, 0, short.stderr)
        XCTAssertTrue(
            short.stderrLines.contains("vmerge: \(t1): dropped: the trimmed part lasts 0.8 s, under the 1 s minimum"),
            short.stderr)
        XCTAssertEqual(try barCodeFrameNumbers(dir.appendingPathComponent("out.mp4").path), (60..<180).map { Optional($0) })
        let inputs = try jsonObject(at: dir.appendingPathComponent("r.json"))["inputs"] as? [[String: Any]] ?? []
        XCTAssertEqual(inputs.map { $0["status"] as? String }, ["dropped-short", "kept"])

        let past = try VMergeBinary.run([t1, "--trim", "7,", s6, "-o", "past.mp4"], in: dir)
        XCTAssertEqual(past.status, 1)
        XCTAssertEqual(past.stderrLines, ["vmerge: \(t1): the trim starts at 7 s, but the video lasts only 6 s"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("past.mp4").path))
        let skipped = try VMergeBinary.run(
            [t1, "--trim", "7,", s6, "--skip-invalid", "--min-duration", "1", "-o", "past.mp4"], in: dir)
        XCTAssertEqual(skipped.status, 0, skipped.stderr)
        XCTAssertTrue(
            skipped.stderrLines.contains("vmerge: \(t1): skipped: the trim starts at 7 s, but the video lasts only 6 s"),
            skipped.stderr)
    }

    /// The dry run says what part of each clip is used; an end past the clip is a note.
    func testTheDryRunShowsEachTrim() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [t1, "--trim", "0:01.5,9", t1, "--trim", "2,3", "--max-duration", "4", "-n", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, run.stdout)
        XCTAssertTrue(lines[0].hasPrefix("keep  \(t1)  6 s, h264 640x480 30 fps"), lines[0])
        XCTAssertTrue(
            lines[0].hasSuffix("; from 1.5 s to 6 s (4.5 s); at 0 s, cut at 5.5 s by --max-duration"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("drop  \(t1)  left out: the output reaches its 4 s maximum"), lines[1])
        XCTAssertTrue(
            run.stderrLines.contains("vmerge: \(t1): the trim ends at 9 s, past the video's end (6 s); it ends there"),
            run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.mp4").path))
    }

    /// A watch job's job.json may trim its inputs too (names inside the job folder).
    func testAWatchJobTrimsFromItsJobJSON() throws {
        let dir = try makeScratchDirectory()
        let job = dir.appendingPathComponent("in/trip")
        try FileManager.default.createDirectory(at: job, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: t1, toPath: job.appendingPathComponent("t.mov").path)
        try #"{"inputs": [{"path": "t.mov", "start": 4, "end": 5.5}, {"path": "t.mov", "end": 1}], "options": {"min-duration": 0.5}}"#
            .write(to: job.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        try Data().write(to: job.appendingPathComponent(".ready"))
        let run = try VMergeBinary.run(["watch", "in", "--out", "out", "--once"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            try barCodeFrameNumbers(dir.appendingPathComponent("out/trip.mp4").path), ((120..<165).map { $0 } + (0..<30).map { $0 }).map { Optional($0) })
    }

    /// A job list's input objects: trims, and titles for the chapters; the trim is part of the
    /// job key, so a re-run skips the job until its trim changes.
    func testJobListInputObjectsTrimAndTitleAndKeyTheJob() throws {
        let dir = try makeScratchDirectory()
        func writeList(end: Double) throws {
            let line = #"{"inputs": [{"path": "\#(t1)", "start": 2, "end": \#(end), "title": "The middle"}, "#
                + #"{"path": "\#(s6)"}], "output": "out.mp4", "options": {"chapters": true, "min-duration": 1}}"#
            try line.write(to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        }
        try writeList(end: 3.5)
        let first = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(first.status, 0, first.stderr)
        let out = dir.appendingPathComponent("out.mp4")
        XCTAssertEqual(try barCodeFrameNumbers(out.path).prefix(45), ArraySlice((60..<105).map { Optional($0) }))
        let probe = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ffprobe", "-v", "error", "-show_chapters", "-of", "csv=p=0", out.path], in: dir)
        XCTAssertEqual(
            probe.stdout.split(separator: "\n").map { $0.split(separator: ",").last.map(String.init) },
            ["The middle", "s6_sync_30fps_noaudio"])

        let again = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertTrue(again.stderr.contains("1 skipped"), again.stderr)
        try writeList(end: 4)
        let changed = try VMergeBinary.run(["batch", "jobs.jsonl", "-y"], in: dir)
        XCTAssertTrue(changed.stderr.contains("1 done"), changed.stderr)
        XCTAssertEqual(try barCodeFrameNumbers(out.path).count, 60 + 44, "2 s of t1, then s6")
    }
}
