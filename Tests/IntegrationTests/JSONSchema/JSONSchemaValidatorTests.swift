import Foundation
import XCTest

/// The validator as a whole: annotations ignored, unsupported or malformed schemas refused, schema
/// files read, instance values that are not JSON reported, and every error collected.
final class JSONSchemaValidatorTests: JSONSchemaValidatorTestCase {
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
