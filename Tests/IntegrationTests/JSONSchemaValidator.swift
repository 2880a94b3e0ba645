import Foundation

/// A small JSON Schema validator for the tests: the subset of draft 2020-12 that a
/// hand-written report schema uses, with nothing but Foundation.
///
/// Supported keywords: `type` (a name or an array of names: object, array, string, number,
/// integer, boolean, null), `properties`, `required`, `additionalProperties` (a boolean or a
/// schema), `items` (one schema), `minItems`, `maxItems`, `enum`, `const`, `minimum`,
/// `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength`, `pattern`,
/// `$ref` (local only: `#`, `#/$defs/name`, `#/definitions/name` or any other JSON pointer
/// into the same document), `$defs`, `definitions`, `allOf`, `anyOf`, `oneOf`, `not`,
/// `if`/`then`/`else`, and the boolean schemas `true` and `false`. Ignored annotations:
/// `$schema`, `$id` (at the root only), `$comment`, `title`, `description`, `examples`,
/// `default`.
///
/// Any other keyword makes `init` throw, so a schema that relies on something this
/// validator does not check cannot pass silently.
///
/// Booleans: JSON `true` is a boolean, never the integer 1, and the other way round, on
/// Linux as on macOS. swift-corelibs-foundation has no `CFBooleanGetTypeID`, and its
/// `JSONSerialization` hands booleans out either as Swift `Bool` (through an `NSDictionary`
/// subscript) or as `NSNumber` of the private class `__NSCFBoolean` (through `[Any]`);
/// `NSNumber(value: 1) is Bool` is true there, so `is Bool` cannot tell them apart. A value
/// is a boolean when its dynamic type is `Bool`, or when it is an `NSNumber` of the same
/// class as `NSNumber(value: true)` (`__NSCFBoolean` on both platforms).
struct JSONSchemaValidator {
    struct SchemaError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private let root: SchemaNode
    private let refTargets: [String: SchemaNode]

    /// `schema` is `JSONSerialization` output (or the same shapes built in Swift).
    /// Throws on a schema that is not JSON, a keyword this validator does not support, a
    /// keyword value of the wrong shape, an invalid `pattern`, or a `$ref` that does not
    /// resolve inside the document.
    init(schema: Any) throws {
        var problems: [String] = []
        guard let document = JSONValue(schema, path: "", problems: &problems) else {
            throw SchemaError("the schema is not a JSON value: " + problems.joined(separator: "; "))
        }
        var parser = SchemaParser(document: document)
        root = try parser.parse(document, at: "#", isRoot: true)
        try parser.resolveReferences()
        refTargets = parser.refTargets
    }

    /// Reads and compiles a schema file (a path, absolute or relative to the working directory).
    init(schemaFile: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: schemaFile))
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw SchemaError("\(schemaFile): not valid JSON: \(error)")
        }
        do {
            try self.init(schema: json)
        } catch let error as SchemaError {
            throw SchemaError("\(schemaFile): \(error.description)")
        }
    }

    /// Every way `instance` breaks the schema, one line each, as "path: problem" with a
    /// JSON pointer path ("(root)" for the whole instance); empty when it is valid.
    func validate(_ instance: Any) -> [String] {
        var errors: [String] = []
        guard let value = JSONValue(instance, path: "", problems: &errors) else { return errors }
        check(value, against: root, path: "", refsHere: [], errors: &errors)
        return errors
    }

    // MARK: - Validation

    private func check(
        _ value: JSONValue, against node: SchemaNode, path: String, refsHere: Set<String>,
        errors: inout [String]
    ) {
        let at = Self.show(path)
        if let allowed = node.constant {
            if !allowed { errors.append("\(at): no value is allowed here (schema false)") }
            return
        }
        if let ref = node.ref {
            if refsHere.contains(ref) {
                errors.append("\(at): $ref \"\(ref)\" refers back to itself without descending into the value")
            } else if let target = refTargets[ref] {
                check(value, against: target, path: path, refsHere: refsHere.union([ref]), errors: &errors)
            }
        }
        if let types = node.types, !types.contains(where: value.hasType) {
            let got = value == .null ? "null" : "\(value.kindName) \(value.rendered())"
            errors.append("\(at): expected \(types.joined(separator: " or ")), got \(got)")
        }
        if let options = node.enumValues, !options.contains(value) {
            let list = options.map { $0.rendered() }.joined(separator: ", ")
            errors.append("\(at): \(value.rendered()) is not one of [\(list)]")
        }
        if let constant = node.constValue, constant != value {
            errors.append("\(at): expected \(constant.rendered()) (const), got \(value.rendered())")
        }

        switch value {
        case .object(let members):
            for name in node.required where members[name] == nil {
                errors.append("\(at): missing required property \"\(name)\"")
            }
            for key in members.keys.sorted() {
                let child = members[key]!
                let childPath = path + "/" + Self.escape(key)
                if let sub = node.properties[key] {
                    check(child, against: sub, path: childPath, refsHere: [], errors: &errors)
                } else if let extra = node.additionalProperties {
                    if extra.constant == false {
                        errors.append("\(at): property \"\(key)\" is not allowed (additionalProperties is false)")
                    } else {
                        check(child, against: extra, path: childPath, refsHere: [], errors: &errors)
                    }
                }
            }
        case .array(let elements):
            if let n = node.minItems, elements.count < n {
                errors.append("\(at): \(elements.count) item(s), fewer than minItems \(n)")
            }
            if let n = node.maxItems, elements.count > n {
                errors.append("\(at): \(elements.count) item(s), more than maxItems \(n)")
            }
            if let sub = node.items {
                for (index, element) in elements.enumerated() {
                    check(element, against: sub, path: path + "/\(index)", refsHere: [], errors: &errors)
                }
            }
        case .string(let s):
            let length = s.unicodeScalars.count
            if let n = node.minLength, length < n {
                errors.append("\(at): \(value.rendered()) is shorter than minLength \(n)")
            }
            if let n = node.maxLength, length > n {
                errors.append("\(at): \(value.rendered()) is longer than maxLength \(n)")
            }
            if let pattern = node.pattern,
                pattern.regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil
            {
                errors.append("\(at): \(value.rendered()) does not match pattern \(pattern.source)")
            }
        case .number(let d, _):
            let shown = value.rendered()
            if let m = node.minimum, d < m { errors.append("\(at): \(shown) is less than minimum \(Self.show(m))") }
            if let m = node.maximum, d > m { errors.append("\(at): \(shown) is greater than maximum \(Self.show(m))") }
            if let m = node.exclusiveMinimum, d <= m {
                errors.append("\(at): \(shown) is not greater than exclusiveMinimum \(Self.show(m))")
            }
            if let m = node.exclusiveMaximum, d >= m {
                errors.append("\(at): \(shown) is not less than exclusiveMaximum \(Self.show(m))")
            }
        case .null, .bool:
            break
        }

        for sub in node.allOf ?? [] {
            check(value, against: sub, path: path, refsHere: refsHere, errors: &errors)
        }
        if let alternatives = node.anyOf {
            let results = alternatives.map { errorsOf(value, $0, path, refsHere) }
            if !results.contains(where: \.isEmpty) {
                errors.append("\(at): matches none of the anyOf alternatives \(Self.summary(results))")
            }
        }
        if let alternatives = node.oneOf {
            let results = alternatives.map { errorsOf(value, $0, path, refsHere) }
            let matching = results.indices.filter { results[$0].isEmpty }
            if matching.isEmpty {
                errors.append("\(at): matches none of the oneOf alternatives \(Self.summary(results))")
            } else if matching.count > 1 {
                let which = matching.map { "#\($0)" }.joined(separator: ", ")
                errors.append("\(at): matches \(matching.count) oneOf alternatives (\(which)), expected exactly one")
            }
        }
        if let sub = node.not, errorsOf(value, sub, path, refsHere).isEmpty {
            errors.append("\(at): \(value.rendered()) matches the schema under \"not\"")
        }
        if let condition = node.ifNode {
            let branch = errorsOf(value, condition, path, refsHere).isEmpty ? node.thenNode : node.elseNode
            if let branch { check(value, against: branch, path: path, refsHere: refsHere, errors: &errors) }
        }
    }

    private func errorsOf(_ value: JSONValue, _ node: SchemaNode, _ path: String, _ refsHere: Set<String>) -> [String] {
        var errors: [String] = []
        check(value, against: node, path: path, refsHere: refsHere, errors: &errors)
        return errors
    }

    /// "[#0: first error (+2 more); #1: ...]" for the alternatives of anyOf/oneOf.
    private static func summary(_ results: [[String]]) -> String {
        let parts = results.enumerated().map { index, errors -> String in
            let more = errors.count > 1 ? " (+\(errors.count - 1) more)" : ""
            return "#\(index): \(errors.first ?? "ok")\(more)"
        }
        return "[" + parts.joined(separator: "; ") + "]"
    }

    fileprivate static func escape(_ key: String) -> String {
        key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    private static func show(_ path: String) -> String { path.isEmpty ? "(root)" : path }

    private static func show(_ d: Double) -> String { JSONValue.number(d, text: nil).rendered() }
}

// MARK: - JSON values

/// An instance or schema converted once from `JSONSerialization` output, so the
/// boolean/number question is settled in one place.
private enum JSONValue: Equatable {
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

// MARK: - Compiled schema

private final class SchemaNode {
    /// Set for the boolean schemas `true` / `false`; every other field is then unused.
    var constant: Bool?
    var types: [String]?
    var properties: [String: SchemaNode] = [:]
    var required: [String] = []
    var additionalProperties: SchemaNode?
    var items: SchemaNode?
    var minItems: Int?
    var maxItems: Int?
    var enumValues: [JSONValue]?
    var constValue: JSONValue?
    var minimum: Double?
    var maximum: Double?
    var exclusiveMinimum: Double?
    var exclusiveMaximum: Double?
    var minLength: Int?
    var maxLength: Int?
    var pattern: (source: String, regex: NSRegularExpression)?
    var ref: String?
    var allOf: [SchemaNode]?
    var anyOf: [SchemaNode]?
    var oneOf: [SchemaNode]?
    var not: SchemaNode?
    var ifNode: SchemaNode?
    var thenNode: SchemaNode?
    var elseNode: SchemaNode?
}

private struct SchemaParser {
    typealias SchemaError = JSONSchemaValidator.SchemaError

    let document: JSONValue
    var refTargets: [String: SchemaNode] = [:]
    private var pendingRefs: [(ref: String, at: String)] = []

    init(document: JSONValue) { self.document = document }

    private static let typeNames: Set<String> = ["object", "array", "string", "number", "integer", "boolean", "null"]
    private static let annotations: Set<String> = [
        "$schema", "$comment", "title", "description", "examples", "default",
    ]

    mutating func parse(_ value: JSONValue, at path: String, isRoot: Bool = false) throws -> SchemaNode {
        let node = SchemaNode()
        let members: [String: JSONValue]
        switch value {
        case .bool(let b):
            node.constant = b
            return node
        case .object(let m):
            members = m
        default:
            throw SchemaError("\(path): a schema must be an object or a boolean, got \(value.kindName)")
        }
        for key in members.keys.sorted() {
            let v = members[key]!
            let here = path + "/" + JSONSchemaValidator.escape(key)
            switch key {
            case _ where Self.annotations.contains(key):
                continue
            case "$id":
                // A nested $id starts a new base URI, which local `#...` references would then
                // have to follow; that is not supported.
                guard isRoot else { throw SchemaError("\(here): $id below the root is not supported") }
            case "type":
                let names: [String]
                switch v {
                case .string(let s): names = [s]
                case .array(let a) where !a.isEmpty:
                    names = try a.map {
                        guard case .string(let s) = $0 else { throw SchemaError("\(here): type names must be strings") }
                        return s
                    }
                default: throw SchemaError("\(here): must be a type name or a non-empty array of them")
                }
                if let bad = names.first(where: { !Self.typeNames.contains($0) }) {
                    throw SchemaError("\(here): unknown type \"\(bad)\"")
                }
                node.types = names
            case "properties":
                guard case .object(let props) = v else { throw SchemaError("\(here): must be an object") }
                for name in props.keys.sorted() {
                    node.properties[name] = try parse(props[name]!, at: here + "/" + JSONSchemaValidator.escape(name))
                }
            case "required":
                guard case .array(let names) = v else { throw SchemaError("\(here): must be an array of strings") }
                node.required = try names.map {
                    guard case .string(let s) = $0 else { throw SchemaError("\(here): must be an array of strings") }
                    return s
                }
            case "additionalProperties": node.additionalProperties = try parse(v, at: here)
            case "items":
                if case .array = v {
                    throw SchemaError("\(here): the array form of items (draft 7 tuples) is not supported")
                }
                node.items = try parse(v, at: here)
            case "minItems": node.minItems = try count(v, here)
            case "maxItems": node.maxItems = try count(v, here)
            case "minLength": node.minLength = try count(v, here)
            case "maxLength": node.maxLength = try count(v, here)
            case "minimum": node.minimum = try number(v, here)
            case "maximum": node.maximum = try number(v, here)
            case "exclusiveMinimum": node.exclusiveMinimum = try number(v, here)
            case "exclusiveMaximum": node.exclusiveMaximum = try number(v, here)
            case "enum":
                guard case .array(let options) = v, !options.isEmpty else {
                    throw SchemaError("\(here): must be a non-empty array")
                }
                node.enumValues = options
            case "const": node.constValue = v
            case "pattern":
                guard case .string(let source) = v else { throw SchemaError("\(here): must be a string") }
                do {
                    node.pattern = (source, try NSRegularExpression(pattern: source))
                } catch {
                    throw SchemaError("\(here): invalid regular expression \(v.rendered())")
                }
            case "$ref":
                guard case .string(let ref) = v else { throw SchemaError("\(here): must be a string") }
                guard ref == "#" || ref.hasPrefix("#/") else {
                    throw SchemaError(
                        "\(here): only local references (\"#\" or \"#/...\") are supported, got \"\(ref)\"")
                }
                node.ref = ref
                pendingRefs.append((ref, here))
            case "$defs", "definitions":
                guard case .object(let defs) = v else { throw SchemaError("\(here): must be an object") }
                // Checked here so an unsupported keyword in an unused definition is found too.
                for name in defs.keys.sorted() {
                    _ = try parse(defs[name]!, at: here + "/" + JSONSchemaValidator.escape(name))
                }
            case "allOf", "anyOf", "oneOf":
                guard case .array(let subs) = v, !subs.isEmpty else {
                    throw SchemaError("\(here): must be a non-empty array of schemas")
                }
                let nodes = try subs.enumerated().map { try parse($1, at: here + "/\($0)") }
                switch key {
                case "allOf": node.allOf = nodes
                case "anyOf": node.anyOf = nodes
                default: node.oneOf = nodes
                }
            case "not": node.not = try parse(v, at: here)
            case "if": node.ifNode = try parse(v, at: here)
            case "then": node.thenNode = try parse(v, at: here)
            case "else": node.elseNode = try parse(v, at: here)
            default:
                throw SchemaError("\(path): unsupported keyword \"\(key)\"")
            }
        }
        return node
    }

    /// Compiles the target of every `$ref` met so far (and of those met on the way).
    mutating func resolveReferences() throws {
        while let pending = pendingRefs.popLast() {
            let (ref, at) = pending
            if refTargets[ref] != nil { continue }
            guard let target = resolve(ref) else {
                throw SchemaError("\(at): $ref \"\(ref)\" does not point at anything in this document")
            }
            refTargets[ref] = try parse(target, at: ref)
        }
    }

    /// Follows a local reference, "#" or "#/json/pointer", through the document.
    private func resolve(_ ref: String) -> JSONValue? {
        guard let pointer = String(ref.dropFirst()).removingPercentEncoding else { return nil }
        var current = document
        for raw in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let token = raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(token), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    private func count(_ v: JSONValue, _ here: String) throws -> Int {
        guard case .number(let d, _) = v, v.isInteger, d >= 0, d <= Double(Int32.max) else {
            throw SchemaError("\(here): must be a non-negative integer, got \(v.rendered())")
        }
        return Int(d)
    }

    private func number(_ v: JSONValue, _ here: String) throws -> Double {
        guard case .number(let d, _) = v else { throw SchemaError("\(here): must be a number, got \(v.rendered())") }
        return d
    }
}
