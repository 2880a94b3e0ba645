import Foundation
import XCTest

@testable import VMergeCore

final class JSONTests: XCTestCase {
    func testCompactAndPretty() {
        let value = JSON.object([
            ("s", .string("a\"b\\c\n\u{1}é")), ("i", .int(-3)), ("d", .number(1.5)), ("whole", .number(2)),
            ("tiny", .number(0.0000001)), ("nan", .number(.nan)), ("b", .bool(true)), ("n", .null),
            ("a", .array([.int(1), .array([]), .object([])])),
        ])
        XCTAssertEqual(
            value.text(),
            #"{"s":"a\"b\\c\n\u0001é","i":-3,"d":1.5,"whole":2,"tiny":0,"nan":null,"b":true,"n":null,"a":[1,[],{}]}"#)
        XCTAssertEqual(JSON.object([("k", .array([.int(1)]))]).text(pretty: true), "{\n  \"k\": [\n    1\n  ]\n}")
        // What it writes, Foundation reads back.
        let parsed = try? JSONSerialization.jsonObject(with: Data(value.text(pretty: true).utf8)) as? [String: Any]
        XCTAssertEqual(parsed?["s"] as? String, "a\"b\\c\n\u{1}é")
        XCTAssertEqual(parsed?.count, 9)
    }

    /// A text cut to N bytes of JSON is at most N bytes there, whatever it holds (a byte that is
    /// not UTF-8 is 12, a control 6, "é" 2): whole when it fits, else a prefix and "…".
    func testACutTextFitsItsBytesInJSON() {
        let texts = [
            "plain name.mov", FileName.decode([0x61, 0xFF, 0xFE, 0x62, 0xC3]), "\u{1}\u{7f}\"\\\n", "é😀\u{2028}x",
            String(repeating: FileName.decode([0xFF]), count: 40),
        ]
        for text in texts {
            for limit in 0...80 {
                let cut = JSON.cut(text, toBytes: limit)
                XCTAssertLessThanOrEqual(JSON.escapedLength(cut), limit, "\(text.debugDescription) in \(limit)")
                if JSON.escapedLength(text) <= limit {
                    XCTAssertEqual(cut, text)
                } else if !cut.isEmpty {
                    XCTAssertTrue(cut.hasSuffix("…") && text.unicodeScalars.starts(with: cut.unicodeScalars.dropLast()))
                }
            }
        }
        XCTAssertEqual(JSON.cut(FileName.decode([0xFF, 0xFF]), toBytes: 16), FileName.decode([0xFF]) + "…")
    }
}
