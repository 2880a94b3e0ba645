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
        XCTAssertNil(MetadataTrack.leftOut(tag: tag("tmcd"), codec: "none", index: 2, inChapterList: false, isData: true))
        XCTAssertEqual(
            MetadataTrack.leftOut(tag: tag("gpmd"), codec: "bin_data", index: 3, inChapterList: false, isData: true),
            "its GoPro telemetry track (gpmd, stream 3)")
        // An iPhone's camera data (Cinematic mode's focus, faces): footage the output cannot give back.
        XCTAssertEqual(
            MetadataTrack.leftOut(tag: tag("mebx"), codec: "none", index: 3, inChapterList: false, isData: true),
            "its timed metadata track (mebx, stream 3)")
        XCTAssertEqual(
            MetadataTrack.leftOut(tag: tag("text"), codec: "bin_data", index: 2, inChapterList: true, isData: true),
            "its chapter track (text, stream 2)")
        XCTAssertEqual(
            MetadataTrack.leftOut(tag: tag("text"), codec: "bin_data", index: 2, inChapterList: false, isData: true),
            "its timed metadata track (text, stream 2)")
        XCTAssertEqual(
            MetadataTrack.leftOut(tag: tag("rtp "), codec: "none", index: 4, inChapterList: false, isData: false),
            "its track of an unknown kind (rtp , stream 4)")
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
