import Foundation
import XCTest

@testable import VMergeCore

final class LimitPlanTests: XCTestCase {
    private func clip(_ name: String, micros: Int64) -> ClipInfo {
        ClipInfo(
            path: name, container: "mov,mp4,m4a,3gp,3g2,mj2", durationMicros: micros,
            video: VideoInfo(
                streamIndex: 0, codec: "h264", width: 640, height: 480, sampleAspect: Rational(1, 1),
                pixelFormat: "yuv420p", frameRate: Rational(30, 1), orientation: .identity),
            audio: nil, creationTime: nil)
    }

    func testMaxDurationCutsTheCrossingClipAndLeavesTheRestOut() {
        var options = MergeOptions()
        options.maxDuration = 5.01  // rounded down to the frame grid: 150 frames = 5 s
        let plan = MergePlan(
            probes: [
                .clip(clip("a", micros: 3_000_000)), .clip(clip("short", micros: 1_000_000)),
                .clip(clip("b", micros: 3_000_000)), .clip(clip("c", micros: 3_000_000)),
            ],
            options: options)
        XCTAssertEqual(plan.clips.map(\.clip.path), ["a", "b"])
        XCTAssertEqual(plan.clips[1].startMicros, 3_000_000)
        XCTAssertEqual(plan.clips[1].durationMicros, 2_000_000)
        XCTAssertTrue(plan.clips[1].isCut)
        XCTAssertFalse(plan.clips[0].isCut)
        XCTAssertEqual(plan.durationMicros, 5_000_000)
        XCTAssertEqual(
            plan.inputs.map(\.disposition),
            [
                .kept(0), .dropped(.tooShort(durationSeconds: 1, limitSeconds: 2)), .kept(1),
                .dropped(.beyondLimit(limitSeconds: 5.01)),
            ])
        XCTAssertEqual(
            DropReason.beyondLimit(limitSeconds: 5.01).message,
            "left out: the output reaches its 5.01 s maximum before this clip")
    }

    func testAClipTheLimitWouldCutBeforeItsFirstFrameIsLeftOut() {
        var options = MergeOptions()
        options.maxDuration = 2.01  // 60 frames = 2 s; the second clip would start at 2.0 s
        let plan = MergePlan(
            probes: [
                .clip(clip("a", micros: 2_000_000)), .clip(clip("b", micros: 3_000_000)),
                .notProbed(path: "c"),
            ],
            options: options)
        XCTAssertEqual(plan.clips.map(\.clip.path), ["a"])
        XCTAssertEqual(
            plan.inputs.map(\.disposition),
            [
                .kept(0), .dropped(.beyondLimit(limitSeconds: 2.01)), .dropped(.beyondLimit(limitSeconds: 2.01)),
            ])
        XCTAssertTrue(plan.isCutByMaxDuration, "b is left out although a is not cut")
        XCTAssertFalse(MergePlan(probes: [.clip(clip("a", micros: 2_000_000))], options: options).isCutByMaxDuration)
    }

    func testMaxDurationOnAFractionalFrameRate() {
        var options = MergeOptions()
        options.frameRate = Rational(30000, 1001)
        options.maxDuration = 1
        // 29 whole frames fit in a second at 29.97 fps.
        XCTAssertEqual(options.maxDurationMicros, options.timeline.micros(ofFrame: 29))
    }

    func testNotProbedInputsStayInTheirPlace() {
        let plan = MergePlan(
            probes: [
                .clip(clip("a", micros: 3_000_000)), .invalid(path: "bad", reason: "not a video"),
                .notProbed(path: "later"),
            ],
            options: MergeOptions())
        XCTAssertEqual(plan.inputs.map(\.probe.path), ["a", "bad", "later"])
        XCTAssertEqual(plan.inputs.map(\.disposition), [.kept(0), .dropped(.invalid("not a video")), .notProbed])
        XCTAssertEqual(plan.dropped.map(\.path), ["bad"])
    }

    func testChaptersAreCountedAgainstTheLimit() {
        XCTAssertEqual(SizeBudget.allowance(for: []), 0)
        let chapters = [
            Chapter(title: "IMG_0001", startMicros: 0, endMicros: 1_000_000),
            Chapter(title: "Größe", startMicros: 1_000_000, endMicros: 2_000_000),
        ]
        // 1024 for the track, then each title twice (in bytes: "Größe" is 7) plus 64.
        XCTAssertEqual(SizeBudget.allowance(for: chapters), 1024 + (16 + 64) + (14 + 64))
        let plain = SizeBudget(limit: 100_000), reserving = SizeBudget(limit: 100_000, reserved: 1_000)
        XCTAssertEqual(
            reserving.bound(payload: 10, videoPackets: 1, keyframes: 1, audioPackets: 1),
            plain.bound(payload: 10, videoPackets: 1, keyframes: 1, audioPackets: 1) + 1_000)
    }

    func testSizeBudget() {
        let budget = SizeBudget(limit: 100_000)
        XCTAssertEqual(budget.bound(payload: 0, videoPackets: 0, keyframes: 0, audioPackets: 0), 4096)
        XCTAssertEqual(budget.bound(payload: 50_000, videoPackets: 100, keyframes: 2, audioPackets: 50), 57_904)
        XCTAssertTrue(budget.fits(payload: 95_904, videoPackets: 0, keyframes: 0, audioPackets: 0))
        XCTAssertFalse(budget.fits(payload: 95_905, videoPackets: 0, keyframes: 0, audioPackets: 0))
        // Above 4 GiB the muxer switches to 64-bit chunk offsets.
        XCTAssertEqual(SizeBudget(limit: 5 << 30).perVideoPacket, 32)
    }

    func testFreeSpaceEstimate() {
        var options = MergeOptions()
        // 320x240 at 30 fps, 0.12 bits per pixel + 96 kb/s AAC, for 100 s.
        XCTAssertEqual(FreeSpace.estimatedOutputBytes(durationMicros: 100_000_000, options: options), 4_656_000)
        options.maxSize = 1_000_000
        XCTAssertEqual(FreeSpace.estimatedOutputBytes(durationMicros: 100_000_000, options: options), 1_000_000)
        XCTAssertThrowsError(
            try FreeSpace.check(output: "/tmp/x.mp4", durationMicros: 1, options: options, required: Int64.max / 2)
        ) { error in
            XCTAssertTrue("\(error)".contains("not enough free space"), "\(error)")
        }
    }
}
