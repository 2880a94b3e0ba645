import XCTest

@testable import VMergeCore

final class TimelineTests: XCTestCase {
    /// A picture exactly half a frame from two output frames rounds up, as the fps filter rounds
    /// the timestamp itself; through microseconds it could round down (60 fps into 30 took every
    /// third picture one source frame late).
    func testOutputFramesFromExactTimestamps() {
        let timeline = Timeline(frameRate: Rational(30, 1), sampleRate: 44100)
        let tb = Rational(1, 15360)  // 60 fps: 256 ticks a picture
        XCTAssertEqual((0..<8).map { timeline.frameIndex(ofTicks: Int64($0) * 256, timeBase: tb) }, [0, 1, 1, 2, 2, 3, 3, 4])
        // The same through microseconds: 5/60 s is 83333 us, which rounds down.
        XCTAssertEqual(timeline.frameIndex(atMicros: 83_333), 2)
        XCTAssertEqual(timeline.frameIndex(ofTicks: 5 * 256, timeBase: tb), 3)
        XCTAssertEqual(timeline.frameIndex(ofTicks: -3 * 256, timeBase: tb), -2, "half away from zero below zero too")
    }

    private let ntsc = Timeline(frameRate: Rational(30000, 1001), sampleRate: 44100)

    func testRoundedDivideHalfAwayFromZero() {
        XCTAssertEqual(roundedDivide(5, 2), 3)
        XCTAssertEqual(roundedDivide(-5, 2), -3)
        XCTAssertEqual(roundedDivide(4, 2), 2)
        XCTAssertEqual(roundedDivide(1, 3), 0)
        XCTAssertEqual(roundedDivide(2, 3), 1)
        XCTAssertEqual(roundedDivide(-1, 3), 0)
        XCTAssertEqual(roundedDivide(-2, 3), -1)
        XCTAssertEqual(roundedDivide(0, 7), 0)
        XCTAssertEqual(roundedDivide(7, 1), 7)
    }

    func testFrameIndexRounding() {
        let t = Timeline(frameRate: Rational(25, 1), sampleRate: 44100)  // 40 ms frames
        XCTAssertEqual(t.frameIndex(atMicros: 0), 0)
        XCTAssertEqual(t.frameIndex(atMicros: 19_999), 0)
        XCTAssertEqual(t.frameIndex(atMicros: 20_000), 1)  // exactly half: away from zero
        XCTAssertEqual(t.frameIndex(atMicros: 40_000), 1)
        XCTAssertEqual(t.frameIndex(atMicros: 59_999), 1)
        XCTAssertEqual(t.frameIndex(atMicros: 60_000), 2)
        XCTAssertEqual(t.frameIndex(atMicros: -19_999), 0)
        XCTAssertEqual(t.frameIndex(atMicros: -20_000), -1)
        XCTAssertEqual(t.frameIndex(atMicros: 1_000_000), 25)

        let t30 = Timeline(frameRate: Rational(30, 1), sampleRate: 44100)
        XCTAssertEqual(t30.frameIndex(atMicros: 16_666), 0)
        XCTAssertEqual(t30.frameIndex(atMicros: 16_667), 1)
        XCTAssertEqual(ntsc.frameIndex(atMicros: 1_001_000_000), 30000)
        XCTAssertEqual(ntsc.frameIndex(atMicros: 2_000_000), 60)  // 59.94 -> 60
    }

    func testSampleIndexRounding() {
        let t = Timeline(frameRate: Rational(30, 1), sampleRate: 2000)  // 500 us samples
        XCTAssertEqual(t.sampleIndex(atMicros: 249), 0)
        XCTAssertEqual(t.sampleIndex(atMicros: 250), 1)
        XCTAssertEqual(t.sampleIndex(atMicros: -250), -1)
        XCTAssertEqual(t.sampleIndex(atMicros: 1_000_000), 2000)
        XCTAssertEqual(ntsc.sampleIndex(atMicros: 1_000_000), 44100)
        XCTAssertEqual(ntsc.sampleIndex(atMicros: 11), 0)  // 0.4851
        XCTAssertEqual(ntsc.sampleIndex(atMicros: 12), 1)  // 0.5292
        XCTAssertEqual(ntsc.sampleIndex(atMicros: 2_013_300), 88_787)  // 88786.53
    }

    func testMicrosOfFrame() {
        XCTAssertEqual(ntsc.micros(ofFrame: 0), 0)
        XCTAssertEqual(ntsc.micros(ofFrame: 1), 33_367)  // 33366.67
        XCTAssertEqual(ntsc.micros(ofFrame: 2), 66_733)  // 66733.33
        XCTAssertEqual(ntsc.micros(ofFrame: 3), 100_100)
        XCTAssertEqual(ntsc.micros(ofFrame: 30000), 1_001_000_000)
        let t30 = Timeline(frameRate: Rational(30, 1), sampleRate: 44100)
        XCTAssertEqual(t30.micros(ofFrame: 1), 33_333)
        XCTAssertEqual(t30.micros(ofFrame: 2), 66_667)
        XCTAssertEqual(t30.micros(ofFrame: 30), 1_000_000)
    }

    func testFrameMicrosRoundTrip() {
        for rate in [Rational(30000, 1001), Rational(30, 1), Rational(24000, 1001), Rational(60, 1), Rational(25, 1)] {
            let t = Timeline(frameRate: rate, sampleRate: 44100)
            for i in Int64(0)..<20_000 {
                XCTAssertEqual(t.frameIndex(atMicros: t.micros(ofFrame: i)), i, "\(rate) frame \(i)")
            }
        }
    }

    /// 1000 clips of 2.0133 s end to end: boundaries derived from cumulative micro starts stay
    /// within half a frame / half a sample of the exact position, with no build-up.
    func testNoDriftOverManyClips() {
        let duration: Int64 = 2_013_300
        for rate in [Rational(30000, 1001), Rational(30, 1), Rational(25, 1)] {
            let t = Timeline(frameRate: rate, sampleRate: 44100)
            var start: Int64 = 0
            var worstFrame = 0.0, worstSample = 0.0
            for k in 0...1000 {
                let exactFrames = Double(k) * 2.0133 * Double(rate.num) / Double(rate.den)
                let exactSamples = Double(k) * 2.0133 * 44100
                let frameError = abs(Double(t.frameIndex(atMicros: start)) - exactFrames)
                let sampleError = abs(Double(t.sampleIndex(atMicros: start)) - exactSamples)
                XCTAssertLessThanOrEqual(frameError, 0.5 + 1e-6, "\(rate) clip \(k)")
                XCTAssertLessThanOrEqual(sampleError, 0.5 + 1e-6, "\(rate) clip \(k)")
                worstFrame = max(worstFrame, frameError)
                worstSample = max(worstSample, sampleError)
                start += duration
            }
            XCTAssertEqual(start, 1001 * duration)
            XCTAssertLessThanOrEqual(worstFrame, 0.5 + 1e-6)
            XCTAssertLessThanOrEqual(worstSample, 0.5 + 1e-6)
        }
        // At the end of 1000 clips (2013.3 s): 2013.3 * 30000/1001 = 60338.66 -> 60339 frames;
        // 2013.3 * 44100 = 88786530 samples.
        XCTAssertEqual(ntsc.frameIndex(atMicros: 1000 * duration), 60_339)
        XCTAssertEqual(ntsc.sampleIndex(atMicros: 1000 * duration), 88_786_530)
    }

    /// The same with irregular durations, through MergePlan's starts.
    func testNoDriftThroughMergePlanWithIrregularDurations() {
        var rng = SplitMix(seed: 42)
        var clips: [ClipInfo] = []
        for i in 0..<1000 {
            let micros = 2_000_000 + Int64(rng.next() % 3_000_000)
            clips.append(makeClip("c\(i).mov", micros: micros))
        }
        var options = MergeOptions()
        options.frameRate = Rational(30000, 1001)
        let plan = MergePlan(clips: clips, options: options)
        XCTAssertEqual(plan.clips.count, 1000)
        let t = plan.timeline
        XCTAssertEqual(t.frameRate, Rational(30000, 1001))
        XCTAssertEqual(t.sampleRate, 44100)
        var exactMicros: Int64 = 0
        for (k, planned) in plan.clips.enumerated() {
            // Each start is the output frame nearest to the exact sum of the lengths before it.
            let exactFrame = Double(exactMicros) / 1e6 * 30000 / 1001
            let startFrame = t.frameIndex(atMicros: planned.startMicros)
            XCTAssertEqual(planned.startMicros, t.micros(ofFrame: startFrame), "clip \(k) starts on a frame")
            XCTAssertLessThanOrEqual(abs(Double(startFrame) - exactFrame), 0.5 + 1e-6, "clip \(k)")
            // Its sound starts with that frame, to half a sample (1471.47 samples per frame).
            let frameSample = Double(startFrame) * 1001 / 30000 * 44100
            XCTAssertLessThanOrEqual(
                abs(Double(t.sampleIndex(ofFrame: startFrame)) - frameSample), 0.5 + 1e-6)
            // Each clip's share of frames is within one frame of its duration.
            let frames = t.frameIndex(atMicros: planned.endMicros) - t.frameIndex(atMicros: planned.startMicros)
            XCTAssertLessThanOrEqual(abs(Double(frames) - planned.clip.durationSeconds * 30000 / 1001), 1.0)
            exactMicros += planned.clip.durationMicros
        }
        XCTAssertEqual(plan.durationMicros, t.onFrameGrid(exactMicros))
    }

    // MARK: AudioPlacement

    private func place(
        start: Int64, count: Int = 1024, written: Int64, end: Int64 = 100_000,
        tolerance: Int64 = 0
    ) -> AudioPlacement {
        AudioPlacement.place(start: start, count: count, written: written, end: end, tolerance: tolerance)
    }

    func testContiguous() {
        XCTAssertEqual(place(start: 1000, written: 1000), AudioPlacement(dropFront: 0, silenceBefore: 0, keep: 1024))
        XCTAssertEqual(place(start: 0, written: 0), AudioPlacement(dropFront: 0, silenceBefore: 0, keep: 1024))
    }

    func testGapIsFilledWithSilence() {
        XCTAssertEqual(place(start: 1100, written: 1000), AudioPlacement(dropFront: 0, silenceBefore: 100, keep: 1024))
    }

    func testOverlapIsDropped() {
        XCTAssertEqual(place(start: 900, written: 1000), AudioPlacement(dropFront: 100, silenceBefore: 0, keep: 924))
        // Wholly before what is written: all dropped.
        XCTAssertEqual(
            place(start: 0, count: 500, written: 1000), AudioPlacement(dropFront: 500, silenceBefore: 0, keep: 0))
        XCTAssertEqual(
            place(start: 0, count: 1000, written: 1000), AudioPlacement(dropFront: 1000, silenceBefore: 0, keep: 0))
    }

    func testBlockCrossingEndIsTruncated() {
        XCTAssertEqual(
            place(start: 1000, written: 1000, end: 1500), AudioPlacement(dropFront: 0, silenceBefore: 0, keep: 500))
        XCTAssertEqual(
            place(start: 1100, written: 1000, end: 1500), AudioPlacement(dropFront: 0, silenceBefore: 100, keep: 400))
        XCTAssertEqual(
            place(start: 900, written: 1000, end: 1500), AudioPlacement(dropFront: 100, silenceBefore: 0, keep: 500))
        XCTAssertEqual(
            place(start: 1000, written: 1000, end: 2024), AudioPlacement(dropFront: 0, silenceBefore: 0, keep: 1024))
    }

    func testBlockPastEndKeepsNothing() {
        XCTAssertEqual(
            place(start: 1500, written: 1500, end: 1500), AudioPlacement(dropFront: 0, silenceBefore: 0, keep: 0))
        XCTAssertEqual(
            place(start: 1600, written: 1500, end: 1500), AudioPlacement(dropFront: 0, silenceBefore: 0, keep: 0))
        // Gap that reaches past the end: silence only up to the end.
        XCTAssertEqual(
            place(start: 2000, written: 1000, end: 1500), AudioPlacement(dropFront: 0, silenceBefore: 500, keep: 0))
    }

    func testToleranceAbsorbsJitter() {
        for start: Int64 in [998, 999, 1001, 1002] {
            XCTAssertEqual(
                place(start: start, written: 1000, tolerance: 2),
                AudioPlacement(dropFront: 0, silenceBefore: 0, keep: 1024), "start \(start)")
        }
        XCTAssertEqual(
            place(start: 1003, written: 1000, tolerance: 2), AudioPlacement(dropFront: 0, silenceBefore: 3, keep: 1024))
        XCTAssertEqual(
            place(start: 997, written: 1000, tolerance: 2), AudioPlacement(dropFront: 3, silenceBefore: 0, keep: 1021))
        // Jitter does not let a contiguous block past the end.
        XCTAssertEqual(
            place(start: 998, written: 1000, end: 1500, tolerance: 2),
            AudioPlacement(dropFront: 0, silenceBefore: 0, keep: 500))
    }

    func testZeroToleranceIsExact() {
        XCTAssertEqual(place(start: 1001, written: 1000), AudioPlacement(dropFront: 0, silenceBefore: 1, keep: 1024))
        XCTAssertEqual(place(start: 999, written: 1000), AudioPlacement(dropFront: 1, silenceBefore: 0, keep: 1023))
    }

    /// Feeding a clip's blocks one after another writes exactly up to `end`, never past it.
    func testSequenceOfBlocksFillsExactlyToEnd() {
        var rng = SplitMix(seed: 7)
        for _ in 0..<200 {
            let end = Int64(rng.next() % 200_000) + 1
            var written: Int64 = Int64(rng.next() % 1000) % end
            var start: Int64 = written + Int64(rng.next() % 50) - 25
            while start < end + 5000 {
                let count = Int(rng.next() % 2048) + 1
                let p = AudioPlacement.place(start: start, count: count, written: written, end: end, tolerance: 3)
                XCTAssertGreaterThanOrEqual(p.dropFront, 0)
                XCTAssertGreaterThanOrEqual(p.silenceBefore, 0)
                XCTAssertGreaterThanOrEqual(p.keep, 0)
                XCTAssertLessThanOrEqual(p.dropFront + p.keep, count)
                written += Int64(p.silenceBefore + p.keep)
                XCTAssertLessThanOrEqual(written, end)
                start += Int64(count) + Int64(rng.next() % 7) - 3  // jitter
            }
        }
    }
}

func makeClip(
    _ path: String, micros: Int64, width: Int = 640, height: Int = 480,
    orientation: Orientation = .identity, rate: Rational = Rational(30, 1),
    sar: Rational = Rational(1, 1), audio: Bool = true
) -> ClipInfo {
    ClipInfo(
        path: path, container: "mov,mp4,m4a,3gp,3g2,mj2", durationMicros: micros,
        video: VideoInfo(
            streamIndex: 0, codec: "h264", width: width, height: height, sampleAspect: sar,
            pixelFormat: "yuv420p", frameRate: rate, orientation: orientation),
        audio: audio ? AudioInfo(streamIndex: 1, codec: "aac", sampleRate: 44100, channels: 2) : nil,
        creationTime: nil)
}
