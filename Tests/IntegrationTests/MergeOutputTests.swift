import Foundation
import TestSupport
import XCTest

/// Merges every good fixture once and checks the result as a player would see it: geometry,
/// codecs, orientation of every clip, timing, audio length, box order, metadata.
final class MergeOutputTests: XCTestCase {
    struct Merged {
        var directory: URL
        var output: String
        var run: RunResult
        var clipDurations: [Double]  // kept clips, in order
    }

    nonisolated(unsafe) private static var cached: Merged?

    /// The merge of a, b, ..., h, i (too short), j, k, made once for all tests in this class.
    private func merged() throws -> Merged {
        if let cached = Self.cached { return cached }
        let dir = try makeRunScratchDirectory()
        let inputs = ["a_", "b_", "c_", "d_", "e_", "f_", "g_", "h_", "i_", "j_", "k_"].map(Fixtures.path)
        let run = try VMergeBinary.run(inputs + ["-o", "merged.mp4"], in: dir)
        let kept = inputs.filter { !$0.contains("/i_") }
        let result = Merged(
            directory: dir, output: dir.appendingPathComponent("merged.mp4").path, run: run,
            clipDurations: try kept.map(decodedVideoDuration))
        Self.cached = result
        return result
    }

    func testExitsZeroAndNamesTheDroppedClipOnStderr() throws {
        let m = try merged()
        XCTAssertEqual(m.run.status, 0, m.run.stderr)
        let dropped = m.run.stderrLines.filter { $0.contains("i_short") }
        XCTAssertEqual(dropped.count, 1, m.run.stderr)
        XCTAssertTrue(
            dropped[0].hasPrefix("vmerge: ") && dropped[0].contains("1.5 s") && dropped[0].contains("2 s minimum"),
            dropped[0])
        XCTAssertEqual(listing(m.directory), ["merged.mp4"], "no temporary file left behind")
    }

    func testTheSameMergeGivesByteIdenticalOutput() throws {
        // Reproducible output: batch jobs can compare results, and a re-run changes nothing.
        let m = try merged()
        let inputs = ["a_", "b_", "c_", "d_", "e_", "f_", "g_", "h_", "i_", "j_", "k_"].map(Fixtures.path)
        let again = try VMergeBinary.run(inputs + ["-q", "-o", "again.mp4"], in: m.directory)
        XCTAssertEqual(again.status, 0, again.stderr)
        let first = try Data(contentsOf: URL(fileURLWithPath: m.output))
        let second = try Data(contentsOf: m.directory.appendingPathComponent("again.mp4"))
        XCTAssertEqual(first.count, second.count)
        XCTAssertTrue(first == second, "outputs differ")
        try FileManager.default.removeItem(at: m.directory.appendingPathComponent("again.mp4"))
    }

    func testStreamsAreH264And320x240WithAACStereo() throws {
        let s = try MediaInspector(path: merged().output).streams()
        let v = try XCTUnwrap(s.video), a = try XCTUnwrap(s.audio)
        XCTAssertEqual(v.codec, "h264")
        XCTAssertEqual(v.profile, "High")
        XCTAssertEqual(v.width, 320)
        XCTAssertEqual(v.height, 240)
        XCTAssertEqual(v.pixelFormat, "yuv420p")
        XCTAssertEqual(v.sampleAspect.0, v.sampleAspect.1, "square pixels")
        XCTAssertEqual(v.colorSpace, "bt709")
        XCTAssertEqual(v.colorPrimaries, "bt709")
        XCTAssertEqual(v.colorTransfer, "bt709")
        XCTAssertFalse(v.hasDisplayMatrix, "pixels are upright; no rotation matrix on the output")
        XCTAssertEqual(a.codec, "aac")
        XCTAssertEqual(a.profile, "LC")
        XCTAssertEqual(a.sampleRate, 44_100)
        XCTAssertEqual(a.channels, 2)
    }

    func testCreationTimeComesFromTheFirstKeptClip() throws {
        let s = try MediaInspector(path: merged().output).streams()
        XCTAssertEqual(s.creationTime?.prefix(19), "2024-05-01T12:00:01")
    }

    func testMoovComesBeforeMdat() throws {
        let boxes = try topLevelBoxes(merged().output)
        let moov = try XCTUnwrap(boxes.firstIndex(of: "moov")), mdat = try XCTUnwrap(boxes.firstIndex(of: "mdat"))
        XCTAssertLessThan(moov, mdat, "\(boxes)")
        XCTAssertEqual(boxes.first, "ftyp")
    }

    func testAudioAndVideoAreInterleavedOnDisk() throws {
        // A progressive download must not wait for one stream while the other races ahead.
        var lastVideo = 0.0, lastAudio = 0.0, worst = 0.0
        for packet in try MediaInspector(path: merged().output).packetLayout() {
            if packet.isVideo { lastVideo = packet.time } else { lastAudio = packet.time }
            worst = max(worst, abs(lastVideo - lastAudio))
        }
        XCTAssertLessThan(worst, 1.5, "streams drift apart on disk by up to \(worst) s")
        XCTAssertGreaterThan(lastVideo, 20)
        XCTAssertGreaterThan(lastAudio, 20)
    }

    func testEveryClipIsUprightUnmirroredAndCroppedWhateverItsMatrix() throws {
        let m = try merged()
        var starts: [Double] = []
        var t = 0.0
        for d in m.clipDurations {
            starts.append(t)
            t += d
        }
        let names = [
            "a none", "b rot90 1080p", "c rot180", "d rot270 638x478", "e hflip", "f vflip hevc",
            "g transpose", "h antitranspose", "j audio offset", "k yuvj422",
        ]
        let middles = zip(starts, m.clipDurations).map { $0 + $1 / 2 }
        let grabs = try MediaInspector(path: m.output).videoFrames(grabTimes: middles).grabs
        for (name, image) in zip(names, grabs) {
            XCTAssertEqual(image.colour(45, 45), "red", "\(name): top-left")
            XCTAssertEqual(image.colour(275, 45), "green", "\(name): top-right")
            XCTAssertEqual(image.colour(275, 195), "blue", "\(name): bottom-right")
            XCTAssertEqual(image.colour(45, 195), "grey", "\(name): bottom-left")
            // The yellow outside the 4:3 region must be cropped away.
            for (x, y) in [(6, 120), (313, 120), (160, 6), (160, 233), (6, 6), (313, 233)] {
                XCTAssertEqual(
                    image.colour(x, y), "grey", "\(name): edge (\(x),\(y)) should be grey, not cropped wrong")
            }
        }
    }

    func testVideoTimingIsContinuousAndMatchesTheSumOfClips() throws {
        let m = try merged()
        let times = try MediaInspector(path: m.output).videoFrames().times.sorted()
        let total = m.clipDurations.reduce(0, +)
        XCTAssertEqual(Double(times.count), (total * 30).rounded(), accuracy: 1, "frames for \(total) s at 30 fps")
        XCTAssertEqual(times.first ?? -1, 0, accuracy: 1e-6)
        for (a, b) in zip(times, times.dropFirst()) {
            XCTAssertEqual(b - a, 1.0 / 30, accuracy: 1e-3, "constant frame rate, no gap or repeat at \(a)")
        }
        XCTAssertEqual((times.last ?? 0) + 1.0 / 30, total, accuracy: 1.0 / 30, "duration within one frame")
    }

    func testAudioLengthMatchesVideoLength() throws {
        let m = try merged()
        let audio = try MediaInspector(path: m.output).audioSamples()
        let total = m.clipDurations.reduce(0, +)
        XCTAssertEqual(audio.sampleRate, 44_100)
        XCTAssertEqual(audio.startTime, 0, accuracy: 1e-6)
        XCTAssertEqual(
            Double(audio.samples.count), total * 44_100, accuracy: 1024,
            "audio within one AAC frame of the video's length")
    }
}

/// Issue 12, point 2: the crop window is exactly centred, odd offsets included, so nothing from
/// outside it (the fixtures' yellow border) reaches the outer rows and columns of the picture.
final class ExactCropTests: XCTestCase {
    func testNoOutsideColumnOrRowReachesTheEdges() throws {
        for fixture in ["b_", "g_", "d_"] {
            let dir = try makeScratchDirectory()
            let run = try VMergeBinary.run([Fixtures.path(fixture), "--min-duration", "0", "-o", "out.mp4"], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
            // The decoded luma plane of the frame at 1 s (the ffmpeg CLI as an outside decoder).
            let gray = try runProgram(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["ffmpeg", "-v", "error", "-ss", "1", "-i", "out.mp4", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt",
                 "gray", "-y", "y.raw"], in: dir)
            XCTAssertEqual(gray.status, 0, gray.stderr)
            let luma = [UInt8](try Data(contentsOf: dir.appendingPathComponent("y.raw")))
            let (width, height) = (320, 240)
            XCTAssertEqual(luma.count, width * height)
            // Every pixel of the outermost rows and columns has grey's brightness (limited range:
            // 126 for RGB 128): a stray line of the yellow border (luma 210) would brighten it.
            // The fixtures' own coding rings up to 141 just inside their border (the source itself),
            // hence 20; one outside column in the window measured 39 (b) and 95 (g) here. Colour
            // may bleed a little more: a 4:2:0 source shares each chroma sample between two
            // columns, so the one on the window's edge is half outside in the source itself.
            var edge: [Int] = []
            for x in 0..<width { edge += [x, (height - 1) * width + x] }
            for y in 0..<height { edge += [y * width, y * width + width - 1] }
            let worst = edge.map { abs(Int(luma[$0]) - 126) }.max() ?? 0
            XCTAssertLessThan(worst, 20, "\(fixture): an outside line reaches the edge (luma off by \(worst))")
        }
    }
}
