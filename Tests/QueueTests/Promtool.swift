import Foundation
import XCTest

/// promtool's `check metrics` on `text` (written into `folder`): no complaint, exit 0.
func assertPromtoolChecks(
    _ text: String, in folder: URL, file: StaticString = #filePath, line: UInt = #line
) throws {
    let input = folder.appendingPathComponent("metrics-\(UUID().uuidString).txt")
    try Data(text.utf8).write(to: input)
    let (status, said) = try runPromtool(["check", "metrics"], input: input)
    XCTAssertEqual(status, 0, "promtool: \(said)", file: file, line: line)
    XCTAssertEqual(said, "", file: file, line: line)
}

/// A scrape's samples by series (`name{labels}` as written), for exact assertions.
struct Scrape {
    let text: String
    let samples: [String: Double]

    init(_ text: String) {
        self.text = text
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        self.samples = samples
    }

    /// The sample of `series`; fails the test when there is none.
    func value(_ series: String, file: StaticString = #filePath, line: UInt = #line) -> Double {
        guard let value = samples[series] else {
            XCTFail("no \(series) in\n\(text)", file: file, line: line)
            return .nan
        }
        return value
    }
}
