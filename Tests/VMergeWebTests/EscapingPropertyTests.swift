import Foundation
import TestSupport
import XCTest

@testable import VMergeCore
@testable import VMergeWeb

/// The escaping every value from outside goes through, as properties over seeded random text
/// (markup, quotes, controls, bidi controls, invisible characters, bytes that are not UTF-8,
/// URLs' own characters): what comes out has nothing its context reads as syntax, and reading it
/// back as that context does gives the text again (as `VisibleText` shows it, for HTML).
final class EscapingPropertyTests: XCTestCase {
    /// Characters chosen to hit every branch; each string is 0-24 of them.
    private static let alphabet: [Unicode.Scalar] =
        Array("<>&\"'=/\\ %+#?;:`$()[]{}abcXYZ019.-_~é".unicodeScalars)
        + [
            "\n", "\r", "\t", "\u{0}", "\u{1B}", "\u{7F}", "\u{85}", "\u{2028}", "\u{202E}", "\u{2066}", "\u{200B}",
            "\u{FEFF}", "\u{200D}", "🎿", "\u{10FFFF}", "\u{10FF80}",
        ]

    private func samples(seed: UInt64, count: Int = 2000) -> [String] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in
            let length = Int.random(in: 0...24, using: &random)
            return String(
                String.UnicodeScalarView(
                    (0..<length).map { _ in EscapingPropertyTests.alphabet.randomElement(using: &random)! }))
        }
    }

    /// HTML text and attribute values: no `<`, `>`, quote or line break is left, every `&`
    /// starts one of the five references, and decoding them gives the visible text back.
    func testHTMLEscapingRoundTrips() {
        for text in samples(seed: 35) {
            let escaped = HTMLText.escaped(text)
            XCTAssertFalse(escaped.contains { "<>\"'\n\r".contains($0) }, escaped)
            var decoded = escaped
            for (reference, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'")] {
                decoded = decoded.replacingOccurrences(of: reference, with: character)
            }
            XCTAssertEqual(decoded.replacingOccurrences(of: "&amp;", with: "&"), VisibleText.of(text), text.debugDescription)
            let ampersands = escaped.components(separatedBy: "&").dropFirst()
            XCTAssertTrue(
                ampersands.allSatisfy { rest in ["lt;", "gt;", "amp;", "quot;", "#39;"].contains { rest.hasPrefix($0) } },
                escaped)
            // Nothing that reorders or hides is left for the page either.
            XCTAssertFalse(escaped.unicodeScalars.contains { VisibleText.needsEscape($0) }, escaped.debugDescription)
        }
    }

    /// A list's cut: at most `limit` characters of the text before escaping, "…" when cut.
    func testCutTextKeepsItsLimit() {
        XCTAssertEqual(HTMLText.escaped("<ab>", limit: 4), "&lt;ab&gt;")
        XCTAssertEqual(HTMLText.escaped("<abc>", limit: 3), "&lt;ab…")
        let long = String(repeating: "é", count: 1_000_000)
        XCTAssertEqual(HTMLText.escaped(long, limit: 300).count, 301)
    }

    /// A Prometheus label value: only `\\`, `\"` and `\n` escapes, no raw quote or line feed, and
    /// reading it back gives the text (a byte that is not UTF-8 as U+FFFD).
    func testLabelValuesRoundTrip() {
        for text in samples(seed: 36) {
            let escaped = MetricFamily.escapedLabelValue(text)
            XCTAssertFalse(escaped.contains("\n"), escaped)
            var decoded = ""
            var pending = false
            for scalar in escaped.unicodeScalars {
                if pending {
                    XCTAssertTrue(["\\", "\"", "n"].contains(scalar), escaped.debugDescription)
                    decoded.unicodeScalars.append(scalar == "n" ? "\n" : scalar)
                    pending = false
                } else if scalar == "\\" {
                    pending = true
                } else {
                    XCTAssertNotEqual(scalar, "\"", escaped.debugDescription)
                    decoded.unicodeScalars.append(scalar)
                }
            }
            XCTAssertFalse(pending, escaped)
            let expected = String(
                String.UnicodeScalarView(text.unicodeScalars.map { FileName.isEscapedByte($0) ? "\u{FFFD}" : $0 }))
            XCTAssertEqual(decoded, expected, text.debugDescription)
        }
    }

    /// A URL component: only unreserved characters and %XX, and percent-decoding gives the text.
    func testURLComponentsRoundTrip() {
        for text in samples(seed: 37) {
            let encoded = URLText.component(text)
            XCTAssertTrue(
                encoded.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "%" || "-._~".unicodeScalars.contains($0)
                    || CharacterSet.alphanumerics.contains($0)) }, encoded)
            // Decoded byte by byte (Foundation's removingPercentEncoding drops a leading BOM).
            var bytes: [UInt8] = []
            var rest = Substring(encoded)
            while let first = rest.first {
                if first == "%", let byte = UInt8(rest.dropFirst().prefix(2), radix: 16) {
                    bytes.append(byte)
                    rest = rest.dropFirst(3)
                } else {
                    bytes += Array(String(first).utf8)
                    rest = rest.dropFirst()
                }
            }
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), text, text.debugDescription)
        }
    }

    /// Where an action sends the browser back: a path on this server or "/", never another site
    /// or a header break, whatever the form says.
    func testReturnPathsStayOnTheServer() {
        for text in samples(seed: 38) + samples(seed: 39).map({ "/" + $0 }) + samples(seed: 40).map({ "//" + $0 }) {
            let path = URLText.localReturn(text)
            XCTAssertTrue(path == "/" || path == text, path)
            XCTAssertTrue(path.hasPrefix("/") && !path.hasPrefix("//") && !path.contains("\\"), path)
            XCTAssertTrue(path.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }, path.debugDescription)
        }
    }
}
