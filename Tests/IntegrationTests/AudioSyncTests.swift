import Foundation
import TestSupport
import XCTest

/// Sound must stay with its pictures at every boundary: a clip without audio is exactly its
/// video's length of silence, and a clip whose audio starts late (edit list) keeps that gap.
final class AudioSyncTests: XCTestCase {
    /// First sample index at or after `from` where a 64-sample window is silent (or loud: the
    /// fixtures' tones peak near 0.09 per channel).
    private func firstIndex(in samples: [Float], from: Int, silent: Bool) -> Int? {
        var i = max(0, from)
        while i + 64 <= samples.count {
            let peak = samples[i..<i + 64].reduce(0) { max($0, abs($1)) }
            if silent ? peak < 0.005 : peak > 0.04 { return i }
            i += 1
        }
        return nil
    }

    func testSilentClipBetweenTwoSoundClipsStartsAndEndsWithItsVideo() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_"), c = Fixtures.path("c_")  // a: 440 Hz tone; c: no audio track
        let run = try VMergeBinary.run([a, c, a, "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let output = dir.appendingPathComponent("out.mp4").path
        let (samples, rate, _) = try MediaInspector(path: output).audioSamples()
        let da = try decodedVideoDuration(a), dc = try decodedVideoDuration(c)

        let silenceStart = try XCTUnwrap(firstIndex(in: samples, from: Int(da * 0.8 * Double(rate)), silent: true))
        let toneAgain = try XCTUnwrap(firstIndex(in: samples, from: silenceStart, silent: false))
        // AAC smears a hard edge over a few hundred samples; 512 samples is 11.6 ms, a third of a frame.
        XCTAssertEqual(Double(silenceStart), da * Double(rate), accuracy: 512, "silence begins where c's video begins")
        XCTAssertEqual(Double(toneAgain), (da + dc) * Double(rate), accuracy: 512, "tone resumes where c's video ends")
        XCTAssertEqual(Double(samples.count), (2 * da + dc) * Double(rate), accuracy: 1024)

        // And the video frames of c sit in the same place: frame count per clip is exact.
        let times = try MediaInspector(path: output).videoFrames().times
        XCTAssertEqual(Double(times.count), ((2 * da + dc) * 30).rounded(), accuracy: 1)
    }

    func testLateStartingAudioKeepsItsOffsetAndIsTrimmedToTheVideo() throws {
        // j: video 2.5 s; its 770 Hz tone starts 0.25 s in (edit list) and runs 3.5 s.
        let dir = try makeScratchDirectory()
        let j = Fixtures.path("j_")
        let run = try VMergeBinary.run([j, "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let (samples, rate, _) = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).audioSamples()
        let toneStart = try XCTUnwrap(firstIndex(in: samples, from: 0, silent: false))
        XCTAssertEqual(
            Double(toneStart), 0.25 * Double(rate), accuracy: 512, "the tone starts 0.25 s in, as in the source")
        XCTAssertEqual(
            Double(samples.count), try decodedVideoDuration(j) * Double(rate), accuracy: 1024,
            "audio longer than the video is cut at the video's end")
    }

    func testManyClipsDoNotDrift() throws {
        // 12 clips of 2.2083 s at 24 fps (not a whole number of 30 fps frames): boundaries are
        // derived from exact clip starts, so the end stays within a frame however many clips.
        let dir = try makeScratchDirectory()
        let c = Fixtures.path("c_"), a = Fixtures.path("a_")
        let inputs = Array(repeating: c, count: 11) + [a]
        let run = try VMergeBinary.run(inputs + ["-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let output = dir.appendingPathComponent("out.mp4").path
        let dc = try decodedVideoDuration(c), da = try decodedVideoDuration(a)
        let (samples, rate, _) = try MediaInspector(path: output).audioSamples()
        let toneStart = try XCTUnwrap(firstIndex(in: samples, from: 0, silent: false))
        XCTAssertEqual(Double(toneStart), 11 * dc * Double(rate), accuracy: 512, "a's sound starts with a's pictures")
        let times = try MediaInspector(path: output).videoFrames().times
        XCTAssertEqual(Double(times.count), ((11 * dc + da) * 30).rounded(), accuracy: 1)
    }
}
