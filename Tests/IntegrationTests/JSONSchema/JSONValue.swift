import Foundation

/// An instance or schema converted once from `JSONSerialization` output, so the
/// boolean/number question is settled in one place.
enum JSONValue: Equatable {
    case null
    case bool(Bool)
    /// `text` is the exact digits of an integer NSNumber (e.g. UInt64.max), for messages.
    case number(Double, text: String?)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The class of `NSNumber(value: true)`: `__NSCFBoolean` on Linux and on macOS.
    private static let booleanClass = ObjectIdentifier(type(of: NSNumber(value: true)))

    /// Is `value` a JSON boolean (rather than a number that happens to be 0 or 1)?
    static func isBoolean(_ value: Any) -> Bool {
        if type(of: value) == Bool.self { return true }
        if let n = value as? NSNumber { return ObjectIdentifier(type(of: n)) == booleanClass }
        return false
    }

    /// nil (with the reasons added to `problems`) when `any` holds something that is not JSON.
    init?(_ any: Any, path: String, problems: inout [String]) {
        if any is NSNull {
            self = .null
        } else if Self.isBoolean(any) {
            self = .bool((any as? Bool) ?? (any as! NSNumber).boolValue)
        } else if let s = any as? String {
            self = .string(s)
        } else if let n = any as? NSNumber {
            let d = n.doubleValue
            guard d.isFinite else {
                problems.append("\(path.isEmpty ? "(root)" : path): \(n) is not a finite number")
                return nil
            }
            let integerTypes: Set<String> = ["c", "C", "s", "S", "i", "I", "l", "L", "q", "Q"]
            self = .number(d, text: integerTypes.contains(String(cString: n.objCType)) ? n.stringValue : nil)
        } else if let elements = any as? [Any] {
            var converted: [JSONValue] = []
            var ok = true
            for (index, element) in elements.enumerated() {
                if let v = JSONValue(element, path: path + "/\(index)", problems: &problems) {
                    converted.append(v)
                } else {
                    ok = false
                }
            }
            guard ok else { return nil }
            self = .array(converted)
        } else if let members = any as? [String: Any] {
            var converted: [String: JSONValue] = [:]
            var ok = true
            for key in members.keys.sorted() {
                let childPath = path + "/" + JSONSchemaValidator.escape(key)
                if let v = JSONValue(members[key]!, path: childPath, problems: &problems) {
                    converted[key] = v
                } else {
                    ok = false
                }
            }
            guard ok else { return nil }
            self = .object(converted)
        } else {
            problems.append("\(path.isEmpty ? "(root)" : path): \(type(of: any)) is not a JSON value")
            return nil
        }
    }

    static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x, _), .number(let y, _)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)): return x == y
        default: return false
        }
    }

    var isInteger: Bool {
        if case .number(let d, _) = self { return d.isFinite && d.rounded(.towardZero) == d }
        return false
    }

    func hasType(_ name: String) -> Bool {
        switch (name, self) {
        case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string),
            ("array", .array), ("object", .object):
            return true
        case ("integer", _): return isInteger
        default: return false
        }
    }

    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return isInteger ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Compact JSON, keys sorted, cut to about `limit` characters.
    func rendered(limit: Int = 80) -> String {
        let full = render()
        guard full.count > limit else { return full }
        return String(full.prefix(limit)) + "…"
    }

    private func render() -> String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let d, let text):
            if let text { return text }
            if d.rounded(.towardZero) == d, abs(d) < 1e15 { return String(Int64(d)) }
            return "\(d)"
        case .string(let s): return Self.quote(s)
        case .array(let elements): return "[" + elements.map { $0.render() }.joined(separator: ",") + "]"
        case .object(let members):
            return "{"
                + members.keys.sorted().map { Self.quote($0) + ":" + members[$0]!.render() }
                .joined(separator: ",") + "}"
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
