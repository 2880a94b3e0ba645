import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// A trimmed clip is read from the keyframe before its trim, not from the top, and that changes
/// the time taken, never the output: the same pictures, sound and bytes as decoding from the top
/// (MergeHooks.seeksToTrims off), in every container and for clips whose index misleads. t1 shows
/// its frame number as a bar code (make_trim_fixture.sh); its keyframes are 2 s apart. What a
/// trim gives, end to end: TrimTests (IntegrationTests).
final class TrimSeekTests: XCTestCase {
    private let t1 = Fixtures.path("t1_")

    /// Where reading starts (the keyframe before the trim, or the top of the file) changes the
    /// time taken, never the output: both give the same pictures and the same sound.
    func testSeekingToTheTrimGivesTheSameOutputAsDecodingFromTheTop() throws {
        // 4.51 s: past two keyframes, between two frames; 2.03 s: just after a keyframe. The same
        // sound sample for sample (checked there): the sound before the trim is cut at the source's
        // rate, so the resampler starts on the trim either way (it did not, before: a 0.3-sample shift).
        let (numbers, _, _) = try mergeWithAndWithout(
            \.seeksToTrims,
            [
                JobInput(t1, edit: InputEdit(startMicros: 4_510_000)),
                JobInput(t1, edit: InputEdit(startMicros: 2_030_000, endMicros: 2_600_000)),
            ])
        // t1 from 4.51 s: frame 135 (4.5 s, nearer than 136 at 4.533 s) first; 1.49 s = 45 frames.
        // Then from 2.03 s, where frame 61 (2.033 s) is nearer than 60 (2.0 s), for 0.57 s: 17 frames.
        XCTAssertEqual(numbers, ((135..<180).map { $0 } + (61..<78).map { $0 }).map { Optional($0) })
    }

    /// A seek is checked, not trusted: MPEG-TS lands on any packet, an MP4 without a sync-sample
    /// table calls every sample a keyframe, Matroska without cues and fragmented MP4 have no
    /// index to seek by, open-GOP HEVC starts its GOPs with pictures that cannot be decoded from
    /// there. Each trimmed from 1 s and from 2.5 s (0.5 s past a keyframe) shows the frames it
    /// should (it showed frame 60 for a second, or failed: "no video frame could be decoded"),
    /// with the same pictures, sound and bytes as decoding from the top.
    func testTrimsLandOnRealKeyframesInEveryContainer() throws {
        let dir = try makeScratchDirectory()
        func ffmpeg(_ arguments: [String]) throws { try runFFmpeg(["-i", t1] + arguments, in: dir) }
        try ffmpeg(["-c", "copy", "-f", "mpegts", "t1.ts"])
        try ffmpeg(["-c", "copy", "-f", "mp4", "-movflags", "+frag_keyframe+empty_moov", "t1-fragmented.mp4"])
        // Written to a pipe, the Matroska muxer cannot go back to write its cues.
        let mkv = try runProgram(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "ffmpeg -v error -i \"$0\" -c copy -f matroska pipe:1 > t1-nocues.mkv", t1], in: dir)
        XCTAssertEqual(mkv.status, 0, mkv.stderr)
        let mkvBytes = try Data(contentsOf: dir.appendingPathComponent("t1-nocues.mkv"))
        XCTAssertNil(mkvBytes.range(of: Data([0x1C, 0x53, 0xBB, 0x6B])), "no Cues element")
        try ffmpeg(["-c", "copy", "-f", "mp4", "t1-nostss.mp4"])
        var mp4 = try Data(contentsOf: dir.appendingPathComponent("t1-nostss.mp4"))
        let stss = try XCTUnwrap(mp4.range(of: Data("stss".utf8)))
        mp4.replaceSubrange(stss, with: Data("free".utf8))
        try mp4.write(to: dir.appendingPathComponent("t1-nostss.mp4"))
        try ffmpeg([
            "-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
            "log-level=error:keyint=60:min-keyint=60:open-gop=1:bframes=3:scenecut=0", "-tag:v", "hvc1", "-c:a", "copy",
            "t1-opengop.mov",
        ])
        // Beyond the two chosen starts, seeded ones anywhere in the clip (VMERGE_TRIM_SEED picks
        // another set): wherever a trim starts, seeking gives what reading from the top gives.
        var seed = UInt64(ProcessInfo.processInfo.environment["VMERGE_TRIM_SEED"] ?? "") ?? 22
        func randomStart() -> Int64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return 100_000 + Int64((seed >> 33) % 5_300_000)
        }
        for name in ["t1.ts", "t1-fragmented.mp4", "t1-nocues.mkv", "t1-nostss.mp4", "t1-opengop.mov"] {
            let path = dir.appendingPathComponent(name).path
            let starts = (0..<3).map { _ in randomStart() }
            let (numbers, on, off) = try mergeWithAndWithout(
                \.seeksToTrims,
                [
                    JobInput(path, edit: InputEdit(startMicros: 1_000_000, endMicros: 4_000_000)),
                    JobInput(path, edit: InputEdit(startMicros: 2_500_000, endMicros: 4_000_000)),
                ] + starts.map { JobInput(path, edit: InputEdit(startMicros: $0, endMicros: $0 + 500_000)) })
            XCTAssertEqual(
                Array(numbers.prefix(135)), ((30..<120).map { $0 } + (75..<120).map { $0 }).map { Optional($0) },
                "\(name); seeded starts \(starts)")
            XCTAssertEqual(numbers.count, 135 + 3 * 15, "\(name); seeded starts \(starts)")
            // And it did seek: the part from 2.5 s read less than from the top. (A fragmented MP4
            // tells no stream start time before its packets are read, and one is needed to
            // place a trim on the stream's clock: it is read from the top.)
            let read = [on, off].map { $0.plan.clips[1].decodeCount?.videoPackets ?? 0 }
            if name.contains("fragmented") {
                XCTAssertEqual(read[0], read[1], name)
            } else {
                XCTAssertLessThan(read[0], read[1], "\(name): packets read seeking, and from the top")
            }
        }
    }

    /// The first picture decoded after a seek must itself be a keyframe: a clip cut with an edit
    /// list (`ffmpeg -ss 1 -c copy`, a phone's trim) hides the keyframe before its first shown
    /// picture, and reading must not start at that picture (frames held, or "no video frame could
    /// be decoded"); HEVC without a sync-sample table lands on pictures it decodes into grey.
    func testTrimsOfEditedClipsAndHEVCWithoutAnIndexStartOnAKeyframe() throws {
        let dir = try makeScratchDirectory()
        try runFFmpeg(["-ss", "1", "-i", t1, "-c", "copy", "t1-from1.mov"], in: dir)
        try runFFmpeg(["-ss", "2.5", "-i", t1, "-c", "copy", "t1-from2.5.mov"], in: dir)
        let x265 = ["-c:v", "libx265", "-preset", "ultrafast", "-tag:v", "hvc1", "-c:a", "copy", "-x265-params",
                    "log-level=error:keyint=60:min-keyint=60:scenecut=0:bframes=4:open-gop=0"]
        try runFFmpeg(["-i", t1] + x265 + ["t1-hevc.mov"], in: dir)
        try runFFmpeg(["-ss", "2.5", "-i", "t1-hevc.mov", "-c", "copy", "t1-hevc-from2.5.mov"], in: dir)
        var hevc = try Data(contentsOf: dir.appendingPathComponent("t1-hevc.mov"))
        hevc.replaceSubrange(try XCTUnwrap(hevc.range(of: Data("stss".utf8))), with: Data("free".utf8))
        try hevc.write(to: dir.appendingPathComponent("t1-hevc-nostss.mov"))
        let cases: [(String, Int64, Int64, Range<Int>)] = [
            ("t1-from1.mov", 500_000, 1_500_000, 45..<75), ("t1-from2.5.mov", 500_000, 1_500_000, 90..<120),
            ("t1-hevc-from2.5.mov", 500_000, 1_500_000, 90..<120), ("t1-hevc-nostss.mov", 1_500_000, 3_000_000, 45..<90),
            ("t1-hevc-nostss.mov", 3_700_000, 5_000_000, 111..<150),
        ]
        for (name, start, end, frames) in cases {
            let (numbers, _, _) = try mergeWithAndWithout(
                \.seeksToTrims,
                [JobInput(dir.appendingPathComponent(name).path, edit: InputEdit(startMicros: start, endMicros: end))])
            XCTAssertEqual(numbers, frames.map { Optional($0) }, "\(name) from \(start)")
        }
    }
}
