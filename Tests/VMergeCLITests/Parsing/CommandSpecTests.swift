import Foundation
import XCTest

@testable import VMergeCLI
@testable import VMergeCore

/// Each subcommand's spec: its own keys name exactly its own rows, the shared options are read
/// and refused one way everywhere, and the one runner turns what a run throws into an exit.
final class CommandSpecTests: XCTestCase {
    /// The console has no environment: VMERGE_DB is not set.
    private func run(_ args: [String]) -> (status: Int32, stderr: [String]) {
        let capture = Capture()
        let status = VMergeCLI.run(args, console: capture.console)
        return (status, capture.stderr.split(separator: "\n").map(String.init))
    }

    private func assertTableIsWhole<C: CommandSpec>(_: C.Type, file: StaticString = #filePath, line: UInt = #line) {
        let names = C.table.map(\.long)
        XCTAssertEqual(Set(names).count, names.count, "\(C.self): each option once", file: file, line: line)
        let shorts = C.table.compactMap(\.short)
        XCTAssertEqual(Set(shorts).count, shorts.count, "\(C.self): each short name once", file: file, line: line)
    }

    /// A command's table is made of the options its `init` reads (each a `CommandOption`), so the
    /// two cannot differ; what is left to hold is that no name is taken twice, and that the job
    /// options are the library's rows in its order.
    func testEveryCommandsTableNamesEachOptionOnce() {
        assertTableIsWhole(MergeCommand.self)
        assertTableIsWhole(BatchCommand.self)
        assertTableIsWhole(WatchCommand.self)
        assertTableIsWhole(QueueCommand.self)
        assertTableIsWhole(WorkerCommand.self)
        assertTableIsWhole(DashboardCommand.self)
        // The job options are the same rows, in the library's order, wherever they are taken.
        for table in [MergeCommand.table, BatchCommand.table, WatchCommand.table, QueueCommand.table] {
            XCTAssertEqual(table.compactMap { $0.job?.name }, JobOption.all.map(\.name))
        }
        XCTAssertTrue(WorkerCommand.table.allSatisfy { $0.job == nil })
        // Shared rows are the one declaration, whichever command lists them.
        for table in [MergeCommand.table, BatchCommand.table, WatchCommand.table, WorkerCommand.table] {
            XCTAssertEqual(table.first { $0.long == "quiet" }?.help, VerbosityOptions.quiet.spec.help)
        }
    }

    /// -q with -v, an empty --report and an empty --db: one refusal, the same in every command.
    func testSharedOptionsAreRefusedTheSameWayEverywhere() {
        let both = "'--quiet' and '--verbose' cannot be used together"
        for args in [
            ["a.mov", "-o", "o.mp4", "-q", "-v"], ["batch", "jobs.jsonl", "-qv"], ["watch", "in", "--out", "o", "-q", "-v"],
            ["worker", "-q", "-v"],
        ] {
            XCTAssertEqual(run(args).stderr.first, "vmerge: " + both, "\(args)")
        }
        for args in [["a.mov", "-o", "o.mp4", "--report="], ["batch", "jobs.jsonl", "--report", ""]] {
            XCTAssertEqual(run(args).stderr.first, "vmerge: missing file name for '--report'", "\(args)")
        }
        for args in [["queue", "status", "--db="], ["worker", "--db", ""]] {
            XCTAssertEqual(run(args).stderr.first, "vmerge: '--db' needs a connection string", "\(args)")
        }
        // Every refused value in one wording, whichever command reads it.
        XCTAssertEqual(
            run(["batch", "l.jsonl", "-j", "0"]).stderr.first,
            "vmerge: invalid value '0' for '--jobs': expected a number from 1 to 256")
        XCTAssertEqual(
            run(["worker", "-j", "300"]).stderr.first,
            "vmerge: invalid value '300' for '--jobs': expected a number from 1 to 256")
        XCTAssertEqual(
            run(["watch", "in", "--out", "o", "--retries", "101"]).stderr.first,
            "vmerge: invalid value '101' for '--retries': expected a number from 0 to 100")
        XCTAssertEqual(
            run(["watch", "in", "--out", "o", "--settle", "0x10"]).stderr.first,
            "vmerge: invalid value '0x10' for '--settle': not a time (seconds such as 1.5, or m:ss such as 1:02.5)")
    }

    /// A password on the command line is readable by every local user: warned of, never shown;
    /// one in VMERGE_DB is not.
    func testAPasswordInDbIsWarnedOf() {
        for database in ["host=/nonexistent dbname=q password=s3cret", "postgresql://u:s3cret@/q?host=/nonexistent"] {
            let result = run(["queue", "status", "--db", database])
            XCTAssertEqual(result.status, 1, "\(result.stderr)")
            XCTAssertEqual(
                result.stderr.first,
                "vmerge: queue: the password in '--db' can be read by every user of this machine (ps); put the "
                    + "connection string in VMERGE_DB, or the password in ~/.pgpass or PGPASSWORD")
            XCTAssertFalse(result.stderr.joined().contains("s3cret"), "\(result.stderr)")
        }
        XCTAssertFalse(run(["queue", "status", "--db", "host=/nonexistent dbname=q"]).stderr.joined().contains("password"))
        let capture = Capture()
        let console = Console(
            output: { _ in }, error: { capture.console.writeErrText($0) },
            environment: ["VMERGE_DB": "host=/nonexistent dbname=q password=s3cret"])
        XCTAssertEqual(VMergeCLI.run(["queue", "status"], console: console), 1)
        XCTAssertFalse(capture.stderr.contains("password"), capture.stderr)
    }

    /// A usage error found when the command runs (no database; a folder of jobs without --out) is
    /// said like one found while parsing: the message, the command's usage line, exit 2.
    func testTheRunnerSaysAUsageErrorFromARunWithItsUsageLine() throws {
        for (args, message, usage) in [
            (["worker"], "vmerge: worker: no database given: use '--db <url>' or set VMERGE_DB", WorkerCommand.usageLine),
            (["queue", "status"], "vmerge: queue: no database given: use '--db <url>' or set VMERGE_DB", QueueCommand.usageLine),
        ] {
            let result = run(args)
            XCTAssertEqual(result.status, 2, "\(args)")
            XCTAssertEqual(result.stderr, [message, usage], "\(args)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-spec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("trip"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Before, batch said this with exit 1 and no usage line; queue add (the same words) exits 2.
        let batch = run(["batch", folder.path])
        XCTAssertEqual(batch.status, 2)
        XCTAssertEqual(
            batch.stderr, ["vmerge: batch: a folder of jobs needs '--out <dir>' for the outputs", BatchCommand.usageLine])
    }
}
