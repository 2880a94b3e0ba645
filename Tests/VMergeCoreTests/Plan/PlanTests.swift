import XCTest

@testable import VMergeCore

final class PlanTests: XCTestCase {
    private func paths(_ plan: MergePlan) -> [String] { plan.clips.map(\.clip.path) }

    /// A trimmed clip counts by its trimmed part: for --min-duration, for its slot, for
    /// --max-duration; a start past its end makes it invalid; an end past it is the end.
    func testTrimmedClipsArePlannedByTheirPart() {
        var options = MergeOptions()
        options.minDuration = 1
        options.maxDuration = 6
        let probes: [InputProbe] = [
            .clip(makeClip("a.mov", micros: 6_000_000)),
            .clip(makeClip("b.mov", micros: 6_000_000)),
            .clip(makeClip("c.mov", micros: 6_000_000)),
            .clip(makeClip("d.mov", micros: 6_000_000)),
            .clip(makeClip("e.mov", micros: 6_000_000)),
        ]
        let edits = [
            InputEdit(startMicros: 1_000_000, endMicros: 1_900_000),  // 0.9 s: too short
            InputEdit(startMicros: 3_370_000, endMicros: 5_200_000, title: "B"),  // 1.83 s
            InputEdit(endMicros: 9_000_000),  // to its end: 6 s, cut by the limit
            InputEdit(startMicros: 6_000_000),  // starts at the end
            .whole,
        ]
        let plan = MergePlan(probes: probes, edits: edits, options: options)
        XCTAssertEqual(plan.inputs.map(\.edit), edits)
        XCTAssertEqual(
            plan.inputs.map(\.disposition),
            [
                .dropped(.tooShort(durationSeconds: 0.9, limitSeconds: 1, trimmed: true)), .kept(0), .kept(1),
                .dropped(.invalid("the trim starts at 6 s, but the video lasts only 6 s")),
                .dropped(.beyondLimit(limitSeconds: 6)),
            ])
        let b = plan.clips[0], c = plan.clips[1]
        XCTAssertEqual([b.trimStartMicros, b.trimEndMicros, b.durationMicros], [3_370_000, 5_200_000, 1_830_000])
        XCTAssertEqual(b.title, "B")
        XCTAssertTrue(b.isTrimmed && b.endsEarly && !b.isCut)
        XCTAssertEqual([b.startMicros, b.endMicros], [0, 1_833_333], "its slot ends on the frame nearest 1.83 s")
        XCTAssertEqual([c.trimStartMicros, c.trimEndMicros, c.durationMicros], [0, 6_000_000, 4_170_000])
        XCTAssertTrue(c.isCut && c.endsEarly && !c.isTrimmed)
        XCTAssertEqual(c.title, "c")
        XCTAssertEqual(
            DropReason.tooShort(durationSeconds: 0.9, limitSeconds: 1, trimmed: true).message,
            "dropped: the trimmed part lasts 0.9 s, under the 1 s minimum")
        XCTAssertTrue(plan.clips[0].audioFilter.hasPrefix("atrim=start=0,"), "sound before the trim cut at the source rate")
        XCTAssertFalse(plan.clips[1].audioFilter.contains("atrim"))
    }

    /// Which source pictures the output shows, as the pipeline places them (the skip decision).
    func testShowsPicture() {
        var options = MergeOptions()
        options.minDuration = 0
        let plan = MergePlan(clips: [makeClip("a.mov", micros: 1_000_000, rate: Rational(240, 1))], options: options)
        guard let clip = plan.clips.first else { return XCTFail("the clip is kept") }
        let timeline = plan.timeline
        let step = 1_000_000 / 240  // about 4167 us; slots are what the exact timestamps round to
        func shows(_ n: Int) -> Bool {
            clip.showsPicture(
                at: Int64(n * step), previous: Int64((n - 1) * step), next: Int64((n + 1) * step),
                slot: Int64((n * 30 + 120) / 240), nextSlot: Int64(((n + 1) * 30 + 120) / 240), on: timeline)
        }
        // 240 -> 30: the last picture rounding to each output frame, 8k+3, and the first at zero.
        XCTAssertEqual((0..<24).filter(shows), [0, 3, 11, 19])
        // Past the end: never; the last one used: always; before zero, only the last before zero.
        XCTAssertFalse(clip.showsPicture(at: 1_000_000, previous: 995_000, next: 1_004_000, slot: 30, nextSlot: 30, on: timeline))
        XCTAssertTrue(clip.showsPicture(at: 998_000, previous: 994_000, next: 1_002_000, slot: 30, nextSlot: 30, on: timeline))
        XCTAssertFalse(clip.showsPicture(at: -8_000, previous: -12_000, next: -4_000, slot: 0, nextSlot: 0, on: timeline))
        XCTAssertTrue(clip.showsPicture(at: -4_000, previous: -8_000, next: 20_000, slot: 0, nextSlot: 1, on: timeline))
        XCTAssertFalse(clip.showsPicture(at: -4_000, previous: -8_000, next: 0, slot: 0, nextSlot: 0, on: timeline))
    }

    func testDropsShortClipsKeepsLimit() {
        let clips = [
            makeClip("a.mov", micros: 1_500_000),
            makeClip("b.mov", micros: 2_000_000),  // exactly the limit: kept
            makeClip("c.mov", micros: 1_999_999),
            makeClip("d.mov", micros: 3_000_000),
        ]
        let plan = MergePlan(clips: clips, options: MergeOptions())
        XCTAssertEqual(paths(plan), ["b.mov", "d.mov"])
        XCTAssertEqual(plan.clips.map(\.startMicros), [0, 2_000_000])
        XCTAssertEqual(plan.clips.map(\.endMicros), [2_000_000, 5_000_000])
        XCTAssertEqual(plan.durationMicros, 5_000_000)
        XCTAssertEqual(plan.dropped.map(\.path), ["a.mov", "c.mov"])
        XCTAssertEqual(
            plan.dropped.map(\.reason),
            [
                .tooShort(durationSeconds: 1.5, limitSeconds: 2.0),
                .tooShort(durationSeconds: 1.999999, limitSeconds: 2.0),
            ])
    }

    func testDeblockingIsSkippedOnlyWhenShrinkingThreefoldOrMore() {
        let plan = MergePlan(
            clips: [
                makeClip("1080p.mov", micros: 3_000_000, width: 1920, height: 1080),  // 1440x1080 -> 320x240: 4.5x
                makeClip("portrait.mov", micros: 3_000_000, width: 1920, height: 1080, orientation: .rotate90),
                makeClip("720p.mov", micros: 3_000_000, width: 1280, height: 720),  // 960x720: exactly 3x
                makeClip("vga.mov", micros: 3_000_000, width: 640, height: 480),  // 2x
            ], options: MergeOptions())
        XCTAssertEqual(plan.clips.map(\.downscale), [4.5, 3.375, 3, 2])  // portrait: 810x1080 -> 240x320
        XCTAssertEqual(plan.clips.map(\.undeblocked), [.unreferenced, .unreferenced, .unreferenced, .none])
    }

    func testFractionalLimit() {
        var options = MergeOptions()
        options.minDuration = 0.5
        let plan = MergePlan(clips: [makeClip("a", micros: 499_999), makeClip("b", micros: 500_000)], options: options)
        XCTAssertEqual(paths(plan), ["b"])
        XCTAssertEqual(plan.dropped.first?.reason, .tooShort(durationSeconds: 0.499999, limitSeconds: 0.5))
    }

    /// A zero minimum keeps every clip that takes a frame; a and b would fill none (they were kept,
    /// and a run of only such clips wrote an MP4 with no streams), so they are dropped saying so.
    func testZeroMinimumKeepsAllThatTakeAFrame() {
        var options = MergeOptions()
        options.minDuration = 0
        let clips = [makeClip("a", micros: 1), makeClip("b", micros: 0), makeClip("c", micros: 1_500_000)]
        let plan = MergePlan(clips: clips, options: options)
        XCTAssertEqual(paths(plan), ["c"])
        XCTAssertEqual(plan.clips.map(\.startMicros), [0])
        XCTAssertEqual(plan.durationMicros, 1_500_000)
        XCTAssertEqual(
            plan.dropped.map(\.reason),
            [
                .noFrame(durationSeconds: 0.000001, frameSeconds: 1.0 / 30),
                .noFrame(durationSeconds: 0, frameSeconds: 1.0 / 30),
            ])
    }

    func testStartsAreCumulative() {
        let durations: [Int64] = [2_000_000, 3_333_333, 2_500_001, 10_000_000, 2_002_000]
        let plan = MergePlan(
            clips: durations.enumerated().map { makeClip("\($0.offset)", micros: $0.element) },
            options: MergeOptions())
        // The exact sums are 0, 2, 5.333333, 7.833334, 17.833334 and 19.835334 s; each start is the
        // 30 fps frame nearest to its sum (frames 0, 60, 160, 235, 535; the end 595).
        XCTAssertEqual(plan.clips.map(\.startMicros), [0, 2_000_000, 5_333_333, 7_833_333, 17_833_333])
        XCTAssertEqual(plan.durationMicros, 19_833_333)
        for (prev, next) in zip(plan.clips, plan.clips.dropFirst()) {
            XCTAssertEqual(prev.endMicros, next.startMicros)
        }
        // Slots differ from the clips' lengths by less than a frame, and the error never builds up.
        XCTAssertEqual(plan.clips.map { $0.endMicros - $0.startMicros }, [2_000_000, 3_333_333, 2_500_000, 10_000_000, 2_000_000])
    }

    func testEmptyPlan() {
        let plan = MergePlan(clips: [], options: MergeOptions())
        XCTAssertTrue(plan.clips.isEmpty)
        XCTAssertEqual(plan.durationMicros, 0)
        let allShort = MergePlan(clips: [makeClip("a", micros: 10)], options: MergeOptions())
        XCTAssertTrue(allShort.clips.isEmpty)
        XCTAssertEqual(allShort.durationMicros, 0)
        XCTAssertEqual(allShort.dropped.count, 1)
    }

    func testInvalidInputsAreListed() {
        let plan = MergePlan(
            clips: [makeClip("short.mov", micros: 100), makeClip("ok.mov", micros: 5_000_000)],
            invalid: [
                (path: "bad.mov", reason: "no video stream"), (path: "gone.mov", reason: "No such file or directory"),
            ],
            options: MergeOptions())
        XCTAssertEqual(paths(plan), ["ok.mov"])
        XCTAssertEqual(plan.dropped.map(\.path), ["bad.mov", "gone.mov", "short.mov"])
        XCTAssertEqual(plan.dropped[0].reason, .invalid("no video stream"))
        XCTAssertEqual(plan.dropped[0].reason.message, "skipped: no video stream")
        XCTAssertEqual(plan.dropped[1].reason.message, "skipped: No such file or directory")
        XCTAssertEqual(plan.dropped[2].reason.message, "dropped: video lasts 0 s, under the 2 s minimum")
    }

    func testDropReasonMessages() {
        XCTAssertEqual(
            DropReason.tooShort(durationSeconds: 1.5, limitSeconds: 2).message,
            "dropped: video lasts 1.5 s, under the 2 s minimum")
        XCTAssertEqual(
            DropReason.tooShort(durationSeconds: 1.467, limitSeconds: 2.5).message,
            "dropped: video lasts 1.467 s, under the 2.5 s minimum")
        XCTAssertEqual(DropReason.invalid("truncated file").message, "skipped: truncated file")
    }

    /// A clip just under the limit must not be reported as lasting the limit itself
    /// ("lasts 2 s, under the 2 s minimum" contradicts itself).
    func testTooShortMessageNeverShowsDurationEqualToLimit() {
        let plan = MergePlan(clips: [makeClip("a.mov", micros: 1_999_700)], options: MergeOptions())
        XCTAssertEqual(plan.dropped.count, 1)
        let message = plan.dropped[0].reason.message
        XCTAssertNotEqual(message, "dropped: video lasts 2 s, under the 2 s minimum")
        XCTAssertFalse(message.hasPrefix("dropped: video lasts 2 s"), message)
    }

    func testFormatSeconds() {
        XCTAssertEqual(formatSeconds(2.5), "2.5")
        XCTAssertEqual(formatSeconds(1.467), "1.467")
        XCTAssertEqual(formatSeconds(2), "2")
        XCTAssertEqual(formatSeconds(2.0), "2")
        XCTAssertEqual(formatSeconds(0), "0")
        XCTAssertEqual(formatSeconds(10), "10")
        XCTAssertEqual(formatSeconds(100), "100")
        XCTAssertEqual(formatSeconds(0.1), "0.1")
        XCTAssertEqual(formatSeconds(0.05), "0.05")
        XCTAssertEqual(formatSeconds(1.46749), "1.467")
        XCTAssertEqual(formatSeconds(12.3456), "12.346")
        XCTAssertEqual(formatSeconds(0.0004), "0")
        XCTAssertEqual(formatSeconds(-1.5), "-1.5")
    }

    func testPlannedClipDecisions() {
        var options = MergeOptions()
        options.frameRate = Rational(30, 1)
        let clip = makeClip(
            "p.mov", micros: 4_000_000, width: 1920, height: 1080, orientation: .rotate90,
            rate: Rational(30000, 1001))
        let plan = MergePlan(clips: [clip], options: options)
        let planned = plan.clips[0]
        XCTAssertEqual(planned.crop, CropRect(x: 555, y: 0, width: 810, height: 1080))
        // x = 555 is off the 4:2:0 chroma grid: the cut picture comes with full chroma across
        // (PictureCutter), so only the vertical siting is told to the scaler.
        XCTAssertEqual(
            planned.videoFilter,
            "scale=w=240:h=320:flags=bicubic:in_v_chr_pos=128:out_range=tv,"
                + "format=pix_fmts=yuv420p,transpose=clock,setsar=1,fps=fps=30/1:round=near")
        XCTAssertEqual(
            planned.audioFilter,
            "aresample=44100,aformat=sample_fmts=fltp:sample_rates=44100:channel_layouts=stereo")
    }

    func testVideoFilterForDeliveredFrameSize() {
        let clip = makeClip("p.mov", micros: 4_000_000, width: 1920, height: 1080, rate: Rational(60, 1))
        let options = MergeOptions()
        let planned = MergePlan(clips: [clip], options: options).clips[0]
        let same = planned.picturePath(
            frameWidth: 1920, frameHeight: 1080, sampleAspect: Rational(1, 1), cropping: .yuv420, options: options)
        XCTAssertEqual(same.filter, planned.videoFilter)
        XCTAssertEqual(same.crop, planned.crop)
        let other = planned.picturePath(
            frameWidth: 1280, frameHeight: 720, sampleAspect: Rational(1, 1), cropping: .yuv420, options: options)
        XCTAssertEqual(other.crop, CropRect(x: 160, y: 0, width: 960, height: 720))
        XCTAssertEqual(
            other.filter,
            FilterGraphs.video(
                crop: CropRect(x: 160, y: 0, width: 960, height: 720),
                orientation: .identity, inputRate: Rational(60, 1), options: options))
        // Another pixel format (4:2:2 here) gets the scaler positions of its own chroma.
        let yuv422 = planned.picturePath(
            frameWidth: 1920, frameHeight: 1080, sampleAspect: Rational(1, 1), cropping: .framesCropped(.yuv422),
            options: options)
        XCTAssertTrue(
            yuv422.filter.hasPrefix("fps=fps=30/1:round=near,scale=w=320:h=240:flags=bicubic:in_h_chr_pos=128:out_range=tv,"),
            yuv422.filter)
    }

    /// x264 refuses lossless in High ("high profile doesn't support lossless"): --crf 0 runs in
    /// High 4:4:4 Predictive, every other CRF in High.
    func testLosslessUsesTheProfileThatAllowsIt() {
        var options = MergeOptions()
        XCTAssertEqual(options.x264Profile, "high")
        options.crf = 0
        XCTAssertEqual(options.x264Profile, "high444")
        options.crf = 0.5
        XCTAssertEqual(options.x264Profile, "high")
    }

    func testClipInfoDurationSeconds() {
        XCTAssertEqual(makeClip("a", micros: 2_013_300).durationSeconds, 2.0133, accuracy: 1e-12)
        XCTAssertEqual(makeClip("a", micros: 0).durationSeconds, 0)
    }
}
