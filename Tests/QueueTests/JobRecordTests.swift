import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// What a real worker leaves in a job's row when an attempt ends: the run's report (the JSON
/// `vmerge --report` writes) and what it said about the job.
final class JobRecordTests: WorkerTestCase {
    /// The report's status and the log's lines, read back with SQL.
    private func record(_ id: Int) throws -> (status: String?, log: [String]) {
        let row = try PGConnection(database).execute(
            "SELECT report->>'status', log FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"])
        return (row.value(0, 0), row.value(0, 1)?.components(separatedBy: "\n") ?? [])
    }

    /// A line of the job's log: its UTC time, the worker, then what it said.
    private let stamp = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /#

    private func text(_ line: String) -> String { line.replacing(stamp, with: "") }

    /// `queue cancel` on a running job: its worker stops it at the next heartbeat, removes its
    /// temporary, and keeps the report (status cancelled) and its lines in the cancelled row.
    func testARunningJobCancelledInTheQueueKeepsItsCancelledReport() throws {
        try add(try jobList([longJob("long", count: 10)]))
        let worker = try startWorker("w1")
        XCTAssertTrue(wait { row(1)?.state == "running" && !temporaries.isEmpty }, worker.log)
        XCTAssertEqual(vmerge(["queue", "cancel", "--db", database, "1"]).status, 0)
        XCTAssertTrue(wait(10) { (try? record(1).status) == "cancelled" }, worker.log)
        XCTAssertEqual(row(1)?.state, "cancelled")
        let log = try record(1).log
        // The command line's cancel is a line of its own, by its user, written when it was made.
        XCTAssertEqual(
            log.map(text).filter { $0.hasPrefix("w1: ") },
            ["w1: job 1 long: claimed (attempt 1 of 3)", "w1: job 1 long: stopped: it was cancelled in the queue"])
        XCTAssertEqual(log.map(text).filter { !$0.hasPrefix("w1: ") }.map { $0.hasSuffix(": cancelled") }, [true])
        XCTAssertTrue(log.allSatisfy { $0.contains(stamp) }, "\(log)")
        XCTAssertEqual(temporaries, [])
        XCTAssertTrue(worker.isRunning, "the worker goes on")
        XCTAssertEqual(terminate(worker), 143, worker.log)
    }

    /// A cancel that lands once the output is published (the worker held right after publishing
    /// by a test hook, its heartbeat seeing the cancel and stopping the job's token) cannot undo
    /// the publish: the row ends done, with the attempt's report (ok) and its lines, as the
    /// output on disk says. Before, the row stayed cancelled and the report and lines were lost.
    func testACancelAfterThePublishLeavesTheRowDoneWithItsRecord() throws {
        try add(try jobList([shortJob("short", seconds: 0.5)]))
        let pause = folder.appendingPathComponent("paused").path
        let worker = try startWorker(
            "w1", environment: ["VMERGE_TEST_PAUSE_AT": "after-video", "VMERGE_TEST_PAUSE_FILE": pause])
        XCTAssertTrue(wait { FileManager.default.fileExists(atPath: pause) }, worker.log)
        XCTAssertTrue(outputs.contains("short.mp4"), "\(outputs)")
        XCTAssertEqual(vmerge(["queue", "cancel", "--db", database, "1"]).status, 0)
        // The heartbeat (every third of the 2 s lease) sees the cancel and stops the job's token.
        Thread.sleep(forTimeInterval: 2)
        try FileManager.default.removeItem(atPath: pause)
        XCTAssertTrue(wait(20) { (try? record(1).status) == "ok" }, worker.log)
        XCTAssertEqual(row(1)?.state, "done", worker.log)
        let log = try record(1).log.map(text).filter { $0.hasPrefix("w1: ") }
        XCTAssertEqual(log.first, "w1: job 1 short: claimed (attempt 1 of 3)")
        XCTAssertTrue(log.last?.hasPrefix("w1: job 1 short: done -> \(out.path)/short.mp4 (") == true, "\(log)")
        assertWhole("short.mp4", seconds: 0.5)
        XCTAssertEqual(terminate(worker), 143, worker.log)
    }

    /// A cancel that lands while an attempt is failing (held before publishing, then its output's
    /// name found taken): the row stays cancelled, never retried, and keeps the failed attempt's
    /// report, its error and its lines. Before, they were dropped ("not recorded").
    func testAFailureAfterACancelKeepsItsRecordInTheCancelledRow() throws {
        try add(try jobList([shortJob("short", seconds: 0.5)]))
        let pause = folder.appendingPathComponent("paused").path
        let worker = try startWorker(
            "w1", environment: ["VMERGE_TEST_PAUSE_AT": "before-publish", "VMERGE_TEST_PAUSE_FILE": pause])
        XCTAssertTrue(wait { FileManager.default.fileExists(atPath: pause) }, worker.log)
        XCTAssertEqual(vmerge(["queue", "cancel", "--db", database, "1"]).status, 0)
        let taken = out.appendingPathComponent("short.mp4")
        try FileManager.default.createDirectory(at: taken, withIntermediateDirectories: false)
        Thread.sleep(forTimeInterval: 2)
        try FileManager.default.removeItem(atPath: pause)
        XCTAssertTrue(wait(20) { (try? record(1).status) == "failed" }, worker.log)
        XCTAssertEqual(row(1)?.state, "cancelled", worker.log)
        XCTAssertTrue(row(1)?.error?.contains("short.mp4") == true, "\(String(describing: row(1)?.error))")
        let log = try record(1).log.map(text).filter { $0.hasPrefix("w1: ") }
        XCTAssertEqual(log.first, "w1: job 1 short: claimed (attempt 1 of 3)")
        XCTAssertTrue(log.last?.hasPrefix("w1: job 1 short: failed: ") == true, "\(log)")
        XCTAssertEqual(temporaries, [])
        XCTAssertEqual(terminate(worker), 143, worker.log)
    }

    /// SIGTERM puts the job back with its report (cancelled) and lines; the next claim clears the
    /// report, and the next worker's lines follow the first's: the log is every attempt's.
    func testAJobPutBackKeepsItsLinesForTheNextAttempt() throws {
        try add(try jobList([longJob("long", count: 10)]))
        let first = try startWorker("w1")
        XCTAssertTrue(wait { !temporaries.isEmpty }, first.log)
        XCTAssertEqual(terminate(first), 143, first.log)
        XCTAssertEqual(row(1)?.state, "queued")
        XCTAssertEqual(try record(1).status, "cancelled")
        XCTAssertEqual(
            try record(1).log.map(text),
            ["w1: job 1 long: claimed (attempt 1 of 3)", "w1: job 1 long: put back in the queue"])

        let second = try startWorker("w2")
        XCTAssertTrue(wait { row(1)?.state == "running" }, second.log)
        XCTAssertNil(try record(1).status, "a claim clears the last attempt's report")
        XCTAssertTrue(wait(90) { row(1)?.state == "done" }, second.log)
        XCTAssertEqual(try record(1).status, "ok")
        let log = try record(1).log.map(text)
        XCTAssertEqual(log.count, 4, "\(log)")
        XCTAssertEqual(
            Array(log.prefix(3)),
            [
                "w1: job 1 long: claimed (attempt 1 of 3)", "w1: job 1 long: put back in the queue",
                "w2: job 1 long: claimed (attempt 1 of 3)",
            ])
        XCTAssertTrue(log[3].hasPrefix("w2: job 1 long: done -> \(out.path)/long.mp4 ("), log[3])
        XCTAssertEqual(terminate(second), 143, second.log)
    }

    /// `detail` after a real run: a done job's inputs, output and options as added, its report
    /// and lines, its progress at its end; a failed one's error and report; a spec that cannot be
    /// read says why; a job that is not there is nil.
    func testDetailShowsWhatARealRunLeft() throws {
        try add(
            try jobList([
                shortJob("short", seconds: 0.5),
                ["name": "bad", "inputs": [fixture("bad_text.mov")], "output": "bad.mp4"],
            ]), ["--quality", "high"])
        let worker = try startWorker("w1", ["--once"])
        XCTAssertEqual(worker.waitForExit(seconds: 60), 1, worker.log)
        let queue = try JobQueue(connecting: database)

        let done = try XCTUnwrap(try queue.detail(1))
        XCTAssertEqual([done.state.rawValue, done.name, done.worker], ["done", "short", "w1"])
        XCTAssertEqual(done.job?.output.escaped, out.appendingPathComponent("short.mp4").path)
        XCTAssertEqual(done.job?.inputs.map(\.path.escaped), [clip])
        XCTAssertEqual(done.job?.inputs.first?.edit.endMicros, 500_000)
        XCTAssertEqual(done.job?.options.quality, .high)
        XCTAssertNil(done.specError)
        XCTAssertEqual(done.progress?.phase, .done)
        for time in [done.createdAt, done.startedAt, done.finishedAt] {
            XCTAssertLessThan(abs((time ?? 0) - Date().timeIntervalSince1970), 120)
        }
        let report = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(try XCTUnwrap(done.report).utf8)) as? [String: Any])
        XCTAssertEqual(report["status"] as? String, "ok")
        XCTAssertEqual((report["output"] as? [String: Any])?["path"] as? String, done.job?.output.escaped)
        XCTAssertEqual(done.log.map(text).first, "w1: job 1 short: claimed (attempt 1 of 3)")
        XCTAssertTrue(done.log.last?.contains("w1: job 1 short: done -> ") == true, "\(done.log)")

        let failed = try XCTUnwrap(try queue.detail(2))
        XCTAssertEqual(failed.state, .failed)
        XCTAssertTrue(failed.error?.contains("bad_text.mov: not a readable video file") == true, "\(failed)")
        XCTAssertTrue(failed.report?.contains(#""status": "failed""#) == true, failed.report ?? "nil")
        XCTAssertEqual(failed.log.map(text).last, "w1: job 2 bad: failed: \(failed.error ?? "?")")

        try PGConnection(database).execute(
            "INSERT INTO vmerge.jobs (job_key, name, spec) VALUES ('hand', 'by hand', '{\"inputs\": 3}')")
        let broken = try XCTUnwrap(try queue.detail(3))
        XCTAssertNil(broken.job)
        XCTAssertTrue(broken.specError?.hasPrefix("job 3: unusable job spec: ") == true, broken.specError ?? "nil")
        XCTAssertEqual(broken.log, [])
        XCTAssertNil(try queue.detail(99))
    }
}

/// The row's log is bounded as JobLog says, across attempts; a line is one line, and cut.
final class JobLogTests: ServerTestCase {
    func testTheRowKeepsTheLastLinesAndBytes() throws {
        let sql = try PGConnection(database)
        try QueueSchema.migrate(sql)
        let queue = JobQueue(connection: sql)
        let job = Job(name: "j", inputs: ["/in/1.mov"], output: "/out/1.mp4", options: MergeOptions())
        _ = try queue.add([job], maxAttempts: 3)
        let log = { try sql.execute("SELECT log FROM vmerge.jobs").value(0, 0)?.components(separatedBy: "\n") ?? [] }

        var claim = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertTrue(try queue.release(claim, log: (1...150).map { "first \($0)" }))
        claim = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertTrue(try queue.release(claim, log: (1...100).map { "second \($0)" }))
        XCTAssertEqual(try log(), (51...150).map { "first \($0)" } + (1...100).map { "second \($0)" })

        // 4000 bytes and a newline a line: the last 16 fit in 64 KiB, 17 would not.
        let long = (1...30).map { String(format: "%02d", $0) + String(repeating: "é", count: 1999) }
        claim = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertTrue(try queue.complete(claim, log: long))
        XCTAssertEqual(try log(), Array(long.suffix(16)))
        XCTAssertEqual(try sql.execute("SELECT octet_length(log) FROM vmerge.jobs").value(0, 0), "\(16 * 4001 - 1)")
    }

    func testALineIsOneLineAndBounded() {
        var log = JobLog(worker: "w\n1")
        let time = Date(timeIntervalSince1970: 1_767_225_600)
        log.append("job 1 a\u{1B}[2J: done\nforged line", at: time)
        log.append(String(repeating: "é", count: 5000), at: time)
        log.append(Diagnostic(.warning, file: "a.mov", "a corrupt packet"))
        XCTAssertEqual(log.lines[0], #"2026-01-01T00:00:00Z w\n1: job 1 a\x1B[2J: done\nforged line"#)
        XCTAssertTrue(
            (JobLog.maxLineBytes - 1...JobLog.maxLineBytes).contains(log.lines[1].utf8.count), "cut at a character")
        XCTAssertTrue(log.lines[1].hasSuffix("é..."))
        XCTAssertTrue(log.lines[2].hasSuffix(#" w\n1: warning: a.mov: a corrupt packet"#), log.lines[2])
        for n in 1...300 { log.append("line \(n)", at: time) }
        XCTAssertEqual(log.lines.count, JobLog.maxLines)
        XCTAssertEqual(log.lines.last, #"2026-01-01T00:00:00Z w\n1: line 300"#)
    }
}
