import VMergeCore
import XCTest

/// The neighbours of a picture in presentation order, told from packets read in decode order
/// (issue 15: which pictures the output shows, at any frame rate).
final class PresentationNeighboursTests: XCTestCase {
    /// I0 P4 B2 b1 b3 P8 B6 b5 b7 in decode order, as x264 writes a B-pyramid (pts in frames;
    /// dts one per packet, from -2 so that no picture is shown before it is decoded).
    private let pyramid: [(pts: Int64, dts: Int64)] = [
        (0, -2), (4, -1), (2, 0), (1, 1), (3, 2), (8, 3), (6, 4), (5, 5), (7, 6),
    ]

    private func reading(_ count: Int) -> PresentationNeighbours {
        var neighbours = PresentationNeighbours()
        for packet in pyramid.prefix(count) { neighbours.add(pts: packet.pts, dts: packet.dts) }
        return neighbours
    }

    func testNeighboursAreKnownOnceReadingHasPassedTheNextPicture() {
        // After I0 P4 B2 b1 (dts 1): b1's next is B2 (read), but a packet to come may still
        // show a picture between 1 and 2; after b3 (dts 2) none can.
        XCTAssertNil(reading(4).around(1, ended: false))
        XCTAssertEqual(reading(5).around(1, ended: false).map { [$0.previous, $0.next] }, [0, 2])
        // P4 has no next read yet.
        XCTAssertNil(reading(5).around(4, ended: false))
        // b3's next is P4, read long before it, yet known only once reading passes dts 4 (B6).
        XCTAssertNil(reading(5).around(3, ended: false))
        XCTAssertNil(reading(6).around(3, ended: false))
        XCTAssertEqual(reading(7).around(3, ended: false).map { [$0.previous, $0.next] }, [2, 4])
        XCTAssertEqual(reading(6).around(2, ended: false).map { [$0.previous, $0.next] }, [1, 3])
        // P4's next is b5, read three packets after P8.
        XCTAssertNil(reading(7).around(4, ended: false))
        XCTAssertEqual(reading(8).around(4, ended: false).map { [$0.previous, $0.next] }, [3, 5])
    }

    func testAtTheEndEveryAnswerIsFinal() {
        let all = reading(pyramid.count)
        XCTAssertNil(all.around(8, ended: false))
        XCTAssertEqual(all.around(8, ended: true).map { [$0.previous, $0.next] }, [7, nil])
        XCTAssertEqual(all.around(0, ended: true).map { [$0.previous, $0.next] }, [nil, 1])
        XCTAssertNil(all.around(9, ended: true), "a time never read")
    }

    func testVariableStepsNeedNoGrid() {
        var neighbours = PresentationNeighbours()
        for (pts, dts) in [(0, 0), (1001, 1001), (1164, 1164), (2445, 2445), (3075, 3075)] as [(Int64, Int64)] {
            neighbours.add(pts: pts, dts: dts)
        }
        XCTAssertEqual(neighbours.around(1164, ended: false).map { [$0.previous, $0.next] }, [1001, 2445])
        XCTAssertNil(neighbours.around(3075, ended: false))
    }

    func testBrokenTimestampsMakeNothingKnown() {
        let cases: [(String, [(Int64?, Int64?)])] = [
            ("a decode time going back", [(0, 0), (2, 2), (1, 1), (3, 3)]),
            ("a repeated presentation time", [(0, 0), (1, 1), (1, 2), (3, 3)]),
            ("a missing timestamp", [(0, 0), (nil, 1), (2, 2), (3, 3)]),
            ("a picture shown before it is decoded", [(0, 0), (1, 2), (3, 3), (4, 4)]),
        ]
        for (what, packets) in cases {
            var neighbours = PresentationNeighbours()
            for (pts, dts) in packets { neighbours.add(pts: pts, dts: dts) }
            XCTAssertTrue(neighbours.irregular, what)
            XCTAssertNil(neighbours.around(0, ended: true), what)
        }
    }
}
