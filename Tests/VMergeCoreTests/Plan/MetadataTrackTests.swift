import XCTest

@testable import VMergeCore

/// Which data tracks --delete-sources counts as footage left out, and how each is named: every
/// one but a timecode (see `MetadataTrack`).
final class MetadataTrackTests: XCTestCase {
    /// A codec tag as FFmpeg holds it: the first character in the lowest byte.
    private func tag(_ text: String) -> UInt32 {
        text.utf8.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    func testEveryDataTrackButATimecodeIsLeftOut() {
        let cases: [(tag: String, codec: String, index: Int, chapters: Bool, data: Bool, said: String?)] = [
            ("tmcd", "none", 2, false, true, nil),
            ("gpmd", "bin_data", 3, false, true, "its GoPro telemetry track (gpmd, stream 3)"),
            // An iPhone's camera data (Cinematic mode's focus, faces): footage the output cannot give back.
            ("mebx", "none", 3, false, true, "its timed metadata track (mebx, stream 3)"),
            ("text", "bin_data", 2, true, true, "its chapter track (text, stream 2)"),
            ("text", "bin_data", 2, false, true, "its timed metadata track (text, stream 2)"),
            ("rtp ", "none", 4, false, false, "its track of an unknown kind (rtp , stream 4)"),
        ]
        for track in cases {
            XCTAssertEqual(
                MetadataTrack.leftOut(
                    tag: tag(track.tag), codec: track.codec, index: track.index, inChapterList: track.chapters,
                    isData: track.data), track.said, track.tag)
        }
    }

    /// No tag (an MPEG-TS KLV stream): named by its codec; a tag from the file is shown on one line.
    func testATrackIsNamedByItsCodecWithoutATagAndItsTagIsShownSafely() {
        XCTAssertEqual(
            MetadataTrack.leftOut(tag: 0, codec: "klv", index: 1, inChapterList: false, isData: true),
            "its timed metadata track (klv, stream 1)")
        XCTAssertEqual(
            MetadataTrack.leftOut(tag: tag("a\nb") | 0x9B << 24, codec: "none", index: 2, inChapterList: false, isData: true),
            "its timed metadata track (a\\x0Ab\\x9B, stream 2)")
    }
}
