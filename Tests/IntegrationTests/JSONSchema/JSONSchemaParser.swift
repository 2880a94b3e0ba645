import Foundation

/// One schema (or subschema) of the document, compiled: the keywords JSONSchemaValidator checks.
final class SchemaNode {
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

/// Compiles a schema document into SchemaNodes, refusing every keyword, keyword value or `$ref`
/// that JSONSchemaValidator does not support, and resolves the local references.
struct SchemaParser {
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
