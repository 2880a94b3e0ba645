import Foundation
import XCTest

/// The test-suite JSON Schema validator rejects what it should, keyword by keyword, so a
/// report test that uses it cannot pass because the validator accepts everything. The classes are
/// named by what they check (JSONSchemaKeywordTests, JSONSchemaCompositionTests,
/// JSONSchemaValidatorTests); this is what they share: schemas and instances as JSON text.
class JSONSchemaValidatorTestCase: XCTestCase {
    /// Parses JSON text the way report tests do (JSONSerialization, fragments allowed).
    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    func validator(_ schema: String) throws -> JSONSchemaValidator {
        try JSONSchemaValidator(schema: json(schema))
    }

    /// Errors for `instance` (JSON text) against `schema` (JSON text).
    func errors(_ schema: String, _ instance: String) throws -> [String] {
        try validator(schema).validate(json(instance))
    }

    func assertValid(
        _ schema: String, _ instances: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let v = try validator(schema)
        for instance in instances {
            XCTAssertEqual(v.validate(try json(instance)), [], "\(instance) against \(schema)", file: file, line: line)
        }
    }

    func assertInvalid(
        _ schema: String, _ instances: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let v = try validator(schema)
        for instance in instances {
            XCTAssertFalse(
                v.validate(try json(instance)).isEmpty, "\(instance) against \(schema)", file: file, line: line)
        }
    }

    func assertSchemaRejected(
        _ schema: String, mentioning fragment: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try validator(schema), schema, file: file, line: line) { error in
            XCTAssertTrue(
                "\(error)".contains(fragment), "\(error) should mention \(fragment)", file: file, line: line)
        }
    }
}
