import XCTest

@testable import VMergeCore

final class RationalTests: XCTestCase {
    func testParsingIntegersAndFractions() {
        XCTAssertEqual(Rational(parsing: "30"), Rational(30, 1))
        XCTAssertEqual(Rational(parsing: "30000/1001"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "60/2"), Rational(30, 1))  // reduced
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

    // MARK: numbers that used to trap (issue 11)

    func testParsingReducesWithoutOverflow() {
        XCTAssertEqual(Rational(parsing: "3000000000/100000000"), Rational(30, 1))
        XCTAssertEqual(Rational(parsing: "9223372036854775807/9223372036854775807"), Rational(1, 1))
        XCTAssertEqual(Rational(parsing: "30000/1001"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "60000/2002"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "4611686018427387904/2"), Rational(2_305_843_009_213_693_952, 1))
    }

    func testParsingSigns() {
        XCTAssertEqual(Rational(parsing: "-30/1"), Rational(-30, 1))
        XCTAssertEqual(Rational(parsing: "30/-1"), Rational(-30, 1))
        XCTAssertEqual(Rational(parsing: "-30/-1"), Rational(30, 1))
        XCTAssertEqual(Rational(parsing: "-6/4"), Rational(-3, 2))
        XCTAssertEqual(Rational(parsing: "0/-5"), Rational(0, 1))
    }

    func testParsingIntMin() {
        XCTAssertEqual(Rational(parsing: "-9223372036854775808/-9223372036854775808"), Rational(1, 1))
        XCTAssertEqual(Rational(parsing: "-9223372036854775808/2"), Rational(-4_611_686_018_427_387_904, 1))
        XCTAssertEqual(Rational(parsing: "-9223372036854775808/1"), Rational(Int.min, 1))
        XCTAssertNil(Rational(parsing: "9223372036854775807/-9223372036854775808"))  // den 2^63 once positive
        // -Int.min does not fit Int: refused, not trapped on.
        XCTAssertNil(Rational(parsing: "-9223372036854775808/-1"))
        XCTAssertNil(Rational(parsing: "1/-9223372036854775808"))
        XCTAssertNil(Rational(parsing: "9223372036854775808/1"))  // past Int
        XCTAssertNil(Rational(parsing: "1/9223372036854775808"))
    }

    func testParsingZeroDenominators() {
        for text in ["-5/0", "5/0", "0/0", "-0/0", "9223372036854775807/0", "-9223372036854775808/0"] {
            XCTAssertNil(Rational(parsing: text), text)
        }
    }

    func testParsingHugeDecimals() {
        for text in ["1e300", "-1e300", "1e19", "9.3e15", "1.7976931348623157e308"] {
            XCTAssertNil(Rational(parsing: text), text)
        }
        // Still within Int as thousandths: a bounded value.
        XCTAssertEqual(Rational(parsing: "1e10"), Rational(10_000_000_000, 1))
        XCTAssertEqual(Rational(parsing: "1e-300"), Rational(0, 1))
        XCTAssertEqual(Rational(parsing: "-12.5"), Rational(-25, 2))
    }

    func testReducingInit() {
        XCTAssertEqual(Rational(reducing: 6, 4), Rational(3, 2))
        XCTAssertEqual(Rational(reducing: 6, -4), Rational(-3, 2))
        XCTAssertEqual(Rational(reducing: -6, -4), Rational(3, 2))
        XCTAssertEqual(Rational(reducing: 0, -7), Rational(0, 1))
        XCTAssertEqual(Rational(reducing: Int.min, Int.min), Rational(1, 1))
        XCTAssertEqual(Rational(reducing: Int.min, 1), Rational(Int.min, 1))
        XCTAssertNil(Rational(reducing: Int.max, Int.min))
        XCTAssertEqual(Rational(reducing: Int.min, 4), Rational(Int.min / 4, 1))
        XCTAssertNil(Rational(reducing: 1, 0))
        XCTAssertNil(Rational(reducing: Int.min, -1))
        XCTAssertNil(Rational(reducing: 3, Int.min))
        XCTAssertEqual(Rational(reducing: 2, Int.min), Rational(-1, 4_611_686_018_427_387_904))
    }

    func testReducedNeverTraps() {
        XCTAssertEqual(Rational(Int.min, Int.min).reduced, Rational(1, 1))
        XCTAssertEqual(Rational(Int.min, 2).reduced, Rational(Int.min / 2, 1))
        XCTAssertEqual(Rational(Int.min, -1).reduced, Rational(Int.min, -1))  // -Int.min: left as it is
        XCTAssertEqual(Rational(Int.min, 0).reduced, Rational(-1, 0))
        XCTAssertEqual(Rational(5, 0).reduced, Rational(1, 0))
        XCTAssertEqual(Rational(6, -4).reduced, Rational(-3, 2))
        XCTAssertEqual(Rational(Int.max, Int.max).reduced, Rational(1, 1))
    }

    func testFitsInt32() {
        XCTAssertTrue(Rational(30000, 1001).fitsInt32)
        XCTAssertTrue(Rational(3_000_000_000, 100_000_000).fitsInt32)  // 30/1 once reduced
        XCTAssertTrue(Rational(Int.max, Int.max).fitsInt32)
        XCTAssertTrue(Rational(Int(Int32.max), 1).fitsInt32)
        XCTAssertTrue(Rational(Int(Int32.min), 1).fitsInt32)
        XCTAssertFalse(Rational(Int(Int32.max) + 1, 1).fitsInt32)
        XCTAssertFalse(Rational(1, Int(Int32.max) + 1).fitsInt32)
        XCTAssertFalse(Rational(4_611_686_018_427_387_903, 2_305_843_009_213_693_952).fitsInt32)
        XCTAssertFalse(Rational(Int.min, -1).fitsInt32)
        XCTAssertEqual(Rational(60, 2).int32Parts?.num, 30)
        XCTAssertEqual(Rational(60, 2).int32Parts?.den, 1)
        XCTAssertEqual(Rational(30, -1).int32Parts?.num, -30)
        XCTAssertEqual(Rational(30, -1).int32Parts?.den, 1)
    }
}
