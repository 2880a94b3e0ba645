import Foundation

/// A JSON value that keeps its keys in the order written, so reports read top-down the same
/// way every time, and writes explicit nulls (a consumer can tell "none" from "not reported").
package indirect enum JSON: Sendable, Equatable {
    case object([(String, JSON)])
    case array([JSON])
    case string(String)
    case int(Int64)
    case number(Double)
    case bool(Bool)
    case null
    /// JSON text already made, written as it is: a document stored whole (a job's report as the
    /// database keeps it), embedded without being parsed and written again. Only for text that is
    /// JSON (PostgreSQL's `jsonb::text`, vmerge's own `text()`).
    case raw(String)

    package static func == (a: JSON, b: JSON) -> Bool { a.text() == b.text() }

    package static func string(_ value: String?) -> JSON { value.map { .string($0) } ?? .null }
    package static func number(_ value: Double?) -> JSON { value.map { .number($0) } ?? .null }
    package static func int(_ value: Int64?) -> JSON { value.map { .int($0) } ?? .null }
    package static func int(_ value: Int) -> JSON { .int(Int64(value)) }

    /// An object's member (the first of that name), or nil.
    package subscript(key: String) -> JSON? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    package var stringValue: String? { if case let .string(text) = self { text } else { nil } }
    package var boolValue: Bool? { if case let .bool(value) = self { value } else { nil } }
    package var arrayValue: [JSON] { if case let .array(items) = self { items } else { [] } }
    package var int64Value: Int64? {
        switch self {
        case let .int(value): value
        case let .number(value): value.isFinite ? Int64(exactly: value.rounded()) : nil
        default: nil
        }
    }
    package var doubleValue: Double? {
        switch self {
        case let .int(value): Double(value)
        case let .number(value): value
        default: nil
        }
    }

    /// Compact (one line, for progress streams) or indented by two spaces.
    package func text(pretty: Bool = false) -> String {
        var out = ""
        write(into: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(into out: inout String, pretty: Bool, indent: Int) {
        let newline = pretty ? "\n" + String(repeating: "  ", count: indent + 1) : ""
        let close = pretty ? "\n" + String(repeating: "  ", count: indent) : ""
        switch self {
        case let .object(members):
            if members.isEmpty { return out += "{}" }
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                out += (i == 0 ? "" : ",") + newline
                JSON.quote(key, into: &out)
                out += pretty ? ": " : ":"
                value.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            out += close + "}"
        case let .array(items):
            if items.isEmpty { return out += "[]" }
            out += "["
            for (i, item) in items.enumerated() {
                out += (i == 0 ? "" : ",") + newline
                item.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            out += close + "]"
        case let .string(text): JSON.quote(text, into: &out)
        case let .int(value): out += String(value)
        case let .number(value):
            // JSON has no NaN or infinity; six decimals are finer than any time vmerge reports.
            guard value.isFinite else { return out += "null" }
            var text = String(format: "%.6f", value)
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
            out += text == "-0" ? "0" : text
        case let .bool(value): out += value ? "true" : "false"
        case .null: out += "null"
        case let .raw(text): out += text
        }
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars { escape(scalar, into: &out) }
        out += "\""
    }

    /// `text` cut so that its form in a JSON string (without the quotes) is at most `bytes`
    /// bytes, ending in "…" when cut. A cap in characters bounds nothing: a name's byte that is
    /// not UTF-8 is one character and 12 bytes of JSON, a control 6.
    package static func cut(_ text: String, toBytes bytes: Int) -> String {
        let ellipsis = "…".utf8.count
        var out = ""
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            escape(scalar, into: &out)
            // Past the limit: the prefix that leaves room for the ellipsis. Until then the rest
            // may still fit whole, without one.
            if out.utf8.count > bytes { return bytes >= ellipsis ? String(kept) + "…" : "" }
            if out.utf8.count <= bytes - ellipsis { kept.append(scalar) }
        }
        return text
    }

    /// The bytes of `text` in a JSON string, without the quotes.
    package static func escapedLength(_ text: String) -> Int {
        var out = ""
        for scalar in text.unicodeScalars { escape(scalar, into: &out) }
        return out.utf8.count
    }

    /// "\\u" and four lower-case hex digits, as "%04x" writes them (String(format:) is slow on
    /// Linux, and a name's every byte that is not UTF-8 takes two).
    private static func unicodeEscape(_ value: UInt32, into out: inout String) {
        out += "\\u"
        for shift: UInt32 in [12, 8, 4, 0] { out.unicodeScalars.append(hexDigits[Int((value >> shift) & 0xF)]) }
    }

    private static let hexDigits = Array("0123456789abcdef".unicodeScalars)

    private static func escape(_ scalar: Unicode.Scalar, into out: inout String) {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _
        where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}"
            || scalar == "\u{2029}":
            // Controls, C1 controls and the line separators as escapes: the text stays one line
            // on a terminal and valid JSON (a JavaScript reader takes U+2028 as a line end).
            unicodeEscape(scalar.value, into: &out)
        case _ where FileName.isEscapedByte(scalar):
            // A name's byte that is not UTF-8 (`FileName`), written so it shows in the text.
            unicodeEscape(0xDBFF, into: &out)
            unicodeEscape(0xDC00 + (scalar.value & 0x3FF), into: &out)
        default: out.unicodeScalars.append(scalar)
        }
    }
}
