import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// Packets whose pictures the output does not show and that nothing references are not decoded
/// (issue 15). The output must be the same as with every packet decoded: every output frame the
/// same source picture (u1-u6 show their frame numbers as bar codes, make_hfr_fixtures.sh), the
/// same sound sample for sample, the same file byte for byte.
final class PictureSkippingTests: XCTestCase {
    /// Merges `inputs` with and without skipping (the same pictures and sound, checked there);
    /// returns the frame numbers and each clip's decode count with skipping.
    private func mergeBothWays(_ inputs: [JobInput], file: StaticString = #filePath, line: UInt = #line) throws
        -> (numbers: [Int?], counts: [DecodeCount])
    {
        let (numbers, on, off) = try mergeWithAndWithout(\.skipsUnshownPictures, inputs, file: file, line: line)
        XCTAssertEqual(off.plan.clips.map { $0.decodeCount?.skipped }, inputs.map { _ in 0 }, file: file, line: line)
        return (numbers, on.plan.clips.compactMap(\.decodeCount))
    }

    /// Output frame k shows the latest source frame whose exact time rounds to it (half-way
    /// rounds up, as the fps filter does): ratio k + ratio/2 - 1.
    private func assertEveryFrame(_ numbers: [Int?], ratio: Int, count: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(numbers, (0..<count).map { Optional(ratio * $0 + ratio / 2 - 1) }, file: file, line: line)
    }

    func testSlowMotionH264SkipsUnshownBFramesAndKeepsTheOutput() throws {
        let (numbers, counts) = try mergeBothWays([JobInput(Fixtures.path("u1_"))])
        assertEveryFrame(numbers, ratio: 8, count: 30)
        XCTAssertEqual(counts.first?.videoPackets, 240)
        XCTAssertGreaterThan(counts.first?.skipped ?? 0, 60, "\(counts)")
        print("u1 240 fps H.264: \(counts[0].skipped) of \(counts[0].videoPackets) packets not decoded")
    }

    func testHEVCSkipsNonReferencePicturesOfTheTopSubLayer() throws {
        let (numbers, counts) = try mergeBothWays([JobInput(Fixtures.path("u2_"))])
        assertEveryFrame(numbers, ratio: 4, count: 60)
        XCTAssertGreaterThan(counts.first?.skipped ?? 0, 60, "\(counts)")
        print("u2 120 fps HEVC: \(counts[0].skipped) of \(counts[0].videoPackets) packets not decoded")
    }

    /// In two temporal sub-layers (as phones record slow motion) only the top one's
    /// non-reference pictures are skipped: the lower one's may be referenced from above.
    func testHEVCInTwoTemporalSubLayers() throws {
        let (numbers, counts) = try mergeBothWays([JobInput(Fixtures.path("u5_"))])
        assertEveryFrame(numbers, ratio: 4, count: 60)
        XCTAssertGreaterThan(counts.first?.skipped ?? 0, 30, "\(counts)")
        print("u5 120 fps HEVC, 2 sub-layers: \(counts[0].skipped) of \(counts[0].videoPackets) packets not decoded")
    }

    /// hvcC's numTemporalLayers is informative; the SPS is the bound on every picture's
    /// sub-layer. Copies of u2 and u5 whose header claims 0 ("unknown"), 1 and 3 layers skip what
    /// the originals skip, and show the same pictures as decoding everything.
    func testTheSubLayerCountInTheFileHeaderIsNotTrusted() throws {
        let dir = try makeScratchDirectory()
        for (fixture, claims) in [("u2_", [UInt8(0), 3]), ("u5_", [UInt8(0), 1, 3])] {
            let original = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(fixture)))
            let expected = try mergeBothWays([JobInput(Fixtures.path(fixture))]).counts.first?.skipped
            let box = try XCTUnwrap(original.range(of: Data("hvcC".utf8)))
            for layers in claims {
                var copy = original
                let at = box.upperBound + 21
                copy[at] = copy[at] & 0xC7 | layers << 3
                let path = dir.appendingPathComponent("\(fixture)claims\(layers).mov")
                try copy.write(to: path)
                let (_, counts) = try mergeBothWays([JobInput(path.path)])
                XCTAssertEqual(counts.first?.skipped, expected, "\(fixture) claiming \(layers) layers")
            }
        }
    }

    /// A picture above the SPS's top sub-layer (a stream that breaks its own SPS) may reference
    /// one taken for the top's: from the first such picture read on, nothing more is skipped.
    /// A copy of u2 (one sub-layer) with picture 120's slice marked TemporalId 1.
    func testAPictureAboveTheTopSubLayerStopsSkipping() throws {
        let dir = try makeScratchDirectory()
        let fixture = Fixtures.path("u2_")
        let listing = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "packet=pos", "-of", "csv=p=0", fixture],
            in: dir)
        XCTAssertEqual(listing.status, 0, listing.stderr)
        let positions = listing.stdout.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertEqual(positions.count, 240)
        var copy = try Data(contentsOf: URL(fileURLWithPath: fixture))
        // The packet's first NAL unit: 4-byte length, then the 2-byte header (TemporalId + 1 in
        // the low 3 bits of the second byte). Walk to its first slice.
        var at = positions[120]
        while (copy[at + 4] >> 1) & 0x3F >= 32 {
            at += 4 + (Int(copy[at]) << 24 | Int(copy[at + 1]) << 16 | Int(copy[at + 2]) << 8 | Int(copy[at + 3]))
        }
        copy[at + 5] = copy[at + 5] & 0xF8 | 2
        let path = dir.appendingPathComponent("above.mov")
        try copy.write(to: path)
        let whole = try XCTUnwrap(mergeBothWays([JobInput(fixture)]).counts.first?.skipped)
        let (_, counts) = try mergeBothWays([JobInput(path.path)])
        let skipped = try XCTUnwrap(counts.first?.skipped)
        XCTAssertGreaterThan(skipped, 0, "skipped before the picture was read")
        XCTAssertLessThan(skipped, whole * 2 / 3, "went on skipping after it (\(skipped) of \(whole))")
    }

    /// Nothing to skip in an all-reference stream; one with a 50 ms gap is skipped around it
    /// like any other (each picture's neighbours are read ahead, not assumed one step away).
    func testAllReferenceStreamsAreDecodedWholeAndAGapChangesNothing() throws {
        let (numbers, counts) = try mergeBothWays([JobInput(Fixtures.path("u3_")), JobInput(Fixtures.path("u4_"))])
        XCTAssertEqual(counts.first?.skipped, 0)
        XCTAssertGreaterThan(counts.last?.skipped ?? 0, 60, "\(counts)")
        assertEveryFrame(Array(numbers.prefix(60)), ratio: 2, count: 60)
        // u4: frames 0-100 every 1/240 s, then 50 ms later on; output frame k at k/30 s.
        XCTAssertEqual(numbers[60 + 3], 27, "before the gap as u1")
        print("u4 240 fps with a gap: \(counts[1].skipped) of \(counts[1].videoPackets) packets not decoded")
    }

    /// A variable frame rate as phones record it: every picture off the 120 fps grid by up to
    /// 0.45 of a frame (u6). Which pictures are shown follows from the real timestamps.
    func testJitteredVariableRateStreamSkipsExactly() throws {
        // Its timestamps fit no grid coarser than the 1/90000 time base, which FFmpeg takes for
        // the frame rate; the probe takes the average (it refused the file as 90000 fps).
        var probes: [InputProbe] = []
        var options = MergeOptions()
        options.minDuration = 0
        let plan = try Merger(options: options, diagnostics: .silent)
            .makePlan(probing: [JobInput(Fixtures.path("u6_"))], into: &probes)
        let rate = try XCTUnwrap(plan.clips.first?.clip.video.frameRate.doubleValue)
        XCTAssertEqual(rate, 120.2, accuracy: 0.1)
        let (numbers, counts) = try mergeBothWays([JobInput(Fixtures.path("u6_"))])
        XCTAssertEqual(numbers.count, 60)
        XCTAssertEqual(numbers.compactMap { $0 }.count, 60, "every frame shows a readable frame number")
        XCTAssertGreaterThan(counts.first?.skipped ?? 0, 60, "\(counts)")
        print("u6 120 fps with jitter: \(counts[0].skipped) of \(counts[0].videoPackets) packets not decoded")
    }

    /// Trimmed and cut clips and clips in sequence: what is skipped is still never shown.
    func testTrimsAndSequencesKeepTheOutput() throws {
        let (numbers, counts) = try mergeBothWays([
            JobInput(Fixtures.path("u1_"), edit: InputEdit(startMicros: 333_000, endMicros: 800_000)),
            JobInput(Fixtures.path("u2_"), edit: InputEdit(startMicros: 1_234_567)),
            JobInput(Fixtures.path("u1_")),
        ])
        XCTAssertEqual(counts.count, 3)
        XCTAssertTrue(counts.allSatisfy { $0.skipped > 0 }, "\(counts)")
        XCTAssertFalse(numbers.contains(nil))
    }
}
