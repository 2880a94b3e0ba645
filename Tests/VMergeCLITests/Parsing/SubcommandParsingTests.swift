import XCTest

@testable import VMergeCLI
@testable import VMergeCore
@testable import VMergeJobs
@testable import VMergeQueue

/// The subcommands' command lines: batch, watch, queue and worker, their --help, and the mistakes
/// each refuses.
final class SubcommandParsingTests: ArgumentParserTestCase {
    func testBatchAndWatchCommands() throws {
        try checkBatch()
        try checkWatch()
        try checkQueue()
        try checkWorker()
        checkMistakes()
    }

    /// batch with its options, a job's own options over them, and batch --help.
    private func checkBatch() throws {
        guard
            case let .run(batch as BatchCommand) = try ArgumentParser.parse(
                ["batch", "jobs.jsonl", "-j", "3", "--shard", "1/4", "--quality", "low", "--report", "r.json"])
        else { return XCTFail("not a batch") }
        XCTAssertEqual(batch.source, "jobs.jsonl")
        XCTAssertEqual(batch.parallel, 3)
        XCTAssertEqual(batch.shard, .init(index: 1, count: 4))
        XCTAssertEqual(batch.settings.merge.quality, .low)
        XCTAssertEqual(batch.reportTo, .file("r.json"))
        // A job's own options over the batch-wide ones, by the library's decoder.
        let job = try JobFile.decode(
            ["options": ["width": 160]], over: batch.settings, inputsRequired: false, outputRequired: false)
        XCTAssertEqual(job.settings.merge.width, 160)
        XCTAssertEqual(job.settings.merge.quality, .low)
        XCTAssertEqual(try ArgumentParser.parse(["batch", "--help"]), .subcommandHelp("batch"))
    }

    /// watch with its options.
    private func checkWatch() throws {
        guard
            case let .run(watch as WatchCommand) = try ArgumentParser.parse(
                ["watch", "in", "--out", "out", "--settle", "2.5", "--delete-sources", "--once", "--retries", "0"])
        else { return XCTFail("not a watch") }
        XCTAssertEqual(watch.watch.inbox, "in")
        XCTAssertEqual(watch.watch.outbox, "out")
        XCTAssertEqual(watch.watch.settle, 2.5)
        XCTAssertTrue(watch.watch.deleteSources && watch.watch.once)
        XCTAssertEqual(watch.watch.retries, 0)
        XCTAssertEqual(watch.watch.marker, ".ready")
    }

    /// queue add, cancel and status, and queue add --help.
    private func checkQueue() throws {
        XCTAssertEqual(try ArgumentParser.parse(["queue", "add", "--help"]), .subcommandHelp("queue"))
        guard case let .run(add as QueueCommand)? = try? ArgumentParser.parse(
            ["queue", "add", "jobs.jsonl", "--db=vmerge", "--out", "o", "--max-attempts", "5", "--quality", "low"])
        else { return XCTFail("queue add") }
        XCTAssertEqual(add.action, .add("jobs.jsonl"))
        XCTAssertEqual(add.database, "vmerge")
        XCTAssertEqual(add.out, "o")
        XCTAssertEqual(add.maxAttempts, 5)
        XCTAssertEqual(add.settings.merge.quality, .low)
        guard case let .run(cancel as QueueCommand) = try ArgumentParser.parse(["queue", "cancel", "3", "4"]),
            case let .run(status as QueueCommand) = try ArgumentParser.parse(["queue", "status", "--json"])
        else { return XCTFail("queue cancel, queue status") }
        XCTAssertEqual(cancel.action, .cancel([3, 4]))
        XCTAssertEqual(cancel.maxAttempts, QueueCommand.defaultMaxAttempts)
        XCTAssertFalse(cancel.json)
        XCTAssertEqual(status.action, .status)
        XCTAssertTrue(status.json)
    }

    /// worker, plain and with every option, and worker --help.
    private func checkWorker() throws {
        XCTAssertEqual(try ArgumentParser.parse(["worker", "--help"]), .subcommandHelp("worker"))
        guard case let .run(plain as WorkerCommand) = try ArgumentParser.parse(["worker"]),
            case let .run(given as WorkerCommand) = try ArgumentParser.parse([
                "worker", "--db", "vmerge", "-j2", "--once", "--lease=5.5", "--name", "w1", "--poll-interval", "0.5",
                "-q",
            ])
        else { return XCTFail("worker") }
        XCTAssertNil(plain.database)
        XCTAssertEqual(plain.verbosity, .normal)
        XCTAssertEqual(
            plain.settings,
            WorkerSettings(conninfo: "", name: WorkerSettings.defaultName, parallel: Batch.defaultParallel, lease: 60, pollInterval: 2))
        XCTAssertEqual(given.database, "vmerge")
        XCTAssertEqual(given.verbosity, .quiet)
        XCTAssertEqual(
            given.settings, WorkerSettings(conninfo: "", name: "w1", parallel: 2, lease: 5.5, pollInterval: 0.5, once: true))
    }

    /// What batch, watch and worker refuse, and how they say it.
    private func checkMistakes() {
        let errors: [([String], String)] = [
            (["batch"], "batch: no job list or folder given"),
            (["batch", "a", "b"], "batch: one job list or folder, not 2"),
            (["batch", "a", "--shard", "3/3"], "invalid value '3/3' for '--shard'"),
            (["batch", "a", "-j", "0"], "invalid value '0' for '--jobs'"),
            (["batch", "a", "-o", "x.mp4"], "unknown option '-o'"),
            (["watch", "in"], "watch: missing '--out <dir>'"),
            (["watch", "in", "--out", "o", "--settle", "-1"], "invalid value '-1' for '--settle'"),
            (["watch", "in", "--out", "o", "--marker", "a/b"], "invalid value 'a/b' for '--marker'"),
            (["watch", "in", "--out", "o", "--sttle", "1"], "Did you mean '--settle'?"),
            (["worker", "jobs.jsonl"], "worker: unexpected argument 'jobs.jsonl': the jobs come from the queue"),
            (["worker", "--lease", "1"], "invalid value '1' for '--lease': out of range (2 to 3600 s)"),
            (["worker", "--lease", "0x10"], "invalid value '0x10' for '--lease'"),
            (["worker", "--poll-interval", "0"], "invalid value '0' for '--poll-interval': out of range (0.1 to 3600 s)"),
            (["worker", "-j", "0"], "invalid value '0' for '--jobs': expected a number from 1 to 256"),
            (["worker", "--name", ""], "invalid value '' for '--name'"),
            (["worker", "--name", "a\nb"], "invalid value 'a\nb' for '--name'"),
            (["worker", "--db", ""], "'--db' needs a connection string"),
            (["worker", "--quality", "high"], "unknown option '--quality'"),
            (["worker", "-q", "-v"], "'--quiet' and '--verbose' cannot be used together"),
        ]
        for (args, text) in errors {
            let message = usageError(args) ?? ""
            XCTAssertTrue(message.contains(text), "\(args): \(message)")
        }
    }
}
