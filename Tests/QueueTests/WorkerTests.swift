import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

@testable import VMergeQueue

/// `vmerge worker` as it runs in production: the built binary, several at once, against a real
/// server, killed (-9), stopped (SIGSTOP), terminated, and with the server restarted under it.
/// Leases are 2 s, so a worker that stopped renewing its lease loses its job quickly.
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
        var next = 4
        var orphaned: [Int] = []
        /// Kills -9 a worker in the middle of a job (its lease then runs out), and starts another.
        func killOneMidJob() throws {
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
                orphaned.append(id)
                return true
            }
            XCTAssertTrue(killed, "no worker was caught in a job")
            // Connected before the server restarts: a worker that cannot connect at start exits,
            // which on a loaded machine made this test fail by its own timing.
            let replacement = try startWorker("w\(next)")
            XCTAssertTrue(wait(30) { replacement.log.contains(" at once, lease ") }, replacement.log)
            next += 1
        }
        XCTAssertTrue(wait { counts()[.done, default: 0] >= 4 }, "stuck: \(counts())")
        try killOneMidJob()
        XCTAssertTrue(wait { counts()[.done, default: 0] >= 9 }, "stuck: \(counts())")
        try server.restart()
        XCTAssertTrue(wait { counts()[.done, default: 0] >= 14 }, "stuck: \(counts())")
        try killOneMidJob()
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

    /// --once: a bad input fails at once (no retry); an output-side error (the output's folder
    /// missing) is retried after its backoff, and done once the folder is there; a file under
    /// the output's name that is not the job's is never replaced. Exit 1: a job failed.
    func testOnceRetriesOutputSideErrorsOnly() throws {
        let missing = folder.appendingPathComponent("later")
        let foreign = out.appendingPathComponent("taken.mp4")
        try Data("not a video".utf8).write(to: foreign)
        var later = shortJob("later", seconds: 0.5)
        later["output"] = missing.appendingPathComponent("later.mp4").path
        try add(
            try jobList([
                shortJob("good", seconds: 0.5),
                ["name": "bad", "inputs": [fixture("bad_text.mov")], "output": "bad.mp4"],
                later, shortJob("taken", seconds: 0.5),
            ]), ["--max-attempts", "2"])
        let worker = try startWorker("w1", ["--once"])
        XCTAssertTrue(wait(30) { row(3)?.state == "queued" && row(3)?.error != nil }, worker.log)
        try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: true)
        XCTAssertEqual(worker.waitForExit(seconds: 60), 1, worker.log)
        XCTAssertEqual(row(1)?.state, "done")
        XCTAssertEqual(row(2)?.state, "failed")
        XCTAssertEqual(row(2)?.attempts, 1, "a bad input is not retried")
        XCTAssertTrue(row(2)?.error?.contains("bad_text.mov: not a readable video file") == true, "\(row(2) as Any)")
        XCTAssertEqual(row(3)?.state, "done")
        XCTAssertEqual(row(3)?.attempts, 2)
        XCTAssertEqual(row(4)?.state, "failed")
        XCTAssertEqual(row(4)?.attempts, 1)
        XCTAssertEqual(
            row(4)?.error,
            "\(foreign.path): output exists and is not this job's; a queued job never replaces it: move it away and "
                + "'vmerge queue retry' the job")
        XCTAssertEqual(try String(contentsOf: foreign, encoding: .utf8), "not a video")
        XCTAssertTrue(worker.log.contains("job 3 later: failed: "), worker.log)
        XCTAssertTrue(worker.log.contains("; tried again in 5 s (attempt 1 of 2)"), worker.log)
        XCTAssertTrue(
            worker.log.hasSuffix(
                "vmerge: worker: nothing queued or running: stopping\nvmerge: worker: w1 stopped: 2 done, 2 failed\n"),
            worker.log)
    }

    /// The output rule is kept where the file is written, whichever door a job came by: a spec
    /// inserted by SQL, or edited in the table, that names an output `queue add` refuses (an MP4
    /// under .txt) fails its job at once (the job's fault: not tried again) and writes nothing.
    func testASpecFromTheTableIsHeldToTheOutputRule() throws {
        try add(try jobList([shortJob("edited", seconds: 0.5)]))
        let sql = try PGConnection(database)
        try sql.execute(
            "UPDATE vmerge.jobs SET spec = jsonb_set(spec, '{output}', to_jsonb($1::text)) WHERE id = 1",
            [out.appendingPathComponent("edited.txt").path])
        let spec = """
            {"name": "j6", "inputs": ["\(clip)"], "output": "\(out.path)/j6.txt", "options": {"min-duration": "0"}}
            """
        try sql.execute("INSERT INTO vmerge.jobs (job_key, name, spec) VALUES ('planted', 'j6', $1::jsonb)", [spec])
        let worker = try startWorker("w1", ["--once"])
        XCTAssertEqual(worker.waitForExit(seconds: 60), 1, worker.log)
        for (id, name) in [(1, "edited.txt"), (2, "j6.txt")] {
            XCTAssertEqual(row(id)?.state, "failed", worker.log)
            XCTAssertEqual(row(id)?.attempts, 1, "not tried again")
            XCTAssertEqual(
                row(id)?.error,
                "\(out.appendingPathComponent(name).path): vmerge writes MP4 or QuickTime files; the name must end in "
                    + "'.mp4', '.m4v' or '.mov'")
        }
        XCTAssertEqual(outputs, [], "nothing written, not even a temporary")
    }

    /// Names are bytes through the queue too: `queue add` of a folder whose job folder and clip
    /// names are not UTF-8, beside their U+FFFD twins, stores the names losslessly in the specs,
    /// and the worker merges each job's own files into its own output.
    func testTheQueueCarriesNamesAsBytes() throws {
        let jobs = folder.appendingPathComponent("jobs").path
        let job = Array("J".utf8) + [0xFE]
        let clipName = Array("c".utf8) + [0xFF] + Array(".mov".utf8)
        let twin = Array("J\u{FFFD}".utf8)
        for (folderName, name, source) in [
            (job, clipName, clip), (twin, Array("c\u{FFFD}.mov".utf8), fixture("j_audio_offset_640x480_30fps.mov")),
        ] {
            let path = Array((jobs + "/").utf8) + folderName
            try FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
            XCTAssertEqual((path + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { mkdir($0.baseAddress!, 0o755) } }, 0)
            XCTAssertEqual(copy(source, to: path + [0x2F] + name), 0)
        }
        let word = { (bytes: [UInt8]) in "$'" + bytes.map { String(format: "\\x%02x", $0) }.joined() + "'" }
        let script = "exec \"$VMERGE\" queue add --db \"$DB\" --min-duration 0 --out \(word(Array(out.path.utf8))) "
            + word(Array(jobs.utf8))
        let added = try runProgram(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script],
            environment: ["VMERGE": WorkerProcess.binary.path, "DB": database])
        XCTAssertEqual(added.status, 0, added.stderr)
        let specs = try PGConnection(database).execute("SELECT spec->>'output' FROM vmerge.jobs ORDER BY id")
        let stored = (0..<specs.rowCount).compactMap { specs.value($0, 0) }.map(FileName.bytes(of:))
        XCTAssertEqual(Set(stored), [Array((out.path + "/").utf8) + job + Array(".mp4".utf8),
            Array((out.path + "/").utf8) + twin + Array(".mp4".utf8)], "the specs hold the names' bytes")
        let worker = try startWorker("w1", ["--once"])
        XCTAssertEqual(worker.waitForExit(seconds: 60), 0, worker.log)
        XCTAssertTrue(worker.log.contains("J\\xFE"), worker.log)
        for (name, seconds) in [(job, 3.0), (twin, 2.5)] {
            let path = out.path + "/" + FileName.decode(name + Array(".mp4".utf8))
            XCTAssertEqual((try? Probe.clip(at: path).0.durationSeconds) ?? -1, seconds, accuracy: 0.05, "\(name)")
        }
    }

    /// Copies `source` to a path given as bytes; 0 on success.
    private func copy(_ source: String, to path: [UInt8]) -> Int32 {
        guard let data = FileManager.default.contents(atPath: source) else { return -1 }
        let fd = (path + [0]).withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        return data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == data.count ? 0 : -1
    }

    /// A worker whose database role may read the queue but not change it is refused for good, not
    /// cut off: it stops with one line naming the refusal and exit 1 (with --once too), where it
    /// used to say "trying again" for ever. The job stays queued for a worker that may write.
    func testAWorkerTheDatabaseRefusesForGoodStopsWithOneLine() throws {
        try add(try jobList([shortJob("j1", seconds: 0.5)]))
        let role = "reader_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try PGConnection(database)
        try admin.execute("CREATE ROLE \(role) LOGIN")
        try admin.execute("GRANT USAGE ON SCHEMA vmerge TO \(role)")
        try admin.execute("GRANT SELECT ON ALL TABLES IN SCHEMA vmerge TO \(role)")
        for extra in [["--once"], []] {
            let worker = try WorkerProcess(
                ["worker", "--db", database + " user=\(role)", "--name", "r", "--poll-interval", "0.2"] + extra,
                log: folder.appendingPathComponent("reader\(extra.count).log"))
            workers.append(worker)
            XCTAssertEqual(worker.waitForExit(seconds: 20), 1, "still running: " + worker.log)
            let lines = worker.log.split(separator: "\n").map(String.init)
            XCTAssertEqual(lines.count, 2, worker.log)
            let last = lines.last ?? ""
            XCTAssertTrue(last.hasPrefix("vmerge: "), last)
            XCTAssertTrue(last.contains("permission denied"), last)
            XCTAssertTrue(last.hasSuffix("(SQLSTATE 42501): the database refuses this worker; stopping"), last)
            XCTAssertFalse(worker.log.contains("trying again"), worker.log)
        }
        XCTAssertEqual(row(1)?.state, "queued")
        XCTAssertEqual(row(1)?.attempts, 0)
    }

    /// One row whose attempts counter is at the integer's limit used to make every claim fail
    /// ("integer out of range") and stall the whole queue: it is failed, saying why, and the
    /// others are done.
    func testARowAtTheCountersLimitFailsAloneAndTheQueueGoesOn() throws {
        try add(try jobList([shortJob("stuck", seconds: 0.5), shortJob("next", seconds: 0.5)]))
        try PGConnection(database).execute("UPDATE vmerge.jobs SET attempts = 2147483647 WHERE id = 1")
        let worker = try startWorker("w1", ["--once"])
        XCTAssertNotNil(worker.waitForExit(seconds: 30), "still running: " + worker.log)
        XCTAssertEqual(row(1)?.state, "failed")
        XCTAssertEqual(
            row(1)?.error,
            "its attempts (2147483647) or claims (0) reached the counter's limit; vmerge queue retry resets the attempts")
        XCTAssertEqual(row(2)?.state, "done", worker.log)
        XCTAssertFalse(worker.log.contains("trying again"), worker.log)
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

    /// At start, a database that cannot be used is one line and exit 1 (later outages are
    /// waited out); no database at all is a usage error.
    func testAnUnusableDatabaseAtStartIsOneLine() throws {
        // A password in --db is warned of first (every local user can read it in ps).
        let warning =
            "vmerge: worker: the password in '--db' can be read by every user of this machine (ps); put the "
            + "connection string in VMERGE_DB, or the password in ~/.pgpass or PGPASSWORD\n"
        let unreadable = vmerge(["worker", "--db", "postgresql://me:s3cret@[::1/jobs"])
        XCTAssertEqual(unreadable.status, 1)
        XCTAssertEqual(
            unreadable.stderr,
            warning + "vmerge: connection string: end of string reached when looking for matching \"]\" in IPv6 host address "
                + "in URI: \"...\"\n")
        let down = vmerge(["worker", "--db", "host=/nonexistent dbname=jobs user=me password=s3cret"])
        XCTAssertEqual(down.status, 1)
        XCTAssertEqual(
            down.stderr,
            warning + "vmerge: host=/nonexistent dbname=jobs user=me: connection to server on socket "
                + "\"/nonexistent/.s.PGSQL.5432\" failed: No such file or directory; Is the server running locally "
                + "and accepting connections on that socket?\n")
        let empty = try server.makeDatabase("noqueue")
        let noQueue = vmerge(["worker", "--db", empty])
        XCTAssertEqual(noQueue.status, 1)
        XCTAssertEqual(
            noQueue.stderr,
            "vmerge: \(PGConnection.redacted(empty)): no job queue in this database: create it with 'vmerge queue init'\n"
        )
        let none = vmerge(["worker"])
        XCTAssertEqual(none.status, 2)
        XCTAssertEqual(
            none.stderr.components(separatedBy: "\n").first,
            "vmerge: worker: no database given: use '--db <url>' or set VMERGE_DB")
        // The server down: the same one line.
        try server.stop()
        defer { try? server.start() }
        let stopped = vmerge(["worker", "--db", database])
        XCTAssertEqual(stopped.status, 1)
        XCTAssertEqual(stopped.stderr.filter { $0 == "\n" }.count, 1, stopped.stderr)
        XCTAssertTrue(stopped.stderr.hasPrefix("vmerge: \(PGConnection.redacted(database)): connection to server"))
    }
}

/// A fixture clip's path.
func fixture(_ name: String) -> String {
    Fixtures.directory.appendingPathComponent(name).path
}

/// The built `vmerge` binary running in the background, its stderr (and stdout) into a file.
final class WorkerProcess {
    let process = Process()
    let logFile: URL
    /// Its --name.
    let name: String

    /// The built binary (TestSupport finds it).
    static var binary: URL { VMergeBinary.url }

    init(_ arguments: [String], log: URL, environment: [String: String] = [:]) throws {
        logFile = log
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        name = arguments.firstIndex(of: "--name").map { arguments[$0 + 1] } ?? ""
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.executableURL = WorkerProcess.binary
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try handle.close()
    }

    var isRunning: Bool { process.isRunning }
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    func kill(_ signal: Int32) {
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, signal) }
    }

    /// Its exit status (128 + the signal that killed it), or nil if it is still running after
    /// `seconds`.
    func waitForExit(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        guard !process.isRunning else { return nil }
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }
}
