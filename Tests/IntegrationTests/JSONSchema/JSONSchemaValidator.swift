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
        case .object(let members): checkMembers(members, against: node, path: path, errors: &errors)
        case .array(let elements): checkElements(elements, against: node, path: path, errors: &errors)
        case .string(let s): checkString(s, value, against: node, at: at, errors: &errors)
        case .number(let d, _): checkNumber(d, value, against: node, at: at, errors: &errors)
        case .null, .bool: break
        }
        checkCombinators(value, against: node, path: path, refsHere: refsHere, errors: &errors)
    }

    /// required, properties and additionalProperties.
    private func checkMembers(
        _ members: [String: JSONValue], against node: SchemaNode, path: String, errors: inout [String]
    ) {
        let at = Self.show(path)
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
    }

    /// minItems, maxItems and items.
    private func checkElements(
        _ elements: [JSONValue], against node: SchemaNode, path: String, errors: inout [String]
    ) {
        let at = Self.show(path)
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
    }

    /// minLength, maxLength and pattern.
    private func checkString(
        _ s: String, _ value: JSONValue, against node: SchemaNode, at: String, errors: inout [String]
    ) {
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
    }

    /// minimum, maximum, exclusiveMinimum and exclusiveMaximum.
    private func checkNumber(
        _ d: Double, _ value: JSONValue, against node: SchemaNode, at: String, errors: inout [String]
    ) {
        let shown = value.rendered()
        if let m = node.minimum, d < m { errors.append("\(at): \(shown) is less than minimum \(Self.show(m))") }
        if let m = node.maximum, d > m { errors.append("\(at): \(shown) is greater than maximum \(Self.show(m))") }
        if let m = node.exclusiveMinimum, d <= m {
            errors.append("\(at): \(shown) is not greater than exclusiveMinimum \(Self.show(m))")
        }
        if let m = node.exclusiveMaximum, d >= m {
            errors.append("\(at): \(shown) is not less than exclusiveMaximum \(Self.show(m))")
        }
    }

    /// allOf, anyOf, oneOf, not and if/then/else: the value against other schemas at the same place.
    private func checkCombinators(
        _ value: JSONValue, against node: SchemaNode, path: String, refsHere: Set<String>, errors: inout [String]
    ) {
        let at = Self.show(path)
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

    static func escape(_ key: String) -> String {
        key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    private static func show(_ path: String) -> String { path.isEmpty ? "(root)" : path }

    private static func show(_ d: Double) -> String { JSONValue.number(d, text: nil).rendered() }
}
