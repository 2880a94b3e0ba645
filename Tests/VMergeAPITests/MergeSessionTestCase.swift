import Foundation
import TestSupport
import VMerge
import XCTest

/// The Swift API as an embedding program uses it: `import VMerge` and nothing else of the
/// package, real clips through the real libraries. The classes are named by what they hold
/// (MergeSessionTests, MergeSessionRefusalTests, MergeSessionByteNameTests); this is what they
/// share: a folder of the test's own, and ways to check a run's error and its output.
class MergeSessionTestCase: XCTestCase {
    var folder: URL!

    /// Removed when the test passes, kept (and named) when it fails: TestSupport's scratch folder.
    override func setUpWithError() throws { folder = try makeScratchDirectory() }

    func assertThrows(
        _ session: MergeSession, _ code: MergeError.Code, _ text: String, file: StaticString = #filePath,
        line: UInt = #line
    ) async {
        do {
            _ = try await session.run()
            XCTFail("ran", file: file, line: line)
        } catch let error as MergeError {
            XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
            XCTAssertTrue(error.description.contains(text), "\(error)", file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    static func size(of url: URL) throws -> Int64 {
        try XCTUnwrap((try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value)
    }

    static func ffprobe(_ url: URL, _ entries: String, _ more: String...) throws -> String {
        try runTool("ffprobe", ["-v", "error", "-show_entries", entries] + more + ["-of", "default", url.path]).stdout
    }
}
