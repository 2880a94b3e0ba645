import XCTest

@testable import VMergeCore

/// The recording times containers write, read to the microsecond, and the choice between two
/// clocks of one file; the order `--sort recorded` makes of them.
final class RecordingTimeTests: XCTestCase {
    func testTheFormsContainersWriteAreRead() throws {
        let utc = try XCTUnwrap(RecordingTime(iso: "2024-05-01T08:00:03Z", tag: "t"))
        XCTAssertEqual(utc.micros, 1_714_550_403_000_000)
        XCTAssertEqual(utc.precision, 0)
        // FFmpeg's rendering of an MP4 header, and an iPhone's local time with its offset.
        XCTAssertEqual(RecordingTime(iso: "2024-05-01T08:00:03.000000Z", tag: "t", precision: 0)?.micros, utc.micros)
        XCTAssertEqual(RecordingTime(iso: "2024-05-01T10:00:03+0200", tag: "t")?.micros, utc.micros)
        XCTAssertEqual(RecordingTime(iso: "2024-05-01T03:30:03-04:30", tag: "t")?.micros, utc.micros)
        XCTAssertEqual(RecordingTime(iso: "2024-05-01 08:00:03", tag: "t")?.micros, utc.micros)
        let fine = try XCTUnwrap(RecordingTime(iso: "2024-05-01T08:00:03.250Z", tag: "t"))
        XCTAssertEqual(fine.micros - utc.micros, 250_000)
        XCTAssertEqual(fine.precision, 3)
        XCTAssertEqual(fine.text, "2024-05-01T08:00:03.250Z")
        for bad in ["", "2024-05-01", "2024-13-01T00:00:00Z", "1904-01-01T00:00:00Z", "2024-05-01T08:00:03+2", "x"] {
            XCTAssertNil(RecordingTime(iso: bad, tag: "t"), bad)
        }
    }

    func testTheMostPreciseClockIsChosenAndAtEqualPrecisionTheFirst() {
        let apple = RecordingTime(micros: 10, precision: 0, tag: "apple")
        let header = RecordingTime(micros: 20, precision: 0, tag: "header")
        let matroska = RecordingTime(micros: 30, precision: 6, tag: "matroska")
        XCTAssertEqual(RecordingTime.best([apple, header])?.tag, "apple")
        XCTAssertEqual(RecordingTime.best([nil, header])?.tag, "header")
        XCTAssertEqual(RecordingTime.best([apple, matroska])?.tag, "matroska")
        XCTAssertNil(RecordingTime.best([nil, nil]))
    }

    func testOrderIsByTimeThenNameWithUntimedLast() {
        let times: [String: Int64] = ["clip10.mov": 5, "clip2.mov": 5, "b.mov": 1]
        let inputs = ["z.mov", "clip10.mov", "a.mov", "clip2.mov", "b.mov"].map { JobInput($0) }
        let (sorted, untimed) = InputList.sorted(inputs) { path in
            times[path.escaped].map { RecordingTime(micros: $0, precision: 0, tag: "t") }
        }
        XCTAssertEqual(sorted.map(\.path), ["b.mov", "clip2.mov", "clip10.mov", "a.mov", "z.mov"])
        XCTAssertEqual(untimed, ["a.mov", "z.mov"])
    }
}
