import Foundation
import XCTest

/// promtool (Debian's prometheus, which make test installs) with `arguments`, `input` on its
/// stdin; its exit status and output. Skips the test when it is missing, but fails it under CI.
func runPromtool(_ arguments: [String], input: URL? = nil, in folder: URL? = nil) throws -> (Int32, String) {
    let candidates =
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/promtool" }
        + ["/usr/bin/promtool"]
    guard let promtool = candidates.first(where: FileManager.default.isExecutableFile) else {
        // Under CI (where make test installed it) a missing promtool fails: a skip there would
        // hide that no metrics text was checked.
        let environment = ProcessInfo.processInfo.environment
        if environment["CI"]?.isEmpty == false || environment["VMERGE_REQUIRE_TOOLS"] == "1" {
            throw HTTPTestError("promtool is not installed, and CI needs it (Debian: prometheus)")
        }
        throw XCTSkip("promtool is not installed (Debian: prometheus; make test installs it)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: promtool)
    process.arguments = arguments
    process.currentDirectoryURL = folder
    process.standardInput = try input.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, said)
}

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
