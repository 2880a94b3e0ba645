import Foundation
import VMergeAV
import VMergeCore
import XCTest

/// Packets whose pictures the output does not show and that nothing references are not decoded
/// (issue 15). The output must be the same as with every packet decoded: every output frame the
/// same source picture (u1-u4 show their frame numbers as bar codes, make_hfr_fixtures.sh), the
/// same sound sample for sample. (Not the same bytes: x264 run in one process under load has
/// been seen to encode the same pictures slightly differently, with or without skipping.)
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

    /// Nothing to skip in an all-reference stream, nor in one whose frame rate is not constant:
    /// the picture after its gap could not be foreseen.
    func testAllReferenceAndVariableRateStreamsAreDecodedWhole() throws {
        let (numbers, counts) = try mergeBothWays([JobInput(Fixtures.path("u3_")), JobInput(Fixtures.path("u4_"))])
        XCTAssertEqual(counts.map(\.skipped), [0, 0])
        assertEveryFrame(Array(numbers.prefix(60)), ratio: 2, count: 60)
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
