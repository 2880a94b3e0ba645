import Foundation
import XCTest

@testable import VMergeCore

/// Numbers from the command line, job files and media files must never make vmerge trap
/// (issue 11): each case here crashed the test process before the fix.
final class NumericSafetyTests: XCTestCase {
    func testSaturatingArithmetic() {
        XCTAssertEqual(Int64.max.addingSaturating(1), .max)
        XCTAssertEqual(Int64.min.addingSaturating(-1), .min)
        XCTAssertEqual(Int64(5).addingSaturating(-7), -2)
        XCTAssertEqual(Int64.min.subtractingSaturating(1), .min)
        XCTAssertEqual(Int64.max.subtractingSaturating(-1), .max)
        XCTAssertEqual(Int64(0).subtractingSaturating(.min), .max)
        XCTAssertEqual(Int64(5).subtractingSaturating(7), -2)
        XCTAssertEqual(Int64.max.multipliedSaturating(by: 2), .max)
        XCTAssertEqual(Int64.max.multipliedSaturating(by: -2), .min)
        XCTAssertEqual(Int64.min.multipliedSaturating(by: -1), .max)
        XCTAssertEqual(Int64(-6).multipliedSaturating(by: 7), -42)
        XCTAssertEqual(UInt64(1).subtractingSaturating(2), 0)
        XCTAssertEqual(UInt64.max.addingSaturating(1), .max)
    }

    func testSaturatingFromDouble() {
        XCTAssertEqual(Int64(saturating: 1e300), .max)
        XCTAssertEqual(Int64(saturating: -1e300), .min)
        XCTAssertEqual(Int64(saturating: .infinity), .max)
        XCTAssertEqual(Int64(saturating: -.infinity), .min)
        XCTAssertEqual(Int64(saturating: .nan), 0)
        XCTAssertEqual(Int64(saturating: 9_223_372_036_854_775_807.0), .max)  // 2^63 as a Double
        XCTAssertEqual(Int64(saturating: -9_223_372_036_854_775_808.0), .min)
        XCTAssertEqual(Int64(saturating: 2.9), 2)  // toward zero, as Int64(_:) does
        XCTAssertEqual(Int64(saturating: -2.9), -2)
        XCTAssertEqual(Int32(saturating: 3e9), .max)
        XCTAssertEqual(Int(saturating: 12_345.0), 12_345)
    }

    func testRescaled() {
        XCTAssertEqual(rescaled(5, by: 1, over: 2), 3)
        XCTAssertEqual(rescaled(-5, by: 1, over: 2), -3)
        XCTAssertEqual(rescaled(1, by: 1, over: 3), 0)
        XCTAssertEqual(rescaled(-2, by: 1, over: 3), -1)
        XCTAssertEqual(rescaled(5, by: -1, over: 2), -3)
        XCTAssertEqual(rescaled(5, by: 1, over: -2), -3)
        XCTAssertEqual(rescaled(0, by: 7, over: 0), 0)
        XCTAssertEqual(rescaled(1, by: 1, over: 0), .max)
        XCTAssertEqual(rescaled(-1, by: 1, over: 0), .min)
        // The product is past Int64, the quotient is not.
        XCTAssertEqual(rescaled(.max, by: .max, over: .max), .max)
        XCTAssertEqual(rescaled(.min, by: .max, over: .max), .min)
        XCTAssertEqual(rescaled(10_000_000_000_000, by: 2_147_483_647, over: 89_478_485_000_000), 240_000_001)
        // The quotient is past Int64.
        XCTAssertEqual(rescaled(.max, by: 2, over: 1), .max)
        XCTAssertEqual(rescaled(.min, by: 2, over: 1), .min)
        XCTAssertEqual(rescaled(.min, by: 1, over: 1), .min)
        XCTAssertEqual(rescaled(.min, by: -1, over: 1), .max)
        XCTAssertEqual(roundedDivide(.max, 1), .max)
        XCTAssertEqual(roundedDivide(.max, 2), 4_611_686_018_427_387_904)
        XCTAssertEqual(roundedDivide(.min, 2), -4_611_686_018_427_387_904)
    }

    func testTimelineWithWideRates() {
        // About 24 fps, irreducible, within Int32: ten million seconds used to overflow.
        let t = Timeline(frameRate: Rational(2_147_483_647, 89_478_485), sampleRate: 44100)
        let micros: Int64 = 10_000_000 * 1_000_000
        let frames = t.frameIndex(atMicros: micros)
        XCTAssertEqual(frames, 240_000_001)  // checked with Python's integers
        XCTAssertEqual(t.micros(ofFrame: frames), 10_000_000_009_070)
        // Far past any sane value: pinned, not trapped.
        let wild = Timeline(frameRate: Rational(Int.max, 1), sampleRate: Int.max)
        XCTAssertEqual(wild.frameIndex(atMicros: .max), .max)
        XCTAssertEqual(wild.frameIndex(atMicros: .min), .min)
        XCTAssertEqual(wild.sampleIndex(atMicros: .max), .max)
        let slow = Timeline(frameRate: Rational(1, Int.max), sampleRate: 44100)
        XCTAssertEqual(slow.micros(ofFrame: 2), .max)
        XCTAssertEqual(slow.frameIndex(atMicros: 1_000_000), 0)
        XCTAssertEqual(Timeline(frameRate: Rational(0, 1), sampleRate: 0).micros(ofFrame: 1), .max)
        // Sane rates are exactly what they were.
        let ntsc = Timeline(frameRate: Rational(30000, 1001), sampleRate: 48000)
        XCTAssertEqual(ntsc.frameIndex(atMicros: 1_001_000_000), 30000)
        XCTAssertEqual(ntsc.micros(ofFrame: 30000), 1_001_000_000)
        XCTAssertEqual(ntsc.sampleIndex(atMicros: 1_000_000), 48000)
    }

    func testAudioPlacementWithWildTimestamps() {
        // A block stamped at the far ends of Int64 (av_rescale_q's overflow value is Int64.min).
        XCTAssertEqual(
            AudioPlacement.place(start: .min, count: 1024, written: 1000, end: 5000, tolerance: 32),
            AudioPlacement(dropFront: 1024, silenceBefore: 0, keep: 0))
        XCTAssertEqual(
            AudioPlacement.place(start: .max, count: 1024, written: 1000, end: 5000, tolerance: 32),
            AudioPlacement(dropFront: 0, silenceBefore: 4000, keep: 0))
        XCTAssertEqual(
            AudioPlacement.place(start: .max, count: 1024, written: -5, end: .max, tolerance: 32).keep, 5)
        XCTAssertEqual(
            AudioPlacement.place(start: 0, count: 1024, written: .min, end: .max, tolerance: 32).silenceBefore, .max)
    }

    func testOutputSizeAndCropWithAbsurdAspects() {
        XCTAssertEqual(outputSize(width: 320, aspect: Rational(4, 3)).height, 240)
        XCTAssertEqual(outputSize(width: 320, aspect: Rational(1, Int.max)).height, Int.max / 2 * 2)
        XCTAssertEqual(outputSize(width: 320, aspect: Rational(0, 1)).height, Int.max / 2 * 2)  // infinite
        XCTAssertEqual(outputSize(width: 320, aspect: Rational(0, 0)).height, 2)  // NaN
        let crop = centreCrop(
            codedWidth: 640, codedHeight: 480, sampleAspect: Rational(1, 1), orientation: .identity,
            aspect: Rational(0, 1))
        XCTAssertEqual(crop.height, 480)
        let crop2 = centreCrop(
            codedWidth: 640, codedHeight: 480, sampleAspect: Rational(1, 1), orientation: .identity,
            aspect: Rational(Int.max, 1))
        XCTAssertEqual(crop2.width, 640)
    }

    func testFreeSpaceEstimateIsBounded() {
        var options = MergeOptions()
        options.width = 7680
        options.aspect = Rational(1, 10)
        options.frameRate = Rational(240, 1)
        options.quality = .high
        XCTAssertEqual(FreeSpace.estimatedOutputBytes(durationMicros: .max, options: options), .max)
        options.aspect = Rational(1, Int.max)
        XCTAssertEqual(FreeSpace.estimatedOutputBytes(durationMicros: 1_000_000, options: options), .max)
        XCTAssertEqual(FreeSpace.estimatedOutputBytes(durationMicros: 0, options: MergeOptions()), 0)
    }

    func testModificationNanosFarFuture() throws {
        XCTAssertEqual(modificationNanos(seconds: 1_700_000_000, nanoseconds: 5), 1_700_000_000_000_000_005)
        XCTAssertEqual(modificationNanos(seconds: 32_503_680_000, nanoseconds: 0), .max)  // the year 3000
        XCTAssertEqual(modificationNanos(seconds: -32_503_680_000, nanoseconds: 0), .min)
        XCTAssertEqual(modificationNanos(seconds: .max, nanoseconds: 999_999_999), .max)
        // A file really stamped in the year 3000 (as `touch -d 3000-01-01` does).
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-mtime-\(getpid())").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data([1])))
        defer { unlink(path) }
        var times = [timespec(tv_sec: 32_503_680_000, tv_nsec: 0), timespec(tv_sec: 32_503_680_000, tv_nsec: 0)]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else {
            throw XCTSkip("this file system refuses year-3000 modification times")
        }
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        XCTAssertEqual(modificationNanos(info), .max)
    }

    func testMP4LayoutHugeBoxSize() throws {
        // ftyp, then a box claiming a 64-bit size of 2^64 - 1 bytes, then one more header.
        var bytes: [UInt8] = [0, 0, 0, 16] + Array("ftypisom".utf8) + [0, 0, 0, 0]
        bytes += [0, 0, 0, 1] + Array("mdat".utf8) + [UInt8](repeating: 0xFF, count: 8)
        bytes += [0, 0, 0, 8] + Array("free".utf8)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-box-\(getpid()).mov").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        defer { unlink(path) }
        XCTAssertEqual(MP4Layout.topLevelBoxes(path), ["ftyp", "mdat"])
        // One that wraps offset exactly to 0 must not loop either.
        var wrap: [UInt8] = [0, 0, 0, 16] + Array("ftypisom".utf8) + [0, 0, 0, 0]
        wrap += [0, 0, 0, 1] + Array("mdat".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0]
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(wrap)))
        XCTAssertEqual(MP4Layout.topLevelBoxes(path), ["ftyp", "mdat"])
    }

    func testSizeBudgetBoundSaturates() {
        let budget = SizeBudget(limit: .max)
        XCTAssertEqual(budget.bound(payload: .max - 10, videoPackets: 1, keyframes: 1, audioPackets: 1), .max)
        XCTAssertEqual(budget.bound(payload: 0, videoPackets: .max, keyframes: 0, audioPackets: 0), .max)
        XCTAssertEqual(
            SizeBudget(limit: 1 << 20).bound(payload: 1000, videoPackets: 10, keyframes: 1, audioPackets: 10),
            4096 + 1000 + 280 + 4 + 200)
    }

    func testLimitsRefuseAbsurdClips() {
        var clip = makeClip("a.mov", micros: 2_000_000)
        XCTAssertNil(Limits.problem(with: clip, maxPixels: Limits.defaultMaxPixels))
        clip.video.width = Int.max
        clip.video.height = 4
        XCTAssertNotNil(Limits.problem(with: clip, maxPixels: .max))  // width * height overflows
        clip = makeClip("a.mov", micros: 2_000_000)
        clip.audio?.sampleRate = Int(Int32.max)
        XCTAssertEqual(
            Limits.problem(with: clip, maxPixels: Limits.defaultMaxPixels),
            "audio claims 2147483647 samples per second; more than 1000000 is a damaged header")
        clip = makeClip("a.mov", micros: 2_000_000)
        clip.audio?.channels = 10_000
        XCTAssertEqual(
            Limits.problem(with: clip, maxPixels: Limits.defaultMaxPixels),
            "audio claims 10000 channels; more than 512 is a damaged header")
        clip.audio = AudioInfo(streamIndex: 1, codec: "pcm_s24le", sampleRate: 384_000, channels: 64)
        XCTAssertNil(Limits.problem(with: clip, maxPixels: Limits.defaultMaxPixels))
    }

    func testPlanStartsSaturate() {
        var options = MergeOptions()
        options.minDuration = 0
        let plan = MergePlan(
            clips: [makeClip("a.mov", micros: .max - 5), makeClip("b.mov", micros: 1_000_000)], options: options)
        // Starts are snapped to the frame grid: the frame nearest the saturated sums, no trap. b's
        // end saturates at .max, which may round to b's own start: then it takes no frame and is
        // dropped as such, never planned as an empty slot.
        XCTAssertEqual(plan.clips.first?.endMicros, plan.timeline.onFrameGrid(.max - 5))
        XCTAssertEqual(plan.durationMicros, plan.timeline.onFrameGrid(.max))
        XCTAssertGreaterThan(plan.durationMicros, .max - 33_334)
        XCTAssertTrue(plan.clips.allSatisfy { $0.endMicros > $0.startMicros })
        XCTAssertEqual(plan.clips.count + plan.dropped.count, 2)
        _ = plan.outputDurationMicros
    }
}
