import Foundation
import VMergeCore
import VMergeWeb
import XCTest

@testable import VMergeQueue

/// `vmerge queue pause` and `resume` with real workers: a paused queue is claimed from by no one,
/// its running jobs go on to their end, and a resume starts the claims again.
final class PauseTests: WorkerTestCase {
    /// The queue's figures as a metrics scrape reads them.
    private func metrics() throws -> String {
        try QueueMetrics.text(.success(JobQueue(connecting: database).snapshot())).text
    }

    /// A worker with a queued job claims nothing while the queue is paused (and says so once),
    /// then claims it once it is resumed (and says that once). The command's answers, `status`
    /// and the gauge say how the queue stands.
    func testAPausedQueueIsClaimedFromOnlyAfterItIsResumed() throws {
        let paused = vmerge(["queue", "pause", "--db", database])
        XCTAssertEqual(paused.status, 0, paused.stderr)
        XCTAssertEqual(
            paused.stdout, "queue: paused: running jobs go on; workers claim nothing new until 'vmerge queue resume'\n")
        let again = vmerge(["queue", "pause", "--db", database])
        XCTAssertEqual(again.status, 0, again.stderr)
        // Who paused: the user and the machine.
        let who = String(cString: try XCTUnwrap(getpwuid(geteuid())).pointee.pw_name) + "@" + shortHostName
        XCTAssertEqual(again.stdout, "queue: paused already, since \(since(again.stdout)) by \(who)\n")
        XCTAssertNotNil(since(again.stdout).wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/#), again.stdout)
        try add(try jobList([shortJob("short", seconds: 0.5)]))
        let status = vmerge(["queue", "status", "--db", database])
        XCTAssertEqual(
            status.stdout.components(separatedBy: "\n")[1], "paused since " + since(again.stdout) + " by \(who)")
        XCTAssertTrue(try metrics().contains("\nvmerge_queue_paused 1\n"))

        let worker = try startWorker("w1")
        XCTAssertTrue(wait(30) { worker.log.contains("the queue is paused") }, worker.log)
        // Ten polls (0.2 s each): still queued, and said once.
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(row(1)?.state, "queued")
        XCTAssertEqual(row(1)?.attempts, 0)
        XCTAssertEqual(
            worker.log.components(separatedBy: "the queue is paused").count - 1, 1,
            "said once, not at each poll: \(worker.log)")
        XCTAssertTrue(
            worker.log.contains(
                "vmerge: worker: the queue is paused (since \(since(again.stdout)) by \(who)): running jobs go on, "
                    + "nothing new is claimed until 'vmerge queue resume'\n"), worker.log)

        let resumed = vmerge(["queue", "resume", "--db", database])
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertEqual(resumed.stdout, "queue: resumed: workers claim jobs again\n")
        XCTAssertEqual(vmerge(["queue", "resume", "--db", database]).stdout, "queue: not paused\n")
        XCTAssertTrue(try metrics().contains("\nvmerge_queue_paused 0\n"))
        XCTAssertTrue(wait(60) { row(1)?.state == "done" }, worker.log)
        XCTAssertEqual(terminate(worker), 143, worker.log)
        let lines = worker.log.components(separatedBy: "\n")
        XCTAssertEqual(lines.filter { $0 == "vmerge: worker: the queue is resumed: claiming jobs again" }.count, 1)
        assertWhole("short.mp4", seconds: 0.5)
    }

    /// The time in "... since <time> by ..."
    private func since(_ line: String) -> String {
        line.firstMatch(of: #/since (\S+) by/#).map { String($0.output.1) } ?? "?"
    }

    /// Paused while it merges: the running job goes on to its end and is recorded done, its lease
    /// renewed meanwhile; the next queued job waits for the resume.
    func testARunningJobFinishesWhileThePausedQueueHoldsTheNext() throws {
        try add(try jobList([longJob("long", count: 10), shortJob("next", seconds: 0.5)]))
        let worker = try startWorker("w1")
        XCTAssertTrue(wait { row(1)?.state == "running" && !temporaries.isEmpty }, worker.log)
        XCTAssertEqual(vmerge(["queue", "pause", "--db", database]).status, 0)
        XCTAssertTrue(wait(90) { row(1)?.state == "done" }, worker.log)
        XCTAssertEqual(row(1)?.attempts, 1, "its lease was renewed: never taken over")
        XCTAssertTrue(wait(10) { worker.log.contains("the queue is paused") }, worker.log)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(row(2)?.state, "queued")
        XCTAssertEqual(outputs, ["long.mp4"])
        XCTAssertEqual(vmerge(["queue", "resume", "--db", database]).status, 0)
        XCTAssertTrue(wait(60) { row(2)?.state == "done" }, worker.log)
        XCTAssertEqual(terminate(worker), 143, worker.log)
        assertWhole("long.mp4", seconds: 30)
    }

    /// --once does not take a paused queue with jobs in it for an empty one: it waits for the
    /// resume, runs the job, and exits 0 once nothing is left.
    func testOnceWaitsForAPausedQueueToBeResumed() throws {
        XCTAssertEqual(vmerge(["queue", "pause", "--db", database]).status, 0)
        try add(try jobList([shortJob("short", seconds: 0.5)]))
        let worker = try startWorker("w1", ["--once"])
        XCTAssertTrue(wait(30) { worker.log.contains("the queue is paused") }, worker.log)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertTrue(worker.isRunning, worker.log)
        XCTAssertEqual(vmerge(["queue", "resume", "--db", database]).status, 0)
        XCTAssertEqual(worker.waitForExit(seconds: 60), 0, worker.log)
        XCTAssertEqual(row(1)?.state, "done")
        XCTAssertTrue(worker.log.contains("nothing queued or running: stopping"), worker.log)
    }
}

/// The claim while paused, on the queue itself: nothing is taken, neither a queued job nor a
/// running one whose lease ran out; one whose lease ran out on its last attempt is still failed.
final class PausedClaimTests: ServerTestCase {
    func testAPausedQueueGivesNothingToClaim() throws {
        let sql = try PGConnection(database)
        try QueueSchema.migrate(sql)
        let queue = JobQueue(connection: sql)
        let jobs = (1...3).map {
            Job(name: "j\($0)", inputs: ["/in/\($0).mov"], output: FileName("/out/\($0).mp4"), options: MergeOptions())
        }
        let ids = try queue.add(jobs, maxAttempts: 2).map(\.id)
        _ = try XCTUnwrap(try queue.claim(worker: "w1"))
        let last = try XCTUnwrap(try queue.claim(worker: "w1"))
        try sql.execute("UPDATE vmerge.jobs SET attempts = 2 WHERE id = $1::bigint", ["\(last.id)"])
        try sql.execute("UPDATE vmerge.jobs SET lease_until = now() - interval '1 second' WHERE state = 'running'")

        XCTAssertTrue(try queue.pause(by: "ops\u{1B}[31m " + String(repeating: "x", count: 300)))
        XCTAssertFalse(try queue.pause(by: "someone else"))
        let pause = try XCTUnwrap(try queue.paused())
        XCTAssertEqual(pause.by.count, JobQueue.pauseByLimit, "bounded")
        XCTAssertTrue(pause.by.hasPrefix("ops\u{1B}[31m "), "kept as given, shown through VisibleText")
        XCTAssertLessThan(abs(pause.since - Date().timeIntervalSince1970), 60)
        XCTAssertEqual(try queue.snapshot().paused, pause)
        XCTAssertNil(try queue.claim(worker: "w2"))
        let states = try sql.execute("SELECT state FROM vmerge.jobs ORDER BY id")
        XCTAssertEqual((0..<3).map { states.value($0, 0) }, ["running", "failed", "queued"])

        XCTAssertTrue(try queue.resume())
        XCTAssertFalse(try queue.resume())
        XCTAssertNil(try queue.paused())
        XCTAssertEqual(try queue.claim(worker: "w2")?.id, ids[0], "the run-out lease first, as before")
        XCTAssertEqual(try queue.claim(worker: "w2")?.id, ids[2])
    }
}
