import XCTest

@testable import VMergeCore

final class RationalTests: XCTestCase {
    func testParsingIntegersAndFractions() {
        XCTAssertEqual(Rational(parsing: "30"), Rational(30, 1))
        XCTAssertEqual(Rational(parsing: "30000/1001"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "60/2"), Rational(60, 2))  // kept as written
        XCTAssertEqual(Rational(parsing: "-30"), Rational(-30, 1))
    }

    func testParsingNtscDecimals() {
        XCTAssertEqual(Rational(parsing: "29.97"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "29.970"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "23.976"), Rational(24000, 1001))
        XCTAssertEqual(Rational(parsing: "59.94"), Rational(60000, 1001))
    }

    func testParsingOtherDecimalsReduces() {
        XCTAssertEqual(Rational(parsing: "30.0"), Rational(30, 1))
        XCTAssertEqual(Rational(parsing: "12.5"), Rational(25, 2))
        XCTAssertEqual(Rational(parsing: "25.5"), Rational(51, 2))
        XCTAssertEqual(Rational(parsing: "29.9"), Rational(299, 10))
        XCTAssertEqual(Rational(parsing: "0.001"), Rational(1, 1000))
    }

    func testColonOnlyWhenAllowed() {
        XCTAssertEqual(Rational(parsing: "4:3", separators: [":"]), Rational(4, 3))
        XCTAssertEqual(Rational(parsing: "16:9", separators: [":", "/"]), Rational(16, 9))
        XCTAssertEqual(Rational(parsing: "16/9", separators: [":", "/"]), Rational(16, 9))
        XCTAssertNil(Rational(parsing: "4:3"))
        XCTAssertNil(Rational(parsing: "4/3", separators: [":"]))
    }

    func testGarbage() {
        for text in [
            "", "abc", "x/0", "1/0", "30/", "/30", "30/x", "3.0/1", "4:3:2", " 30", "30 ", "nan", "inf",
            "-inf", "1/2/3", "--1",
        ] {
            XCTAssertNil(Rational(parsing: text, separators: [":", "/"]), "'\(text)'")
        }
        XCTAssertNil(Rational(parsing: "x/0"))
        XCTAssertNil(Rational(parsing: "5/0"))
    }

    func testValues() {
        XCTAssertEqual(Rational(30000, 1001).doubleValue, 29.97002997002997, accuracy: 1e-12)
        XCTAssertEqual(Rational(1, 0).doubleValue, 0)
        XCTAssertTrue(Rational(30, 1).isPositive)
        XCTAssertFalse(Rational(0, 1).isPositive)
        XCTAssertFalse(Rational(1, 0).isPositive)
        XCTAssertFalse(Rational(-1, -1).isPositive)
        XCTAssertEqual(Rational(30, 1).description, "30")
        XCTAssertEqual(Rational(30000, 1001).description, "30000/1001")
        XCTAssertEqual(Rational(4, 3).description, "4/3")
    }

    func testReduced() {
        XCTAssertEqual(Rational(6, 4).reduced, Rational(3, 2))
        XCTAssertEqual(Rational(30000, 1000).reduced, Rational(30, 1))
        XCTAssertEqual(Rational(-6, 4).reduced, Rational(-3, 2))
        XCTAssertEqual(Rational(0, 5).reduced, Rational(0, 1))
        XCTAssertEqual(Rational(0, 0).reduced, Rational(0, 0))
        XCTAssertEqual(Rational(30000, 1001).reduced, Rational(30000, 1001))
    }
}
