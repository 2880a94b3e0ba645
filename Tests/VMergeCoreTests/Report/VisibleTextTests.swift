import XCTest

@testable import VMergeCore

final class VisibleTextTests: XCTestCase {
    func testOrdinaryTextIsLeftAsItIs() {
        for text in [
            "a.mov", "Ski day – été 2026/β.mov", "emoji 🎿.mov", "back\\slash", "", "family 👨\u{200D}👩\u{200D}👧.mov",
            "می\u{200C}خواهم.mov",
        ] {
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

    /// A name cannot reorder the rest of its line (the "Trojan Source" controls) or hide a
    /// difference from another name with an invisible character.
    func testBidiControlsAndInvisibleCharactersAreShown() {
        XCTAssertEqual(VisibleText.of("invoice\u{202E}vom.exe"), "invoice\\u{202E}vom.exe")
        XCTAssertEqual(VisibleText.of("a\u{200B}.mov"), "a\\u{200B}.mov")
        XCTAssertEqual(VisibleText.of("\u{FEFF}x"), "\\u{FEFF}x")
        for value: UInt32 in [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2060, 0x2066, 0x2067, 0x2068, 0x2069] {
            let scalar = Unicode.Scalar(value)!
            XCTAssertEqual(VisibleText.of(String(scalar)), "\\u{\(String(value, radix: 16, uppercase: true))}")
        }
    }
}
