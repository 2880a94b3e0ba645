import Foundation
import TestSupport
import XCTest

/// `--rendition`: several pictures of one merge, decoded once, published as one set. Each file is
/// checked on what it holds: its size, its frames on the same grid as the others, the very same
/// sound, its index first, and its picture against a reference ffmpeg makes from the source
/// (turned upright by ffmpeg's own display-matrix handling, cut to the rendition's aspect, scaled).
final class RenditionMergeTests: XCTestCase {
    /// The files of a run with the job's own picture and two renditions, and its report.
    func testThreeFilesFromOneDecodeAreOneSet() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [
                Fixtures.path("a_"), Fixtures.path("b_"), Fixtures.path("h_"), "-o", "trip.mp4", "--rendition",
                "360x640",
                "--rendition", "240x240:fit=blur:crf=30=square.mp4", "--report", "r.json", "-q",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(),
            ["r.json", "square.mp4", "trip-360x640.mp4", "trip.mp4"], "the set and nothing else")
        // (The presets' sizes: the README's line, below.)
        let files = [("trip.mp4", 320, 240), ("trip-360x640.mp4", 360, 640), ("square.mp4", 240, 240)]
        var frameTimes: [[Double]] = []
        var sounds: [[Float]] = []
        for (name, width, height) in files {
            let path = dir.appendingPathComponent(name).path
            let inspector = MediaInspector(path: path)
            let streams = try inspector.streams()
            XCTAssertEqual(streams.video?.width, width, name)
            XCTAssertEqual(streams.video?.height, height, name)
            let boxes = try topLevelBoxes(path)
            XCTAssertLessThan(
                try XCTUnwrap(boxes.firstIndex(of: "moov")), try XCTUnwrap(boxes.firstIndex(of: "mdat")),
                "\(name): faststart")
            frameTimes.append(try inspector.packetLayout().filter(\.isVideo).map(\.time).sorted())
            sounds.append(try inspector.audioSamples().samples)
        }
        // One timeline: 3 + 2.5 + 2.2 s at 30 fps in every file, and the sound encoded once.
        XCTAssertEqual(frameTimes[0].count, 231)
        XCTAssertEqual(frameTimes[1], frameTimes[0])
        XCTAssertEqual(frameTimes[2], frameTimes[0])
        XCTAssertEqual(sounds[1], sounds[0])
        XCTAssertEqual(sounds[2], sounds[0])

        let report = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json"))) as? [String: Any]
        )
        let outputs = try XCTUnwrap(report["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["rendition"] as? String }, [nil, "360x640", "240x240"])
        XCTAssertEqual(outputs.map { $0["fit"] as? String }, ["crop", "crop", "blur"])
        XCTAssertEqual(outputs.map { $0["crf"] as? Double }, [23, 23, 30])
        for (entry, (name, width, height)) in zip(outputs, files) {
            let path = dir.appendingPathComponent(name).path
            XCTAssertEqual(entry["path"] as? String, name)
            XCTAssertEqual(
                entry["bytes"] as? Int, try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            XCTAssertEqual(entry["video_frames"] as? Int, 231)
            XCTAssertEqual([entry["width"] as? Int, entry["height"] as? Int], [width, height])
            XCTAssertEqual(entry["faststart"] as? Bool, true)
        }
    }

    /// A portrait clip fills a 9:16 rendition whole and is cut for 4:3 and 1:1; a landscape
    /// clip's 9:16 picture is the centre of its whole picture. Each against ffmpeg's own
    /// upright picture of the source, cut exactly to the centred window of the rendition's aspect
    /// and scaled: closer to it than to the window 4% smaller (a picture cut from another
    /// window, or from the 4:3 one, is further from it still).
    func testEachRenditionIsItsOwnAspectsCentreOfTheUprightPicture() throws {
        let dir = try makeScratchDirectory()
        // Per rendition, the centred window of the upright picture: width, height, x, y.
        let clips: [(fixture: String, windows: [String: [Int]])] = [
            (
                "b_",
                ["320x240": [1080, 810, 0, 555], "360x640": [1080, 1920, 0, 0], "360x360": [1080, 1080, 0, 420]]
            ),
            ("a_", ["320x240": [640, 480, 0, 0], "360x640": [270, 480, 185, 0], "360x360": [480, 480, 80, 0]]),
        ]
        for (fixture, windows) in clips {
            let run = try VMergeBinary.run(
                [
                    Fixtures.path(fixture), "-o", "\(fixture)own.mp4", "--rendition", "360x640=\(fixture)tall.mp4",
                    "--rendition", "360x360=\(fixture)square.mp4", "--crf", "12", "-q",
                ], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
            for (file, size) in [("own", "320x240"), ("tall", "360x640"), ("square", "360x360")] {
                let scale = "scale=" + size.replacingOccurrences(of: "x", with: ":") + ":flags=bicubic"
                let window = try XCTUnwrap(windows[size])
                let smaller = [window[0] * 24 / 25 & ~1, window[1] * 24 / 25 & ~1]
                let other =
                    smaller + [window[2] + (window[0] - smaller[0]) / 2, window[3] + (window[1] - smaller[1]) / 2]
                let crop = { (w: [Int]) in "crop=\(w[0]):\(w[1]):\(w[2]):\(w[3]):exact=1," + scale }
                let right = try lumaPSNR(
                    "\(fixture)\(file).mp4", against: Fixtures.path(fixture), reference: crop(window), in: dir)
                let wrong = try lumaPSNR(
                    "\(fixture)\(file).mp4", against: Fixtures.path(fixture), reference: crop(other), in: dir)
                XCTAssertGreaterThan(right, 29, "\(fixture) as \(size)")
                XCTAssertGreaterThan(right, wrong + 2, "\(fixture) as \(size): not the centre of the upright picture")
            }
        }
    }

    /// Mean luma PSNR of `file` against the source `source` through `reference` (ffmpeg turns the
    /// source upright first, as it plays it), frame by frame.
    private func lumaPSNR(_ file: String, against source: String, reference: String, in dir: URL) throws -> Double {
        try ffmpegPSNR(
            file, source, in: dir,
            graph: "[1:v]\(reference),format=yuv420p[ref];[0:v]format=yuv420p[got];[got][ref]psnr"
        ).y
    }

    /// The dry run lists each rendition's window of each clip, its file and its estimate; the
    /// report has them with written false.
    func testTheDryRunShowsEachRenditionsCropAndEstimate() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [
                Fixtures.path("a_"), Fixtures.path("b_"), "-o", "trip.mp4", "--rendition", "9x16-1080", "--rendition",
                "1x1-720=sq.mp4", "-n",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(
            lines[0].contains("crop 640x480+0+0, 9x16-1080 crop 270x480+185+0, 1x1-720 crop 480x480+80+0"), lines[0])
        // b is coded 1920x1080 and turned: its 9:16 window is the whole coded picture.
        XCTAssertTrue(
            lines[1].contains("crop 810x1080+555+0, 9x16-1080 crop 1920x1080+0+0, 1x1-720 crop 1080x1080+420+0"),
            lines[1])
        XCTAssertTrue(
            lines[3].hasPrefix("rendition  trip-9x16-1080.mp4  9x16-1080: 1080x1920, fit crop, crf 23, at most about "),
            lines[3])
        XCTAssertTrue(lines[4].hasPrefix("rendition  sq.mp4  1x1-720: 720x720"), lines[4])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])

        let report = try VMergeBinary.run(
            [Fixtures.path("a_"), "-o", "trip.mp4", "--rendition", "16x9-720", "-n", "--report", "-"], in: dir)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let outputs = try XCTUnwrap(json["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["path"] as? String }, ["trip.mp4", "trip-16x9-720.mp4"])
        XCTAssertEqual(outputs.map { $0["written"] as? Bool }, [false, false])
        XCTAssertGreaterThan(
            outputs[1]["estimated_bytes"] as? Int ?? 0, 4 * (outputs[0]["estimated_bytes"] as? Int ?? 0))
    }

    /// What is not a rendition is a usage error naming it; a rendition never takes the place of
    /// another file of the job, nor of a file that is not this job's (and then nothing is written).
    func testARenditionNeverTakesAnotherFilesPlace() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        let cases: [([String], Int32, String)] = [
            (
                ["--rendition", "9x16"], 2,
                "'--rendition 9x16': each side is even (4:2:0 pictures); the preset is 9x16-1080"
            ),
            (["--rendition", "4x3-480:crf=60"], 2, "crf is a number from 0 to 51"),
            (["--rendition", "4x3-480=../x.mp4"], 2, "its file is a name in the output's folder"),
            (["--rendition", "4x3-480:crf=0x10"], 2, "crf is a number from 0 to 51"),
            (["--rendition", "4x3-480:crf=20:crf=30"], 2, "crf is given twice"),
            (["--rendition", "16384x16384"], 2, "a picture is at most 8192x8192's pixels"),
            (
                ["--rendition", "4x3-480=trip.mp4"], 2,
                "trip.mp4: the 4x3-480 rendition would take the place of the output"
            ),
            (
                ["--rendition", "4x3-240", "--rendition", "4x3-240"], 2,
                "trip-4x3-240.mp4: the 4x3-240 rendition would take the place of the 4x3-240 rendition"
            ),
            (
                ["--rendition", "4x3-480=r.json", "--report", "r.json"], 2,
                "its file's name: vmerge writes MP4 or QuickTime files"
            ),
            (
                ["--rendition", "4x3-480=t.mp4", "--report", "t.mp4"], 2,
                "t.mp4: the 4x3-480 rendition would take the place of the report"
            ),
            (["--rendition", "4x3-480=x.jpg"], 2, "its file's name: vmerge writes MP4 or QuickTime files"),
        ]
        for (extra, status, message) in cases {
            let run = try VMergeBinary.run([a, "-o", "trip.mp4", "-q"] + extra, in: dir)
            XCTAssertEqual(run.status, status, "\(extra): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(message), "\(extra): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        }
        try Data("someone's".utf8).write(to: dir.appendingPathComponent("trip-4x3-480.mp4"))
        let run = try VMergeBinary.run([a, "-o", "trip.mp4", "--rendition", "4x3-480", "-q"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("trip-4x3-480.mp4: output exists (use -y to overwrite)"), run.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["trip-4x3-480.mp4"])
        XCTAssertEqual(
            try String(contentsOf: dir.appendingPathComponent("trip-4x3-480.mp4"), encoding: .utf8), "someone's")
    }

    /// A job that differs only in its output never takes another job's rendition for its own;
    /// --max-size too small for a rendition fails the job naming that file, and nothing is published.
    func testARenditionIsItsOwnJobsAndTooSmallALimitPublishesNothing() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        XCTAssertEqual(
            try VMergeBinary.run([a, "-o", "o.mp4", "--rendition", "4x3-240=shared.mp4", "-q"], in: dir).status, 0)
        let other = try VMergeBinary.run([a, "-o", "p.mp4", "--rendition", "4x3-240=shared.mp4", "-q"], in: dir)
        XCTAssertEqual(other.status, 1, other.stderr)
        XCTAssertTrue(other.stderr.contains("shared.mp4: output exists"), other.stderr)
        let small = try VMergeBinary.run(
            [a, "-o", "q.mp4", "--rendition", "4096x4096:crf=0", "--max-size", "16K", "-q"], in: dir)
        XCTAssertEqual(small.status, 1, small.stderr)
        XCTAssertEqual(
            small.stderr, "vmerge: q-4096x4096.mp4: --max-size 16 KiB is too small to hold even the first pictures\n")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["o.mp4", "shared.mp4"])
    }

    /// A run killed after its renditions were published but before its video leaves them; the
    /// same job run again takes them as its own and completes the set. Another job does not.
    func testARenditionLeftByAKilledRunIsTheRerunsToReplace() throws {
        let dir = try makeScratchDirectory()
        let job = [Fixtures.path("a_"), "-o", "trip.mp4", "--rendition", "4x3-480", "-q"]
        let killed = try VMergeBinary.run(job, in: dir, environment: ["VMERGE_TEST_KILL_AT": "before-video"])
        XCTAssertEqual(killed.status, SIGKILL, killed.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("trip-4x3-480.mp4").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("trip.mp4").path))
        let other = try VMergeBinary.run(
            [Fixtures.path("e_"), "-o", "other.mp4", "--rendition", "4x3-480=trip-4x3-480.mp4", "-q"], in: dir)
        XCTAssertEqual(other.status, 1, other.stderr)
        XCTAssertTrue(other.stderr.contains("output exists"), other.stderr)
        let again = try VMergeBinary.run(job, in: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix(".") }.sorted(),
            ["trip-4x3-480.mp4", "trip.mp4"])
        XCTAssertEqual(
            try MediaInspector(path: dir.appendingPathComponent("trip-4x3-480.mp4").path).streams().video?.width, 640)
    }

    /// The README's rendition line, word for word, on two of the fixtures: three files, one set.
    func testTheReadmesRenditionLineRunsAsWritten() throws {
        let dir = try makeScratchDirectory()
        let line = try XCTUnwrap(
            try Documentation.section("A first merge").split(separator: "\n").first { $0.contains("--rendition") })
        let words = line.prefix { $0 != "#" }.split(separator: " ").map(String.init)
        XCTAssertEqual(words.prefix(3), ["vmerge", "a.mov", "b.mov"])
        for (fixture, name) in [("a_", "a.mov"), ("b_", "b.mov")] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path(fixture), toPath: dir.appendingPathComponent(name).path)
        }
        let run = try VMergeBinary.run(Array(words.dropFirst()), in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        for (file, width, height) in [
            ("trip.mp4", 320, 240), ("trip-9x16-1080.mp4", 1080, 1920), ("trip-1x1-720.mp4", 720, 720),
        ] {
            let video = try MediaInspector(path: dir.appendingPathComponent(file).path).streams().video
            XCTAssertEqual([video?.width, video?.height], [width, height], file)
        }
    }

    /// A run killed with its files written but not published leaves temporaries; the next run in
    /// that folder takes every dead one away, also those of files it does not make itself.
    func testARerunSweepsAKilledRunsRenditionTemporaries() throws {
        let dir = try makeScratchDirectory()
        let killed = try VMergeBinary.run(
            [Fixtures.path("a_"), "-o", "trip.mp4", "--rendition", "4x3-480", "--rendition", "1x1-720=sq.mp4", "-q"],
            in: dir, environment: ["VMERGE_TEST_KILL_AT": "before-publish"])
        XCTAssertEqual(killed.status, SIGKILL, killed.stderr)
        let hidden = { try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") } }
        XCTAssertEqual(try hidden().count, 3, "the premise: three temporaries")
        let run = try VMergeBinary.run([Fixtures.path("a_"), "-o", "trip.mp4", "-q"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try hidden(), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["trip.mp4"])
    }
}
