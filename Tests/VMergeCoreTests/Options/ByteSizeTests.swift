import Foundation
import XCTest

@testable import VMergeCore

final class ByteSizeTests: XCTestCase {
    func testParse() {
        XCTAssertEqual(ByteSize.parse("1234"), 1234)
        XCTAssertEqual(ByteSize.parse("500K"), 500 * 1024)
        XCTAssertEqual(ByteSize.parse("500k"), 500 * 1024)
        XCTAssertEqual(ByteSize.parse("160M"), 160 << 20)
        XCTAssertEqual(ByteSize.parse("160MiB"), 160 << 20)
        XCTAssertEqual(ByteSize.parse("160MB"), 160_000_000)
        XCTAssertEqual(ByteSize.parse("1.5G"), 3 << 29)
        XCTAssertEqual(ByteSize.parse("2T"), 2 << 40)
        XCTAssertEqual(ByteSize.parse(" 10 KB "), 10_000)
        XCTAssertEqual(ByteSize.parse("7b"), 7)
        for bad in ["", "M", "-5M", "5X", "5MM", "1e3", "١٢", "abc", "99999999999T"] {
            XCTAssertNil(ByteSize.parse(bad), bad)
        }
    }

    func testFormat() {
        XCTAssertEqual(ByteSize.format(900), "900 B")
        XCTAssertEqual(ByteSize.format(1536), "1.5 KiB")
        XCTAssertEqual(ByteSize.format(160 << 20), "160 MiB")
        XCTAssertEqual(ByteSize.format(3 << 30), "3.0 GiB")
    }
}
