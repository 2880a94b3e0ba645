import Foundation
import XCTest

/// The test-suite JSON Schema validator rejects what it should, keyword by keyword, so a
/// report test that uses it cannot pass because the validator accepts everything.
final class JSONSchemaValidatorTests: XCTestCase {
    // MARK: - Helpers

    /// Parses JSON text the way report tests do (JSONSerialization, fragments allowed).
    private func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    private func validator(_ schema: String) throws -> JSONSchemaValidator {
        try JSONSchemaValidator(schema: json(schema))
    }

    /// Errors for `instance` (JSON text) against `schema` (JSON text).
    private func errors(_ schema: String, _ instance: String) throws -> [String] {
        try validator(schema).validate(json(instance))
    }

    private func assertValid(
        _ schema: String, _ instances: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let v = try validator(schema)
        for instance in instances {
            XCTAssertEqual(v.validate(try json(instance)), [], "\(instance) against \(schema)", file: file, line: line)
        }
    }

    private func assertInvalid(
        _ schema: String, _ instances: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let v = try validator(schema)
        for instance in instances {
            XCTAssertFalse(
                v.validate(try json(instance)).isEmpty, "\(instance) against \(schema)", file: file, line: line)
        }
    }

    private func assertSchemaRejected(
        _ schema: String, mentioning fragment: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try validator(schema), schema, file: file, line: line) { error in
            XCTAssertTrue(
                "\(error)".contains(fragment), "\(error) should mention \(fragment)", file: file, line: line)
        }
    }

    // MARK: - type

    func testEachTypeName() throws {
        let samples: [String: String] = [
            "object": #"{"a":1}"#, "array": "[1,2]", "string": #""s""#, "number": "1.5",
            "integer": "7", "boolean": "true", "null": "null",
        ]
        // Which sample kinds each type name accepts.
        let accepts: [String: Set<String>] = [
            "object": ["object"], "array": ["array"], "string": ["string"],
            "number": ["number", "integer"], "integer": ["integer"], "boolean": ["boolean"], "null": ["null"],
        ]
        for (typeName, accepted) in accepts {
            let v = try validator(#"{"type":"\#(typeName)"}"#)
            for (kind, text) in samples {
                let errors = v.validate(try json(text))
                XCTAssertEqual(errors.isEmpty, accepted.contains(kind), "\(text) as \(typeName): \(errors)")
            }
        }
    }

    func testBooleansAreNotIntegersAndIntegersAreNotBooleans() throws {
        // Through JSONSerialization at the top level, in arrays and in objects: on Linux the
        // booleans come out as __NSCFBoolean or as Swift Bool depending on the container, and
        // `NSNumber(value: 1) is Bool` is true there.
        try assertInvalid(#"{"type":"integer"}"#, ["true", "false"])
        try assertInvalid(#"{"type":"number"}"#, ["true", "false"])
        try assertInvalid(#"{"type":"boolean"}"#, ["1", "0", "1.0"])
        try assertValid(#"{"type":"boolean"}"#, ["true", "false"])
        try assertValid(#"{"type":"integer"}"#, ["1", "0"])
        try assertInvalid(#"{"type":"array","items":{"type":"integer"}}"#, ["[1,true]", "[false]"])
        try assertInvalid(#"{"type":"array","items":{"type":"boolean"}}"#, ["[true,1]", "[0]"])
        try assertValid(#"{"type":"array","items":{"type":"boolean"}}"#, ["[true,false]"])
        let object = #"{"properties":{"n":{"type":"integer"},"b":{"type":"boolean"}}}"#
        try assertValid(object, [#"{"n":1,"b":true}"#, #"{"n":0,"b":false}"#])
        XCTAssertEqual(
            try errors(object, #"{"n":true,"b":1}"#),
            [
                "/b: expected boolean, got integer 1",
                "/n: expected integer, got boolean true",
            ])

        // Values built in Swift rather than parsed.
        let integer = try validator(#"{"type":"integer"}"#)
        let boolean = try validator(#"{"type":"boolean"}"#)
        for value: Any in [true, false, NSNumber(value: true), NSNumber(value: false)] {
            XCTAssertFalse(integer.validate(value).isEmpty, "\(value) as integer")
            XCTAssertEqual(boolean.validate(value), [], "\(value) as boolean")
        }
        for value: Any in [1, 0, NSNumber(value: 1), NSNumber(value: 0), NSNumber(value: Int8(1)), UInt8(0)] {
            XCTAssertEqual(integer.validate(value), [], "\(value) as integer")
            XCTAssertFalse(boolean.validate(value).isEmpty, "\(value) as boolean")
        }
        let dictionary: [String: Any] = ["n": true, "b": 1]
        XCTAssertEqual(try validator(object).validate(dictionary).count, 2)
    }

    func testIntegerMeansNoFractionalPart() throws {
        try assertValid(#"{"type":"integer"}"#, ["3", "-3", "3.0", "1e3", "12345678901234"])
        try assertInvalid(#"{"type":"integer"}"#, ["3.5", "-0.25", #""3""#])
        XCTAssertEqual(try errors(#"{"type":"integer"}"#, "1.5"), ["(root): expected integer, got number 1.5"])
    }

    func testTypeArray() throws {
        try assertValid(#"{"type":["string","null"]}"#, [#""x""#, "null"])
        try assertInvalid(#"{"type":["string","null"]}"#, ["1", "false", "{}", "[]"])
        XCTAssertEqual(
            try errors(#"{"type":["string","null"]}"#, "false"),
            [
                "(root): expected string or null, got boolean false"
            ])
    }

    // MARK: - objects

    func testPropertiesRequiredAndAdditionalPropertiesFalse() throws {
        let schema = #"""
            {"type":"object","required":["name","count"],"additionalProperties":false,
             "properties":{"name":{"type":"string"},"count":{"type":"integer"},"note":{"type":"string"}}}
            """#
        try assertValid(schema, [#"{"name":"a","count":1}"#, #"{"name":"a","count":1,"note":"n"}"#])
        XCTAssertEqual(try errors(schema, #"{"name":"a"}"#), [#"(root): missing required property "count""#])
        XCTAssertEqual(
            try errors(schema, #"{"name":"a","count":1,"extra":true}"#),
            [
                #"(root): property "extra" is not allowed (additionalProperties is false)"#
            ])
        XCTAssertEqual(
            try errors(schema, #"{"name":2,"count":"1"}"#),
            [
                #"/count: expected integer, got string "1""#,
                "/name: expected string, got integer 2",
            ])
        // required/properties say nothing about non-objects; type does.
        XCTAssertEqual(try errors(schema, "[]"), ["(root): expected object, got array []"])
    }

    func testAdditionalPropertiesAsSchemaAndDefaultOpen() throws {
        let schema = #"{"properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}"#
        try assertValid(schema, [#"{"a":"x","b":1,"c":2}"#])
        XCTAssertEqual(try errors(schema, #"{"a":"x","b":"no"}"#), [#"/b: expected integer, got string "no""#])
        // Without additionalProperties anything else is allowed.
        try assertValid(#"{"properties":{"a":{"type":"string"}}}"#, [#"{"a":"x","b":[1,{"z":null}]}"#])
    }

    func testPathsAreJSONPointers() throws {
        let schema = #"{"properties":{"a/b":{"properties":{"c~d":{"type":"string"}}}}}"#
        XCTAssertEqual(try errors(schema, #"{"a/b":{"c~d":1}}"#), ["/a~1b/c~0d: expected string, got integer 1"])
    }

    // MARK: - arrays

    func testItemsMinItemsAndMaxItems() throws {
        let schema = #"{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3}"#
        try assertValid(schema, [#"["a"]"#, #"["a","b","c"]"#])
        XCTAssertEqual(try errors(schema, "[]"), ["(root): 0 item(s), fewer than minItems 1"])
        XCTAssertEqual(try errors(schema, #"["a","b","c","d"]"#), ["(root): 4 item(s), more than maxItems 3"])
        XCTAssertEqual(
            try errors(schema, #"["a",2,null]"#),
            [
                "/1: expected string, got integer 2",
                "/2: expected string, got null",
            ])
    }

    // MARK: - enum and const

    func testEnumReportsTheValueAndTheChoices() throws {
        let schema = #"""
            {"properties":{"inputs":{"items":{"properties":{"status":{"enum":["kept","dropped-short"]}}}}}}
            """#
        try assertValid(schema, [#"{"inputs":[{"status":"kept"},{"status":"dropped-short"}]}"#])
        let instance = #"{"inputs":[{"status":"kept"},{},{"status":"kept"},{"status":"kep"}]}"#
        XCTAssertEqual(
            try errors(schema, instance), [#"/inputs/3/status: "kep" is not one of ["kept", "dropped-short"]"#])
    }

    func testEnumAndConstCompareJSONValues() throws {
        try assertValid(
            #"{"enum":[1,"a",null,[1,2],{"k":true}]}"#, ["1", "1.0", #""a""#, "null", "[1,2]", #"{"k":true}"#])
        try assertInvalid(#"{"enum":[1,"a",null,[1,2],{"k":true}]}"#, ["true", #""1""#, "[2,1]", #"{"k":1}"#, "2"])
        try assertValid(#"{"const":true}"#, ["true"])
        try assertInvalid(#"{"const":true}"#, ["1", "false", #""true""#])
        try assertValid(#"{"const":0}"#, ["0", "0.0"])
        try assertInvalid(#"{"const":0}"#, ["false", "null"])
        XCTAssertEqual(try errors(#"{"const":"v1"}"#, #""v2""#), [#"(root): expected "v1" (const), got "v2""#])
    }

    // MARK: - numbers and strings

    func testNumericBounds() throws {
        try assertValid(#"{"minimum":0,"maximum":10}"#, ["0", "10", "5.5"])
        XCTAssertEqual(try errors(#"{"minimum":0,"maximum":10}"#, "-1"), ["(root): -1 is less than minimum 0"])
        XCTAssertEqual(try errors(#"{"minimum":0,"maximum":10}"#, "10.5"), ["(root): 10.5 is greater than maximum 10"])
        try assertValid(#"{"exclusiveMinimum":0,"exclusiveMaximum":1}"#, ["0.001", "0.999"])
        XCTAssertEqual(
            try errors(#"{"exclusiveMinimum":0}"#, "0"), ["(root): 0 is not greater than exclusiveMinimum 0"])
        XCTAssertEqual(try errors(#"{"exclusiveMaximum":1}"#, "1"), ["(root): 1 is not less than exclusiveMaximum 1"])
        // Bounds only concern numbers.
        try assertValid(#"{"minimum":5}"#, [#""abc""#, "true"])
    }

    func testMinLengthMaxLengthAndPattern() throws {
        try assertValid(#"{"minLength":2,"maxLength":3}"#, [#""ab""#, #""abc""#, #""é€""#])
        XCTAssertEqual(try errors(#"{"minLength":2}"#, #""é""#), [#"(root): "é" is shorter than minLength 2"#])
        XCTAssertEqual(try errors(#"{"maxLength":3}"#, #""abcd""#), [#"(root): "abcd" is longer than maxLength 3"#])
        // Unanchored search, like ECMA-262, unless the pattern anchors itself.
        try assertValid(#"{"pattern":"[0-9]+"}"#, [#""abc123""#])
        try assertValid(#"{"pattern":"^[a-z]+_[0-9]+\\.mov$"}"#, [#""clip_12.mov""#])
        XCTAssertEqual(
            try errors(#"{"pattern":"^[a-z]+$"}"#, #""abc1""#), [#"(root): "abc1" does not match pattern ^[a-z]+$"#])
    }

    // MARK: - references

    func testNestedRefsIntoDefsAndDefinitions() throws {
        let schema = #"""
            {"type":"object","required":["inputs"],
             "properties":{"inputs":{"type":"array","items":{"$ref":"#/$defs/input"}},
                           "total":{"$ref":"#/definitions/seconds"}},
             "$defs":{"input":{"type":"object","required":["path","duration"],"additionalProperties":false,
                               "properties":{"path":{"type":"string","minLength":1},
                                             "duration":{"$ref":"#/definitions/seconds"}}}},
             "definitions":{"seconds":{"type":"number","minimum":0}}}
            """#
        try assertValid(schema, [#"{"inputs":[{"path":"a.mov","duration":3}],"total":3}"#])
        XCTAssertEqual(
            try errors(
                schema, #"{"inputs":[{"path":"a.mov","duration":3},{"path":"","duration":-1,"x":1}],"total":-2}"#),
            [
                "/inputs/1/duration: -1 is less than minimum 0",
                #"/inputs/1/path: "" is shorter than minLength 1"#,
                #"/inputs/1: property "x" is not allowed (additionalProperties is false)"#,
                "/total: -2 is less than minimum 0",
            ])
    }

    func testRecursiveRefAndRootRef() throws {
        let tree = #"""
            {"$defs":{"node":{"type":"object","required":["name"],
                              "properties":{"name":{"type":"string"},
                                            "children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},
             "$ref":"#/$defs/node"}
            """#
        try assertValid(tree, [#"{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]}"#])
        XCTAssertEqual(
            try errors(tree, #"{"name":"a","children":[{"name":"b","children":[{}]}]}"#),
            [
                #"/children/0/children/0: missing required property "name""#
            ])
        let list = ##"{"type":["array","integer"],"items":{"$ref":"#"}}"##
        try assertValid(list, ["[1,[2,[3]]]"])
        XCTAssertEqual(try errors(list, #"[1,[2,["x"]]]"#), [#"/1/1/0: expected array or integer, got string "x""#])
    }

    func testRefThatNeverConsumesTheInstanceIsAnErrorNotAHang() throws {
        let schema = ##"{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}"##
        let errors = try self.errors(schema, "1")
        XCTAssertEqual(errors.count, 1)
        XCTAssertTrue(errors[0].contains("refers back to itself"), "\(errors)")
    }

    // MARK: - combinators

    func testOneOfExactlyOne() throws {
        let schema = #"{"oneOf":[{"type":"integer"},{"type":"number","minimum":10},{"type":"string"}]}"#
        try assertValid(schema, ["3", "10.5", #""s""#])
        // 12 is an integer and a number >= 10: two alternatives, so not valid.
        XCTAssertEqual(
            try errors(schema, "12"), ["(root): matches 2 oneOf alternatives (#0, #1), expected exactly one"])
        let none = try errors(schema, "true")
        XCTAssertEqual(none.count, 1)
        XCTAssertTrue(none[0].hasPrefix("(root): matches none of the oneOf alternatives [#0: "), none[0])
        XCTAssertTrue(none[0].contains("#2: (root): expected string, got boolean true"), none[0])
    }

    func testAnyOfAndAllOf() throws {
        let anyOf = #"{"anyOf":[{"type":"string"},{"type":"integer","minimum":0}]}"#
        try assertValid(anyOf, [#""x""#, "0"])
        try assertInvalid(anyOf, ["-1", "null", "0.5"])
        let allOf = #"{"allOf":[{"required":["a"]},{"required":["b"]}]}"#
        try assertValid(allOf, [#"{"a":1,"b":2}"#])
        XCTAssertEqual(
            try errors(allOf, "{}"),
            [
                #"(root): missing required property "a""#, #"(root): missing required property "b""#,
            ])
    }

    func testNotAndBooleanSchemas() throws {
        try assertValid(#"{"not":{"type":"null"}}"#, ["0", "{}"])
        XCTAssertEqual(
            try errors(#"{"not":{"type":"null"}}"#, "null"), [#"(root): null matches the schema under "not""#])
        try assertValid("true", ["null", "{}", "[1]"])
        XCTAssertEqual(try errors("false", "{}"), ["(root): no value is allowed here (schema false)"])
        try assertValid(#"{"properties":{"gone":false}}"#, ["{}"])
        XCTAssertEqual(
            try errors(#"{"properties":{"gone":false}}"#, #"{"gone":1}"#),
            [
                "/gone: no value is allowed here (schema false)"
            ])
    }

    func testIfThenElse() throws {
        let schema = #"""
            {"type":"object",
             "if":{"properties":{"status":{"const":"kept"}},"required":["status"]},
             "then":{"required":["start"]},
             "else":{"required":["reason"]}}
            """#
        try assertValid(schema, [#"{"status":"kept","start":0}"#, #"{"status":"dropped-short","reason":"short"}"#])
        XCTAssertEqual(
            try errors(schema, #"{"status":"kept","reason":"x"}"#), [#"(root): missing required property "start""#])
        XCTAssertEqual(
            try errors(schema, #"{"status":"dropped-short","start":0}"#),
            [#"(root): missing required property "reason""#])
        // then/else without if have no effect.
        try assertValid(#"{"then":false,"else":false}"#, ["1"])
    }

    // MARK: - the schema itself

    func testAnnotationsAreIgnored() throws {
        let schema = #"""
            {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://example.invalid/report",
             "title":"t","description":"d","$comment":"c","examples":[{"x":1}],
             "properties":{"x":{"type":"integer","description":"x","default":3}}}
            """#
        try assertValid(schema, [#"{"x":1}"#])
        try assertInvalid(schema, [#"{"x":"1"}"#])
    }

    func testUnsupportedOrMalformedSchemasThrow() {
        assertSchemaRejected(#"{"type":"string","format":"date-time"}"#, mentioning: #"unsupported keyword "format""#)
        assertSchemaRejected(
            #"{"properties":{"a":{"patternProperties":{}}}}"#, mentioning: "#/properties/a: unsupported keyword")
        assertSchemaRejected(
            #"{"$defs":{"unused":{"uniqueItems":true}}}"#, mentioning: #"unsupported keyword "uniqueItems""#)
        assertSchemaRejected(
            #"{"items":{"items":{"prefixItems":[]}}}"#, mentioning: "#/items/items: unsupported keyword")
        assertSchemaRejected(#"{"oneOf":[{"type":"string"},{"dependentRequired":{}}]}"#, mentioning: "#/oneOf/1")
        assertSchemaRejected(#"{"items":[{"type":"string"}]}"#, mentioning: "array form of items")
        assertSchemaRejected(#"{"$ref":"other.json#/a"}"#, mentioning: "only local references")
        assertSchemaRejected(##"{"$ref":"#/$defs/missing","$defs":{}}"##, mentioning: "does not point at anything")
        assertSchemaRejected(##"{"$defs":{"a":{"$ref":"#/$defs/b"}}}"##, mentioning: "#/$defs/a/$ref")
        assertSchemaRejected(#"{"pattern":"([a-z"}"#, mentioning: "invalid regular expression")
        assertSchemaRejected(#"{"type":"float"}"#, mentioning: #"unknown type "float""#)
        assertSchemaRejected(#"{"minItems":-1}"#, mentioning: "non-negative integer")
        assertSchemaRejected(#"{"minItems":1.5}"#, mentioning: "non-negative integer")
        assertSchemaRejected(#"{"minItems":true}"#, mentioning: "non-negative integer")
        assertSchemaRejected(#"{"minimum":false}"#, mentioning: "must be a number")
        assertSchemaRejected(#"{"required":"a"}"#, mentioning: "array of strings")
        assertSchemaRejected(#"{"enum":[]}"#, mentioning: "non-empty array")
        assertSchemaRejected(#"{"anyOf":[]}"#, mentioning: "non-empty array")
        assertSchemaRejected(
            #"{"properties":{"a":1}}"#, mentioning: "#/properties/a: a schema must be an object or a boolean")
        assertSchemaRejected(#"{"properties":{"a":{"$id":"x"}}}"#, mentioning: "$id below the root")
    }

    func testSchemaFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.json")
        try Data(#"{"type":"object","required":["a"]}"#.utf8).write(to: good)
        let v = try JSONSchemaValidator(schemaFile: good.path)
        XCTAssertEqual(v.validate(try json(#"{"a":1}"#)), [])
        XCTAssertEqual(v.validate(try json("{}")), [#"(root): missing required property "a""#])

        let broken = dir.appendingPathComponent("broken.json")
        try Data(#"{"type":"#.utf8).write(to: broken)
        XCTAssertThrowsError(try JSONSchemaValidator(schemaFile: broken.path)) {
            XCTAssertTrue("\($0)".contains("not valid JSON"), "\($0)")
        }
        let unsupported = dir.appendingPathComponent("unsupported.json")
        try Data(#"{"format":"uri"}"#.utf8).write(to: unsupported)
        XCTAssertThrowsError(try JSONSchemaValidator(schemaFile: unsupported.path)) {
            XCTAssertTrue("\($0)".contains("unsupported.json: #: unsupported keyword \"format\""), "\($0)")
        }
        XCTAssertThrowsError(try JSONSchemaValidator(schemaFile: dir.appendingPathComponent("none.json").path))
    }

    func testNonJSONInstanceValuesAreReported() throws {
        let v = try validator("true")
        let instance: [String: Any] = ["when": Date(), "ok": [1, "x", NSNull()]]
        XCTAssertEqual(v.validate(instance).count, 1)
        XCTAssertTrue(v.validate(instance)[0].hasPrefix("/when: "), "\(v.validate(instance))")
        XCTAssertEqual(v.validate(["n": Double.nan]).count, 1)
    }

    func testAllErrorsAreCollected() throws {
        let schema = #"""
            {"type":"object","required":["a","b"],"additionalProperties":false,
             "properties":{"a":{"type":"string"},"b":{"type":"array","items":{"enum":[1,2]}}}}
            """#
        XCTAssertEqual(
            try errors(schema, #"{"a":1,"b":[1,3,2,4],"c":0}"#),
            [
                "/a: expected string, got integer 1",
                "/b/1: 3 is not one of [1, 2]",
                "/b/3: 4 is not one of [1, 2]",
                #"(root): property "c" is not allowed (additionalProperties is false)"#,
            ])
    }
}
