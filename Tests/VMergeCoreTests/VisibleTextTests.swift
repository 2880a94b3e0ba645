import XCTest

@testable import VMergeCore

final class VisibleTextTests: XCTestCase {
    func testOrdinaryTextIsLeftAsItIs() {
        for text in ["a.mov", "Ski day – été 2026/β.mov", "emoji 🎿.mov", "back\\slash", ""] {
            XCTAssertEqual(VisibleText.of(text), text)
        }
    }

    /// Every C0 control, DEL, every C1 control and the line/paragraph separators come out as
    /// printable escapes: nothing that ends a line or drives a terminal is left.
    func testEveryControlIsShownAsAnEscape() {
        XCTAssertEqual(VisibleText.of("a\nb\tc\rd"), "a\\nb\\tc\\rd")
        XCTAssertEqual(VisibleText.of("\u{1B}[2J\u{7}"), "\\x1B[2J\\x07")
        XCTAssertEqual(VisibleText.of("\u{0}\u{7F}"), "\\x00\\x7F")
        XCTAssertEqual(VisibleText.of("x\u{85}y\u{9B}31m"), "x\\u{85}y\\u{9B}31m")
        XCTAssertEqual(VisibleText.of("p\u{2028}q\u{2029}"), "p\\u{2028}q\\u{2029}")
        let all = String(String.UnicodeScalarView((0..<0xA0).compactMap(Unicode.Scalar.init)))
        let shown = VisibleText.of(all + "\u{2028}\u{2029}")
        XCTAssertFalse(shown.unicodeScalars.contains { VisibleText.needsEscape($0) }, shown)
        XCTAssertTrue(shown.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }, shown)
    }
}
