import Foundation
import XCTest

/// Schemas made of schemas: $ref (nested, recursive, to the root, and one that never consumes the
/// instance), and the combinators oneOf, anyOf, allOf, not and if/then/else.
final class JSONSchemaCompositionTests: JSONSchemaValidatorTestCase {
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
}
