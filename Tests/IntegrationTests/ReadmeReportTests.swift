import Foundation
import TestSupport
import XCTest

@testable import VMergeCore

/// The README's report section says what a real report holds: its example is a real run's (every
/// value but the run's own timings and byte count), and its tables name every field and status.
final class ReadmeReportTests: XCTestCase {

    private func section() throws -> String {
        try Documentation.section("JSON report")
    }

    /// The report of `vmerge fixtures/[a-k]_*.mov -o out.mp4`, as the README's example says it was made.
    private func realReport() throws -> [String: Any] {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fixtures = try FileManager.default.contentsOfDirectory(atPath: Fixtures.directory.path)
            .filter { $0.range(of: #"^[a-k]_.*\.mov$"#, options: .regularExpression) != nil }.sorted()
        XCTAssertEqual(fixtures.count, 11)
        let run = try VMergeBinary.run(
            fixtures.map { "fixtures/" + $0 } + ["-o", dir.appendingPathComponent("out.mp4").path, "--report", "-"],
            in: Fixtures.directory.deletingLastPathComponent())
        XCTAssertEqual(run.status, 0, run.stderr)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    /// Every value of the README's example equals the real report's, but for what each run has
    /// its own (its timings, the output's path). The bytes are the same on every run and machine
    /// with one FFmpeg: checked on the release the README names (another writes other bytes).
    func testTheExampleIsARealReport() throws {
        let text = try section()
        let json = try XCTUnwrap(text.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```")[0])
        let example = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let real = try realReport()
        var own: Set<String> = [
            "timings.wall_seconds", "timings.speed", "timings.decode_waited_seconds", "timings.encode_waited_seconds",
            "output.path",
        ]
        let release = try XCTUnwrap((real["versions"] as? [String: Any])?["ffmpeg"] as? String)
        XCTAssertTrue(text.contains("with Debian 12's\nFFmpeg 5.1 "), "the README names the FFmpeg its example was made with")
        if !release.hasPrefix("5.1") { own.insert("output.bytes") }
        func compare(_ shown: Any, _ actual: Any?, _ path: String) {
            if own.contains(path) { return }
            switch shown {
            case let object as [String: Any]:
                guard let actual = actual as? [String: Any] else { return XCTFail("\(path): not an object in the report") }
                for (key, value) in object { compare(value, actual[key], path.isEmpty ? key : path + "." + key) }
            case let list as [Any]:
                // The example's inputs are some of the report's: matched by path.
                guard let actual = actual as? [[String: Any]] else { return XCTFail("\(path): not a list in the report") }
                for case let item as [String: Any] in list {
                    let match = actual.first { ($0["path"] as? String) == (item["path"] as? String) }
                    compare(item, match, path + "[" + (item["path"] as? String ?? "?") + "]")
                }
            default:
                XCTAssertEqual("\(shown)", actual.map { "\($0)" } ?? "absent", path)
            }
        }
        compare(example, real, "")
    }

    /// The field table names each top-level field and each output field of a real report, and the
    /// statuses an input can have.
    func testTheTablesNameEveryFieldAndStatus() throws {
        let text = try section()
        let real = try realReport()
        for key in real.keys {
            XCTAssertTrue(text.contains("`\(key)`") || text.contains("`\(key)[]`"), "the README names '\(key)'")
        }
        let output = try XCTUnwrap(real["output"] as? [String: Any])
        let outputRow = try XCTUnwrap(text.components(separatedBy: "\n").first { $0.hasPrefix("| `output` |") })
        for key in output.keys { XCTAssertTrue(outputRow.contains("`\(key)`"), "the output row names '\(key)'") }
        let inputsRow = try XCTUnwrap(text.components(separatedBy: "\n").first { $0.hasPrefix("| `inputs[]` |") })
        // Every field of an input, and of its objects (video, its colour, audio, crop...), is named.
        let inputs = try XCTUnwrap(real["inputs"] as? [[String: Any]])
        var unnamed: Set<String> = []
        func names(_ object: [String: Any], _ path: String) {
            for (key, value) in object {
                if !inputsRow.contains("`\(key)`") && inputsRow.range(of: "[{ ,]\(key)[ ,}:]", options: .regularExpression) == nil {
                    unnamed.insert(path + key)
                }
                if let inner = value as? [String: Any] { names(inner, path + key + ".") }
            }
        }
        for input in inputs { names(input, "") }
        XCTAssertEqual(unnamed, [], "fields of inputs[] the README's row does not name")
        let statuses = try XCTUnwrap(inputsRow.range(of: #"`status` \(([^)]*)\)"#, options: .regularExpression))
        let named = Set(
            inputsRow[statuses].components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
                .filter { $0 != "status" })
        XCTAssertEqual(named, Set(InputOutcome.statuses), "the statuses an input can have")
    }
}

/// The README's set-up says what `make run` merges and what the Makefile installs.
final class ReadmeSetupTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func testSetUpNamesWhatIsMergedAndInstalled() throws {
        let setUp = try Documentation.section("Set-up") + Documentation.section("What `make` installs")
        let makefile = try String(contentsOf: Self.root.appendingPathComponent("Makefile"), encoding: .utf8)
        let fixtures = try XCTUnwrap(
            makefile.range(of: #"FIXTURES := \$\(sort \$\(wildcard ([^)]*)\)\)"#, options: .regularExpression))
        let pattern = String(makefile[fixtures]).components(separatedBy: "wildcard ")[1].components(separatedBy: ")")[0]
        XCTAssertTrue(setUp.contains("merges \(pattern) into demo/demo.mp4"), "make run merges \(pattern)")
        let script = try String(contentsOf: Self.root.appendingPathComponent("scripts/install-deps.sh"), encoding: .utf8)
        let list = try XCTUnwrap(script.components(separatedBy: "\npackages=(").dropFirst().first?.components(separatedBy: ")")[0])
        let packages = list.split(whereSeparator: \.isWhitespace).map(String.init)
        XCTAssertGreaterThan(packages.count, 5)
        for package in packages + ["swiftlang"] {
            XCTAssertTrue(setUp.contains("`\(package)`"), "the README names '\(package)'")
        }
    }
}

/// The README's `--progress json` example has the fields a progress object has, in their order.
final class ReadmeProgressTests: XCTestCase {
    func testTheProgressExampleHasEveryField() throws {
        let section = try Documentation.section("Progress stream")
        let line = try XCTUnwrap(section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "\n")[0])
        let keys = { (json: String) in
            json.matches(of: /"([a-z_]+)":/).map { String($0.output.1) }
        }
        let progress = MergeProgress(
            phase: .encoding, item: 4, itemCount: 10, file: "d.mov", doneMicros: 8_266_667, totalMicros: 23_633_333,
            elapsedSeconds: 0.564, outputBytes: 97_344)
        XCTAssertEqual(keys(line), keys(progress.json.text()))
    }
}
