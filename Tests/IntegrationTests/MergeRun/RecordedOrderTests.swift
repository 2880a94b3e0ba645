import Foundation
import TestSupport
import XCTest

/// `--sort recorded`: clips whose names contradict the order they were recorded in are merged by
/// their containers' recording times (clips made here with ffmpeg `-metadata creation_time`), a
/// clip without one last; read back from the output's pictures, the report and the dry run.
final class RecordedOrderTests: MergeRunTestCase {
    /// (name, colour, seconds, creation_time): recorded green (0x00FF00), blue, red; white has no time.
    private static let clips: [(String, String, Double, String?)] = [
        ("clip_a.mov", "red", 3, "2024-05-01T10:00:20Z"),
        ("clip_b.mov", "0x00FF00", 2, "2024-05-01T10:00:00Z"),
        ("clip_c.mov", "blue", 4, "2024-05-01T10:00:10Z"),
        ("clip_d.mov", "white", 2.5, nil),
    ]

    private func makeClips(in dir: URL) throws {
        for (name, colour, seconds, time) in RecordedOrderTests.clips {
            var arguments = [
                "-v", "error", "-y", "-f", "lavfi", "-i", "color=\(colour):s=160x120:r=30:d=\(seconds)",
                "-c:v", "libx264", "-pix_fmt", "yuv420p",
            ]
            arguments += time.map { ["-metadata", "creation_time=\($0)"] } ?? ["-fflags", "+bitexact"]
            try runFFmpeg(arguments + [name], in: dir)
        }
    }

    func testClipsAreMergedInTheOrderTheyWereRecorded() throws {
        let dir = try makeScratchDirectory()
        try makeClips(in: dir)
        let names = RecordedOrderTests.clips.map(\.0)
        let run = try VMergeBinary.run(names + ["--sort", "recorded", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        // The one without a time is said, and goes last.
        XCTAssertTrue(
            run.stderrLines.contains(
                "vmerge: clip_d.mov: its container gives no recording time: placed after the clips that have one, "
                    + "by name (--sort recorded)"), run.stderr)
        let report = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(
            inputs(report).compactMap { $0["path"] as? String },
            ["clip_b.mov", "clip_c.mov", "clip_a.mov", "clip_d.mov"])
        XCTAssertEqual((report["options"] as? [String: Any])?["sort"] as? String, "recorded")
        // Green 0-2 s, blue 2-6 s, red 6-9 s, white 9-11.5 s: the pictures in the middle of each.
        let output = MediaInspector(path: dir.appendingPathComponent("out.mp4").path)
        let colours = try [1.0, 4.0, 7.5, 10.5].map { time -> String in
            let frame = try output.lumaAndRGB(at: time).rgb
            return frame.colour(frame.width / 2, frame.height / 2)
        }
        XCTAssertEqual(colours, ["green", "blue", "red", "white"])
        XCTAssertEqual(try decodedVideoDuration(dir.appendingPathComponent("out.mp4").path), 11.5, accuracy: 0.05)

        // Without --sort the command's order stays.
        let given = try VMergeBinary.run(names + ["-n", "-o", "x.mp4"], in: dir)
        let listed = given.stdout.split(separator: "\n").filter { $0.hasPrefix("keep") }
        XCTAssertEqual(listed.map { String($0.split(separator: " ")[1]) }, names)
        XCTAssertFalse(given.stdout.contains("order"), given.stdout)
    }

    func testTheDryRunSaysTheOrder() throws {
        let dir = try makeScratchDirectory()
        try makeClips(in: dir)
        let run = try VMergeBinary.run(
            RecordedOrderTests.clips.map(\.0) + ["--sort", "recorded", "-n", "-o", "x.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(
            lines.first,
            "order  recorded: by the time each clip was recorded, as its container says, oldest first, then by name")
        XCTAssertEqual(
            lines.dropFirst().prefix(4).map { String($0.split(separator: " ")[1]) },
            ["clip_b.mov", "clip_c.mov", "clip_a.mov", "clip_d.mov"])
        // Each line says the time it was placed by, and the clip without one says so.
        XCTAssertEqual(
            lines.dropFirst().prefix(4).map { $0.components(separatedBy: "; ").last ?? "" },
            [
                "recorded 2024-05-01T10:00:00Z (creation_time)", "recorded 2024-05-01T10:00:10Z (creation_time)",
                "recorded 2024-05-01T10:00:20Z (creation_time)", "no recording time (placed last)",
            ], run.stdout)
    }

    /// A file that is not a video is said once, as what it is: no note about a recording time it
    /// could not have; its dry-run line, like every line, says where the order put it.
    func testAFileThatIsNotAVideoGetsNoNoteAboutItsTime() throws {
        let dir = try makeScratchDirectory()
        try makeClips(in: dir)
        try Data("not a video".utf8).write(to: dir.appendingPathComponent("notes.mov"))
        let run = try VMergeBinary.run(
            ["clip_a.mov", "notes.mov", "--sort", "recorded", "-n", "-o", "x.mp4"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertFalse(run.stderr.contains("recording time"), run.stderr)
        let fail = try XCTUnwrap(run.stdout.split(separator: "\n").first { $0.hasPrefix("fail  notes.mov") })
        XCTAssertTrue(fail.hasSuffix("; no recording time (placed last)"), String(fail))
    }

    /// An iPhone's `com.apple.quicktime.creationdate` (local time with its offset) and the header's
    /// `creation_time`, both to the second: the one with the time zone decides. Here the header
    /// alone would put first.mov first.
    func testTheAppleCreationDateWithItsZoneWinsOverTheHeader() throws {
        let dir = try makeScratchDirectory()
        let clip = ["-v", "error", "-y", "-f", "lavfi", "-i", "color=red:s=160x120:r=30:d=2", "-c:v", "libx264"]
        try runFFmpeg(
            clip + [
                "-movflags", "use_metadata_tags", "-metadata", "creation_time=2024-05-01T09:00:00Z", "-metadata",
                "com.apple.quicktime.creationdate=2024-05-01T12:00:30+0200", "first.mov",
            ], in: dir)
        try runFFmpeg(clip + ["-metadata", "creation_time=2024-05-01T10:00:10Z", "second.mov"], in: dir)
        let run = try VMergeBinary.run(["first.mov", "second.mov", "--sort", "recorded", "-n", "-o", "x.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let kept = run.stdout.split(separator: "\n").filter { $0.hasPrefix("keep") }.map {
            String($0.split(separator: " ")[1])
        }
        XCTAssertEqual(kept, ["second.mov", "first.mov"], run.stdout)
    }
}
