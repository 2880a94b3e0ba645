import Foundation
import TestSupport
import XCTest

@testable import VMergeCLI
@testable import VMergeCore

final class HelpTests: XCTestCase {
    private let text = Help.text()

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
        for spec in MergeCommand.table {
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

    /// Each command's EXIT STATUS section lists its table's rows, and the statuses are what the
    /// endings map to.
    func testExitStatusesComeFromTheOneTable() {
        XCTAssertEqual(
            [Exit.success, .failure, .usage, .nothingToMerge, .cancelled(signal: 2), .cancelled(signal: 15)].map(\.status),
            [0, 1, 2, 3, 130, 143])
        XCTAssertEqual(Exit.success.failingLate, .failure)
        XCTAssertEqual(Exit.cancelled(signal: 15).failingLate, .cancelled(signal: 15))
        for (command, help) in [
            (Exit.Command.merge, Help.text(width: 100)), (.batch, Help.text(for: BatchCommand.self, width: 100)),
            (.watch, Help.text(for: WatchCommand.self, width: 100)),
            (.queue, Help.text(for: QueueCommand.self, width: 100)),
            (.worker, Help.text(for: WorkerCommand.self, width: 100)),
            (.dashboard, Help.text(for: DashboardCommand.self, width: 100)),
        ] {
            let section = help.components(separatedBy: "\nEXIT STATUS:\n")[1].components(separatedBy: "\n\n")[0]
            // Rows start with their status in column 3; continuation lines are indented further.
            let rows = section.components(separatedBy: "\n").reduce(into: [String]()) { rows, line in
                if line.hasPrefix("       "), !rows.isEmpty {
                    rows[rows.count - 1] += " " + line.trimmingCharacters(in: .whitespaces)
                } else {
                    rows.append(line)
                }
            }
            let expected = Exit.table(for: command).map { row in
                let label = "  " + row.status
                return label + String(repeating: " ", count: 7 - label.count) + row.meaning
            }
            XCTAssertEqual(rows, expected, "\(command)")
        }
    }

    func testLayout() {
        let lines = text.components(separatedBy: "\n")
        // Option help starts in column 26; wrapped lines are indented to it.
        for spec in MergeCommand.table {
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
    }
}

/// The README repeats each command's exit-status table; they must not drift apart.
final class ReadmeTests: XCTestCase {
    func testExitStatusTablesMatchTheCode() throws {
        let section = try readmeSection("Exit status")
        for command in Exit.Command.allCases {
            let heading = command == .merge ? "`vmerge`:" : "`vmerge \(command.rawValue)`:"
            let table = try XCTUnwrap(section.components(separatedBy: "\n" + heading + "\n").dropFirst().first, heading)
                .components(separatedBy: "\n\n")[0].trimmingCharacters(in: .newlines)
            let rows = table.components(separatedBy: "\n").dropFirst(2)
            XCTAssertEqual(
                Array(rows), Exit.table(for: command).map { "| \($0.status) | \($0.meaning) |" }, "\(command)")
        }
    }
}

final class SubcommandHelpTests: XCTestCase {
    func testBatchAndWatchHelpListTheirOptions() {
        for subcommand in CommandList.subcommands {
            let text = Help.text(for: subcommand)
            XCTAssertTrue(text.hasPrefix("OVERVIEW: "))
            for spec in subcommand.table { XCTAssertTrue(text.contains("  " + spec.display), spec.display) }
            XCTAssertTrue(text.contains("\nEXIT STATUS:\n"))
        }
        XCTAssertTrue(Help.text(for: BatchCommand.self).contains("USAGE: vmerge batch <jobs.jsonl | folder>"))
        XCTAssertTrue(Help.text(for: WatchCommand.self).contains("USAGE: vmerge watch <inbox> --out <dir>"))
        let queueUsage = "USAGE: vmerge queue <init | grants <--worker | --reader> <role> | add\n"
        XCTAssertTrue(Help.text(for: QueueCommand.self).contains(queueUsage))
        XCTAssertTrue(Help.text(for: WorkerCommand.self).contains("USAGE: vmerge worker --db <url> [-j <n>] [--once]"))
        for name in ["batch", "watch", "queue", "worker"] {
            XCTAssertTrue(Help.text().contains("vmerge \(name) --help"), "the main help points to \(name)")
        }
    }
}

/// The help as a person sees it, at 80 and 60 columns, compared with committed text (the files
/// in Snapshots/; `VMERGE_UPDATE_SNAPSHOTS=1 swift test --filter HelpSnapshotTests` rewrites them
/// after a deliberate change, for review in the diff).
final class HelpSnapshotTests: XCTestCase {
    /// Tests/VMergeCLITests/Snapshots, beside this file's folder (Output/).
    private static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Snapshots")

    private func check(_ name: String, _ text: String, width: Int, file: StaticString = #filePath, line: UInt = #line)
        throws
    {
        let url = HelpSnapshotTests.folder.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["VMERGE_UPDATE_SNAPSHOTS"] == "1" {
            try FileManager.default.createDirectory(at: HelpSnapshotTests.folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        XCTAssertEqual(text, expected, "\(name) differs from its snapshot", file: file, line: line)
        for row in text.split(separator: "\n") {
            XCTAssertLessThanOrEqual(row.count, width, "\(name): \(row)", file: file, line: line)
        }
        XCTAssertFalse(text.contains(" \n"), "\(name): trailing spaces", file: file, line: line)
    }

    func testHelpAt80And60Columns() throws {
        for width in [80, 60] {
            try check("help-\(width).txt", Help.text(width: width), width: width)
            try check("batch-help-\(width).txt", Help.text(for: BatchCommand.self, width: width), width: width)
            try check("watch-help-\(width).txt", Help.text(for: WatchCommand.self, width: width), width: width)
            try check("queue-help-\(width).txt", Help.text(for: QueueCommand.self, width: width), width: width)
            try check("worker-help-\(width).txt", Help.text(for: WorkerCommand.self, width: width), width: width)
            try check("dashboard-help-\(width).txt", Help.text(for: DashboardCommand.self, width: width), width: width)
        }
    }

    /// COLUMNS wins, then the terminal's width, then 80; help never goes past 100 or under 40.
    func testTheWidthComesFromTheTerminal() {
        let console = { (environment: [String: String], columns: Int?) in
            Console(output: { _ in }, error: { _ in }, environment: environment, outputColumns: columns).helpWidth
        }
        XCTAssertEqual(console(["COLUMNS": "60"], 120), 60)
        XCTAssertEqual(console([:], 72), 72)
        XCTAssertEqual(console([:], nil), 80)
        XCTAssertEqual(console(["COLUMNS": "junk"], nil), 80)
        XCTAssertEqual(Help.width(columns: 300), 100)
        XCTAssertEqual(Help.width(columns: 10), 40)
        XCTAssertEqual(Help.text(width: 300), Help.text(width: 100))
    }
}

/// The README's options table has a row for every option of `vmerge --help`, and only those.
final class ReadmeOptionsTests: XCTestCase {
    func testTheOptionsTableListsEveryOption() throws {
        let section = try readmeSection("Options")
        // The first table of the section; the first cell of each row: "`-o, --output <file>`",
        // "`-h, --help`, `--version`".
        let table = try XCTUnwrap(section.components(separatedBy: "| option | default | meaning |\n").dropFirst().first)
            .components(separatedBy: "\n\n")[0]
        let rows = table.components(separatedBy: "\n").filter { $0.hasPrefix("| `") }
        let named = Set(rows.flatMap { row -> [String] in
            let cell = row.dropFirst(2).prefix { $0 != "|" || false }
            return cell.components(separatedBy: "--").dropFirst().map { String($0.prefix { $0.isLetter || $0 == "-" }) }
        })
        XCTAssertEqual(named, Set(MergeCommand.table.map(\.long)))
    }
}

/// The text of the documentation's section under `heading`, in whichever page has it.
func readmeSection(_ heading: String) throws -> String { try Documentation.section(heading) }

/// The README's batch section names every option a job may carry, in the option table's order.
final class ReadmeJobOptionsTests: XCTestCase {
    func testEveryJobOptionIsNamed() throws {
        let section = try readmeSection("Batch: many merges")
        let start = try XCTUnwrap(section.range(of: "command line's merge options ("))
        let list = String(section[start.upperBound...].prefix { $0 != ")" })
        let named = list.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        XCTAssertEqual(named, JobOption.all.map(\.name))
    }
}
