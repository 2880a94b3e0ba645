import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

@testable import VMergeQueue

/// `vmerge worker` as it runs in production: the built binary, several at once, against a real
/// server, killed (-9), stopped (SIGSTOP), terminated, cancelled, and with the server restarted or
/// down under it. Leases are 2 s, so a worker that stopped renewing its lease loses its job quickly.
/// What a worker does with a job that fails or is odd is in WorkerJobHandlingTests, a database it
/// cannot use in WorkerDatabaseRefusalTests.
final class WorkerTests: WorkerTestCase {
    /// The issue's test: 24 jobs, 3 workers, two of them killed with -9 mid-job and replaced,
    /// the server restarted once. Every job is done exactly once, every output whole, nothing
    /// temporary left, and adding the list again adds nothing.
    func testWorkersKilledAndTheServerRestartedDoEveryJobExactlyOnce() throws {
        let seconds = (1...24).map { 0.3 + Double($0 % 4) * 0.1 }
        let list = try jobList((1...24).map { shortJob("j\($0)", seconds: seconds[$0 - 1]) })
        try add(list)
        let started = Date()
        for n in 1...3 { try startWorker("w\(n)") }
        var orphaned: [Int] = []
        XCTAssertTrue(wait { counts()[.done, default: 0] >= 4 }, "stuck: \(counts())")
        if let job = try killOneMidJob(startingInItsPlace: "w4") { orphaned.append(job) }
        XCTAssertTrue(wait { counts()[.done, default: 0] >= 9 }, "stuck: \(counts())")
        try server.restart()
        XCTAssertTrue(wait { counts()[.done, default: 0] >= 14 }, "stuck: \(counts())")
        if let job = try killOneMidJob(startingInItsPlace: "w5") { orphaned.append(job) }
        XCTAssertTrue(wait(90) { counts()[.done, default: 0] == 24 }, "stuck: \(counts())")
        let elapsed = Date().timeIntervalSince(started)

        let alive = workers.filter(\.isRunning)
        XCTAssertEqual(alive.count, 3, "a worker died of the restart: \(workers.filter { !$0.isRunning }.map(\.log))")
        for worker in alive { XCTAssertEqual(terminate(worker), 143, worker.log) }
        XCTAssertEqual(counts(), [.done: 24])
        for id in orphaned {
            XCTAssertGreaterThanOrEqual(row(id)?.attempts ?? 0, 2, "job \(id) of a killed worker was not taken over")
        }
        XCTAssertEqual(outputs, (1...24).map { "j\($0).mp4" }.sorted(), "one output per job, nothing temporary")
        for n in 1...24 { assertWhole("j\(n).mp4", seconds: seconds[n - 1]) }
        // Published once each: a run that published logs "done -> <output>", recorded or not.
        let logs = workers.map(\.log).joined()
        for n in 1...24 {
            let published = logs.components(separatedBy: "done -> \(out.path)/j\(n).mp4 ").count - 1
            XCTAssertLessThanOrEqual(published, 1, "j\(n) published \(published) times")
        }
        XCTAssertTrue(
            alive.contains { $0.log.contains("worker: the database is back") }, "no worker noticed the restart")
        XCTAssertFalse(logs.contains("s3cret"))

        let again = vmerge(["queue", "add", "--db", database, "--out", out.path, "--min-duration", "0", list])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("added") }, [])
        XCTAssertTrue(again.stdout.hasSuffix("0 added, 24 already there\n"), again.stdout)
        XCTAssertEqual(orphaned.count, 2)
        print(
            "24 jobs, 3 workers, 2 killed (in jobs \(orphaned.map { "\($0)" }.joined(separator: " and "))), "
                + "1 server restart: \(String(format: "%.1f", elapsed)) s")
    }

    /// Kills -9 a worker in the middle of a job (its lease then runs out), and starts another,
    /// named `name`; the job the killed worker held (nil, and a failure, if none was caught).
    private func killOneMidJob(startingInItsPlace name: String) throws -> Int? {
        var orphan: Int?
        let killed = wait(30) {
            // Frozen first, so the job it holds cannot end between the look and the kill.
            guard let victim = workers.first(where: \.isRunning) else { return false }
            victim.kill(SIGSTOP)
            let held = try? PGConnection(database).execute(
                "SELECT id FROM vmerge.jobs WHERE state = 'running' AND worker = $1", [victim.name])
            guard let id = held?.value(0, 0).flatMap({ Int($0) }) else {
                victim.kill(SIGCONT)
                return false
            }
            victim.kill(SIGKILL)
            orphan = id
            return true
        }
        XCTAssertTrue(killed, "no worker was caught in a job")
        // Connected before the server restarts: a worker that cannot connect at start exits,
        // which on a loaded machine made this test fail by its own timing.
        let replacement = try startWorker(name)
        XCTAssertTrue(wait(30) { replacement.log.contains(" at once, lease ") }, replacement.log)
        return orphan
    }

    /// A worker stopped (SIGSTOP) mid-job stops renewing its lease; once it ran out another
    /// worker takes the job and finishes it. The first, continued, finds the job lost, stops it
    /// and removes its temporary: the output is the second's, published once.
    func testAJobWhoseLeaseRanOutIsTakenOverByAnotherWorker() throws {
        try add(try jobList([longJob("long", count: 20)]))
        let first = try startWorker("first")
        XCTAssertTrue(wait { !temporaries.isEmpty }, first.log)
        first.kill(SIGSTOP)
        let second = try startWorker("second")
        XCTAssertTrue(wait(90) { row(1)?.state == "done" }, second.log)
        XCTAssertEqual(row(1)?.worker, "second")
        XCTAssertEqual(row(1)?.attempts, 2)
        let published = try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent("long.mp4").path)
        first.kill(SIGCONT)
        XCTAssertTrue(wait(30) { first.log.contains("job 1 long: stopped: ") }, first.log)
        XCTAssertEqual(terminate(first), 143, first.log)
        XCTAssertEqual(terminate(second), 143, second.log)
        XCTAssertEqual(outputs, ["long.mp4"], "the first worker's temporary is gone")
        let now = try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent("long.mp4").path)
        XCTAssertEqual(now[.systemFileNumber] as? Int, published[.systemFileNumber] as? Int, "published twice")
        assertWhole("long.mp4", seconds: 60)
        XCTAssertEqual(row(1)?.state, "done")
    }

    /// `queue cancel` stops a running job at the worker's next heartbeat (its temporary removed,
    /// the other slot's job going on); `queue retry` queues it again, and it is done.
    func testCancelAndRetryARunningJob() throws {
        try add(try jobList([longJob("long", count: 10), shortJob("short", seconds: 0.5)]))
        let worker = try startWorker("w1", jobs: "2")
        XCTAssertTrue(wait { row(1)?.state == "running" && !temporaries.isEmpty }, worker.log)
        let cancelled = vmerge(["queue", "cancel", "--db", database, "1"])
        XCTAssertEqual(cancelled.status, 0, cancelled.stderr)
        XCTAssertTrue(
            wait(10) { worker.log.contains("job 1 long: stopped: it was cancelled in the queue") }, worker.log)
        XCTAssertTrue(wait(30) { row(2)?.state == "done" }, worker.log)
        XCTAssertEqual(outputs, ["short.mp4"])
        XCTAssertEqual(row(1)?.state, "cancelled")

        let retried = vmerge(["queue", "retry", "--db", database, "1"])
        XCTAssertEqual(retried.status, 0, retried.stderr)
        XCTAssertTrue(wait(60) { row(1)?.state == "done" }, worker.log)
        XCTAssertEqual(row(1)?.attempts, 1, "a retry counts attempts from 0")
        XCTAssertEqual(terminate(worker), 143, worker.log)
        XCTAssertEqual(outputs, ["long.mp4", "short.mp4"])
        assertWhole("long.mp4", seconds: 30)
    }

    /// SIGTERM cancels the running job and puts it back, its attempt not counted; exit 143.
    func testSIGTERMPutsTheRunningJobBack() throws {
        try add(try jobList([longJob("long", count: 20)]))
        let worker = try startWorker("w1")
        XCTAssertTrue(wait { !temporaries.isEmpty }, worker.log)
        XCTAssertEqual(terminate(worker), 143, worker.log)
        XCTAssertTrue(worker.log.contains("job 1 long: put back in the queue"), worker.log)
        XCTAssertEqual(row(1)?.state, "queued")
        XCTAssertEqual(row(1)?.attempts, 0)
        XCTAssertEqual(outputs, [], "no temporary, no output")
        let interrupted = try startWorker("w2")
        XCTAssertTrue(wait { !temporaries.isEmpty }, interrupted.log)
        interrupted.kill(SIGINT)
        XCTAssertEqual(interrupted.waitForExit(seconds: 30), 130, interrupted.log)
        XCTAssertEqual(row(1)?.state, "queued")
    }

    /// SIGTERM while the server is down: the job is cancelled at once, the worker waits a while
    /// for the server to put it back, then exits anyway; the job's lease runs out and it is
    /// claimed again.
    func testSIGTERMWhileTheServerIsDownStillStops() throws {
        try add(try jobList([longJob("long", count: 10)]))
        let worker = try startWorker("w1")
        XCTAssertTrue(wait { !temporaries.isEmpty }, worker.log)
        try server.stop()
        let stopping = Date()
        XCTAssertEqual(terminate(worker), 143, worker.log)
        XCTAssertLessThan(Date().timeIntervalSince(stopping), Worker.stopGrace + 5)
        XCTAssertTrue(
            worker.log.contains("stopping with 1 job not put back: the database cannot be reached"), worker.log)
        XCTAssertEqual(outputs, [], "its temporary is removed all the same")
        try server.start()
        XCTAssertEqual(row(1)?.state, "running", "its lease runs out")
        let next = try startWorker("w2")
        XCTAssertTrue(wait(90) { row(1)?.state == "done" }, next.log)
        XCTAssertEqual(row(1)?.attempts, 2)
        XCTAssertEqual(terminate(next), 143, next.log)
    }

    /// A merge that ends while the server is down is recorded once it is back; the worker and
    /// the merge go on through the outage, and heartbeats that cannot reach the server (every
    /// second: the lease is 3 s) stop nothing.
    func testAMergeFinishingWhileTheServerIsDownIsRecordedWhenItIsBack() throws {
        try add(try jobList([longJob("long", count: 10)]))
        let worker = try startWorker("w1", lease: "3")
        XCTAssertTrue(wait { !temporaries.isEmpty }, worker.log)
        try server.stop()
        XCTAssertTrue(wait(60) { outputs == ["long.mp4"] }, worker.log)
        // Past the lease: nobody else is there to take the job over.
        Thread.sleep(forTimeInterval: 3)
        XCTAssertTrue(worker.isRunning, worker.log)
        try server.start()
        XCTAssertTrue(wait(30) { row(1)?.state == "done" }, worker.log)
        XCTAssertEqual(row(1)?.attempts, 1)
        XCTAssertEqual(terminate(worker), 143, worker.log)
        let lines = worker.log.components(separatedBy: "\n")
        XCTAssertEqual(lines.filter { $0.contains("trying again (running jobs go on)") }.count, 1, worker.log)
        XCTAssertEqual(lines.filter { $0.contains("the database is back") }.count, 1, worker.log)
        XCTAssertEqual(lines.filter { $0.contains("job 1 long: done -> ") }.count, 1, worker.log)
        XCTAssertFalse(worker.log.contains("s3cret"), worker.log)
        assertWhole("long.mp4", seconds: 30)
    }

    /// A worker killed after publishing but before recording: the lease runs out, and the next
    /// claim finds the output holding the job's key and records it done without work.
    func testAJobPublishedButNotRecordedIsDoneWithoutWork() throws {
        try add(try jobList([shortJob("j1", seconds: 0.5)]))
        XCTAssertEqual(try startWorker("w1", ["--once"]).waitForExit(seconds: 60), 0)
        let path = out.appendingPathComponent("j1.mp4").path
        let published = try FileManager.default.attributesOfItem(atPath: path)
        // What a worker killed between the two leaves: running, its lease out.
        try PGConnection(database).execute(
            "UPDATE vmerge.jobs SET state = 'running', worker = 'gone', lease_until = now() - interval '1 s'")
        let worker = try startWorker("w2", ["--once"])
        XCTAssertEqual(worker.waitForExit(seconds: 60), 0, worker.log)
        XCTAssertTrue(worker.log.contains("job 1 j1: skipped, \(path) is up to date"), worker.log)
        // The last line says it stopped and what it did; the password in --db was warned of.
        let lines = worker.log.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.last, "vmerge: worker: w2 stopped: 1 done, 0 failed", worker.log)
        XCTAssertTrue(
            lines.contains { $0.contains("the password in '--db' can be read by every user of this machine (ps)") },
            worker.log)
        XCTAssertFalse(worker.log.contains("s3cret"), worker.log)
        XCTAssertEqual(row(1)?.state, "done")
        XCTAssertEqual(row(1)?.attempts, 2)
        let now = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual(now[.systemFileNumber] as? Int, published[.systemFileNumber] as? Int)
        XCTAssertEqual(now[.modificationDate] as? Date, published[.modificationDate] as? Date)
    }

    /// A worker killed between publishing the job's poster and its video: the next worker to take
    /// the job (its lease run out) takes the poster its earlier attempt left, which carries the
    /// job's key, as the job's own, and finishes the job; nothing temporary is left. Before, the
    /// job failed for good ("j1.jpg: output exists") with its temporary left behind.
    func testAPosterLeftByAKilledAttemptIsTheJobsOwn() throws {
        try add(try jobList([shortJob("j1", seconds: 0.5)]), ["--poster", "{name}.jpg"])
        let killed = try startWorker("w1", ["--once"], environment: ["VMERGE_TEST_KILL_AT": "before-video"])
        XCTAssertEqual(killed.waitForExit(seconds: 60), 128 + SIGKILL, killed.log)
        XCTAssertEqual(outputs.filter { !$0.hasPrefix(".") }, ["j1.jpg"])
        let worker = try startWorker("w2", ["--once"])
        XCTAssertEqual(worker.waitForExit(seconds: 60), 0, worker.log)
        XCTAssertEqual(row(1)?.state, "done")
        XCTAssertEqual(outputs, ["j1.jpg", "j1.mp4"], "no temporary left")
        assertWhole("j1.mp4", seconds: 0.5)
    }
}
