import Foundation
import XCTest

/// The validator's keywords on one value: type, the object and array keywords, enum and const, the
/// bounds of numbers and strings.
final class JSONSchemaKeywordTests: JSONSchemaValidatorTestCase {
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
}
