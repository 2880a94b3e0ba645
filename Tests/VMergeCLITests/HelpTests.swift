import XCTest

@testable import VMergeCLI
@testable import VMergeCore

final class HelpTests: XCTestCase {
    private let text = Help.text

    func testSectionsInOrder() {
        let sections = ["OVERVIEW:", "USAGE:", "ARGUMENTS:", "OPTIONS:", "EXIT STATUS:"]
        var previous = text.startIndex
        for section in sections {
            guard
                let range = text.range(of: "\n" + section) ?? (text.hasPrefix(section) ? text.range(of: section) : nil)
            else { return XCTFail("no \(section) section") }
            XCTAssertGreaterThanOrEqual(range.lowerBound, previous, "\(section) out of order")
            previous = range.lowerBound
        }
        XCTAssertTrue(text.hasPrefix("OVERVIEW: "))
        XCTAssertTrue(text.contains("USAGE: vmerge [options] <input>... -o <output>\n"))
        XCTAssertTrue(text.hasSuffix("\n"))
    }

    func testListsEveryOption() {
        for spec in OptionSpec.all {
            XCTAssertTrue(text.contains("--\(spec.long)"), spec.long)
            XCTAssertTrue(text.contains("  " + spec.display), spec.display)
            // The first words of its help follow.
            let firstWords = spec.help.split(separator: " ").prefix(3).joined(separator: " ")
            XCTAssertTrue(text.contains(firstWords), firstWords)
        }
        XCTAssertTrue(text.contains("-o, --output <file>"))
        XCTAssertTrue(text.contains("-y, --overwrite"))
        XCTAssertTrue(text.contains("-q, --quiet"))
        XCTAssertTrue(text.contains("-v, --verbose"))
        XCTAssertTrue(text.contains("-h, --help"))
    }

    func testStatesDefaults() {
        let flat = text.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        for d in ["(default: 2.0)", "(default: 320)", "(default: 4:3)", "(default: 30)", "(default: medium)"] {
            XCTAssertTrue(flat.contains(d), d)
        }
        // And they are MergeOptions' defaults.
        let o = MergeOptions()
        XCTAssertTrue(flat.contains("(default: \(o.minDuration))"))
        XCTAssertTrue(flat.contains("(default: \(o.width))"))
        XCTAssertTrue(flat.contains("(default: \(o.aspect.num):\(o.aspect.den))"))
        XCTAssertTrue(flat.contains("(default: \(o.frameRate))"))
        XCTAssertTrue(flat.contains("(default: \(o.quality.rawValue))"))
    }

    func testStatesQualityValues() {
        let flat = text.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        XCTAssertTrue(
            flat.contains("low: x264 CRF 28, AAC 64 kb/s; medium: CRF 23, AAC 96 kb/s; high: CRF 18, AAC 128 kb/s"))
        for q in Quality.allCases {
            XCTAssertTrue(
                flat.contains("\(q.rawValue): ") && flat.contains("CRF \(q.crf), AAC \(q.audioBitRate / 1000) kb/s"),
                "\(q)")
        }
    }

    func testExitStatusTableMatchesCode() {
        XCTAssertEqual(
            [ExitStatus.success, ExitStatus.failure, ExitStatus.usage, ExitStatus.nothingToMerge], [0, 1, 2, 3])
        XCTAssertTrue(text.contains("\n  0    the output was written"))
        XCTAssertTrue(text.contains("\n  1    processing error"))
        XCTAssertTrue(text.contains("\n  2    usage error"))
        XCTAssertTrue(text.contains("\n  3    nothing to merge"))
        XCTAssertTrue(text.contains("130  interrupted (SIGINT); 143 terminated (SIGTERM)"))
    }

    func testLayout() {
        let lines = text.components(separatedBy: "\n")
        // Option help starts in column 26; wrapped lines are indented to it.
        for spec in OptionSpec.all {
            guard let i = lines.firstIndex(where: { $0.hasPrefix("  " + spec.display) }) else {
                XCTFail("no line for \(spec.long)")
                continue
            }
            let line = lines[i]
            let name = "  " + spec.display
            let helpStart = String(spec.help.split(separator: " ").first!)
            if name.count < 26 {
                // Help on the same line, from column 26.
                XCTAssertEqual(
                    line,
                    name + String(repeating: " ", count: 26 - name.count)
                        + line.dropFirst(26), line)
                XCTAssertTrue(line.dropFirst(26).hasPrefix(helpStart), line)
            } else {
                // Long names: help starts on the next line, at column 26.
                XCTAssertEqual(line, name)
                XCTAssertTrue(lines[i + 1].hasPrefix(String(repeating: " ", count: 26) + helpStart), lines[i + 1])
            }
        }
        XCTAssertFalse(lines.contains { $0.hasSuffix(" ") }, "trailing spaces")
        XCTAssertEqual(Help.version, "0.1.0")
    }
}

/// The README repeats the exit-status table of `--help`; they must not drift apart.
final class ReadmeTests: XCTestCase {
    func testExitStatusTableMatchesHelp() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        for row in Help.exitStatuses {
            XCTAssertTrue(text.contains("| \(row.status) | \(row.meaning) |"), "README lacks exit status \(row.status)")
        }
    }
}

final class SubcommandHelpTests: XCTestCase {
    func testBatchAndWatchHelpListTheirOptions() {
        for (text, table) in [(Help.batchText, OptionSpec.batch), (Help.watchText, OptionSpec.watch)] {
            XCTAssertTrue(text.hasPrefix("OVERVIEW: "))
            for spec in table { XCTAssertTrue(text.contains("  " + spec.display), spec.display) }
            XCTAssertTrue(text.contains("\nEXIT STATUS:\n"))
        }
        XCTAssertTrue(Help.batchText.contains("USAGE: vmerge batch <jobs.jsonl | folder>"))
        XCTAssertTrue(Help.watchText.contains("USAGE: vmerge watch <inbox> --out <dir>"))
        XCTAssertTrue(Help.text.contains("vmerge batch --help"), "the main help points to the subcommands")
    }
}
