import Foundation
import TestSupport
import XCTest

/// A merge run through the built binary: its report, progress, input lists, limits and dry runs.
/// The classes are named by the behaviour they hold (RunReportTests, ProgressAndMessagesTests,
/// InputListAndFolderTests, DryRunAndLimitTests); this is what they share: the JSON report read
/// back and checked against the committed schema.
class MergeRunTestCase: XCTestCase {
    private static let schemaPath = Fixtures.directory.deletingLastPathComponent()
        .appendingPathComponent("schema/report.schema.json").path

    /// Parses a report and checks it against the committed JSON Schema.
    func report(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        let errors = try JSONSchemaValidator(schemaFile: MergeRunTestCase.schemaPath).validate(object)
        XCTAssertEqual(errors, [], "report does not match schema/report.schema.json", file: file, line: line)
        return try XCTUnwrap(object as? [String: Any], file: file, line: line)
    }

    func report(at url: URL, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try report(String(decoding: try Data(contentsOf: url), as: UTF8.self), file: file, line: line)
    }

    func inputs(_ report: [String: Any]) -> [[String: Any]] { report["inputs"] as? [[String: Any]] ?? [] }

    func fileSize(_ url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? -1
    }
}
