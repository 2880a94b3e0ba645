import Foundation
import VMergeCLI
import VMergeCore
import XCTest

@testable import VMergeQueue

/// `vmerge queue ...` as the command line runs it (in this process, as main does), against a
/// real server.
final class QueueCommandTests: ServerTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-queue-\(UUID().uuidString)")
        // The inputs of `twoJobs`, there for `queue add` to find (no worker reads them).
        for path in ["trip", "party"] {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent(path), withIntermediateDirectories: true)
        }
        for path in ["trip/1.mov", "trip/2.mov"] {
            try Data().write(to: folder.appendingPathComponent(path))
        }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
        try super.tearDownWithError()
    }

    /// A job list of `lines` in the test's folder; its path.
    private func jobList(_ lines: [String]) throws -> String {
        let path = folder.appendingPathComponent("jobs.jsonl").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private let twoJobs = [
        #"{"name": "trip", "inputs": ["trip/1.mov", "trip/2.mov"], "output": "trip.mp4", "options": {"quality": "high"}}"#,
        #"{"inputs": ["party/"], "output": "out/party.mp4"}"#,
    ]

    func testInitTwice() {
        let first = vmerge(["queue", "init", "--db", database])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.stdout, "queue: created (schema version \(QueueSchema.version))\n")
        let second = vmerge(["queue", "init", "--db", database])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(second.stdout, "queue: up to date (schema version \(QueueSchema.version))\n")
        XCTAssertEqual(second.stderr, "")
    }

    /// The second add finds every job there: the same inputs, options and output are one job.
    func testAddingAJobListTwiceAddsItOnce() throws {
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
        let list = try jobList(twoJobs)
        let first = vmerge(["queue", "add", "--db", database, list])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.stdout, "added 1 trip\nadded 2 party\n2 added, 0 already there\n")
        let second = vmerge(["queue", "add", list, "--db", database])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(second.stdout, "exists 1 trip\nexists 2 party\n0 added, 2 already there\n")
        // Another output for the same inputs is another job (its id after those the conflicts used).
        let other = try jobList([twoJobs[0].replacingOccurrences(of: "trip.mp4", with: "trip2.mp4")])
        let more = vmerge(["queue", "add", "--db", database, other])
        XCTAssertNotNil(
            more.stdout.range(of: #"^added [0-9]+ trip\n1 added, 0 already there\n$"#, options: .regularExpression),
            more.stdout)
    }

    /// What a worker gets: absolute paths, and every option in force, readable by the job-list decoder.
    func testAddedJobsHoldAbsolutePathsAndTheirOptions() throws {
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
        let list = try jobList([twoJobs[0]])
        XCTAssertEqual(vmerge(["queue", "add", "--db", database, "--fps", "25", list]).status, 0)
        let spec = try XCTUnwrap(try PGConnection(database).execute("SELECT spec FROM vmerge.jobs").value(0, 0))
        let job = try JobSpec.job(from: spec, file: "job 1")
        let base = URL(fileURLWithPath: list).deletingLastPathComponent().standardizedFileURL.path
        XCTAssertEqual(job.inputPaths.map(\.escaped), [base + "/trip/1.mov", base + "/trip/2.mov"])
        XCTAssertEqual(job.output.escaped, base + "/trip.mp4")
        XCTAssertEqual(job.name, "trip")
        XCTAssertEqual(job.options.quality, .high)
        XCTAssertEqual(job.options.frameRate, Rational(25, 1))
    }

    /// An input that is not there as the adder sees it is said at once, not when a worker
    /// reaches its job: one line naming it, exit 1, and the queue as it was.
    func testAnInputMissingHereAddsNothing() throws {
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
        let list = try jobList(
            twoJobs + [
                #"{"name": "gone", "inputs": ["trip/1.mov", "gone/3.mov", "gone/4.mov"], "output": "gone.mp4"}"#
            ])
        let refused = vmerge(["queue", "add", "--db", database, list])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(
            refused.stderr,
            "vmerge: \(folder.path)/gone/3.mov: no such file or folder (an input of job gone, and 1 more input); "
                + "nothing added ('--inputs-elsewhere' if the workers see another tree)\n")
        XCTAssertEqual(refused.stdout, "")
        XCTAssertEqual(try PGConnection(database).execute("SELECT count(*) FROM vmerge.jobs").value(0, 0), "0")
    }

    /// Workers that see another tree: the inputs are queued as named, found or not.
    func testInputsElsewhereAreQueuedAsNamed() throws {
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
        let list = try jobList([#"{"name": "there", "inputs": ["/srv/clips/trip/1.mov"], "output": "trip.mp4"}"#])
        let added = vmerge(["queue", "add", "--db", database, "--inputs-elsewhere", list])
        XCTAssertEqual(added.stdout, "added 1 there\n1 added, 0 already there\n", added.stderr)
        let spec = try XCTUnwrap(try PGConnection(database).execute("SELECT spec FROM vmerge.jobs").value(0, 0))
        XCTAssertEqual(try JobSpec.job(from: spec, file: "job 1").inputPaths, ["/srv/clips/trip/1.mov"])
        // Only for add.
        let status = vmerge(["queue", "status", "--db", database, "--inputs-elsewhere"])
        XCTAssertEqual(status.status, 2)
        XCTAssertEqual(
            status.stderr.components(separatedBy: "\n").first,
            "vmerge: queue status: '--inputs-elsewhere' does not apply here")
    }

    func testAFolderOfJobsNeedsOut() throws {
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
        for name in ["b", "a"] {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("in/\(name)"), withIntermediateDirectories: true)
        }
        let inbox = folder.appendingPathComponent("in").path
        let refused = vmerge(["queue", "add", "--db", database, inbox])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(
            refused.stderr.components(separatedBy: "\n").first,
            "vmerge: queue add: a folder of jobs needs '--out <dir>' for the outputs")
        let added = vmerge([
            "queue", "add", "--db", database, inbox, "--out", folder.appendingPathComponent("out").path,
        ])
        XCTAssertEqual(added.stdout, "added 1 a\nadded 2 b\n2 added, 0 already there\n", added.stderr)
    }

    /// A bad line refuses the whole list, before any connection.
    func testAnUnusableJobListAddsNothing() throws {
        let list = try jobList([twoJobs[0], #"{"inputs": [], "output": "x.mp4"}"#])
        let result = vmerge(["queue", "add", "--db", "host=/nonexistent", list])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "vmerge: \(list): line 2: 'inputs' must be a non-empty list of paths\n")
        XCTAssertEqual(result.stdout, "")
    }

    func testStatusCountsAndJSON() throws {
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
        XCTAssertEqual(vmerge(["queue", "add", "--db", database, try jobList(twoJobs)]).status, 0)
        XCTAssertEqual(vmerge(["queue", "cancel", "--db", database, "2"]).status, 0)
        let text = vmerge(["queue", "status", "--db", database])
        XCTAssertEqual(text.status, 0, text.stderr)
        let lines = text.stdout.components(separatedBy: "\n")
        XCTAssertEqual(lines[0], "1 queued, 0 running, 0 done, 0 failed, 1 cancelled")
        XCTAssertEqual(
            lines[1].split(separator: " ").map(String.init),
            ["ID", "STATE", "ATTEMPTS", "NAME", "WORKER", "CREATED", "STARTED", "FINISHED", "ERROR"])
        XCTAssertEqual(lines[2].split(separator: " ").prefix(5).map(String.init), ["1", "queued", "0/3", "trip", "-"])
        XCTAssertEqual(
            lines[3].split(separator: " ").prefix(4).map(String.init), ["2", "cancelled", "0/3", "party"])

        let json = vmerge(["queue", "status", "--json", "--db", database])
        XCTAssertEqual(json.status, 0, json.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["counts", "paused", "jobs"])
        XCTAssertEqual(
            object["counts"] as? [String: Int], ["queued": 1, "running": 0, "done": 0, "failed": 0, "cancelled": 1])
        let jobs = try XCTUnwrap(object["jobs"] as? [[String: Any]])
        XCTAssertEqual(jobs.map { $0["id"] as? Int }, [1, 2])
        XCTAssertEqual(jobs.map { $0["state"] as? String }, ["queued", "cancelled"])
        XCTAssertEqual(
            Set(jobs[0].keys),
            [
                "id", "name", "state", "attempts", "max_attempts", "worker", "output", "created_at", "started_at",
                "finished_at", "not_before", "lease_until", "error",
            ])
        XCTAssertEqual(jobs[0]["attempts"] as? Int, 0)
        XCTAssertEqual(jobs[0]["max_attempts"] as? Int, 3)
        XCTAssertTrue(jobs[0]["worker"] is NSNull)
        XCTAssertTrue((jobs[0]["output"] as? String)?.hasSuffix("/trip.mp4") == true)
        let created = try XCTUnwrap(jobs[0]["created_at"] as? String)
        XCTAssertNotNil(ISO8601DateFormatter().date(from: created), created)
        XCTAssertNotNil((jobs[1]["finished_at"] as? String).flatMap(ISO8601DateFormatter().date(from:)))
    }

    func testRetryAndCancel() throws {
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
        XCTAssertEqual(
            vmerge(["queue", "add", "--db", database, "--max-attempts", "2", try jobList(twoJobs)]).status, 0)
        let sql = try PGConnection(database)
        let state = { (id: Int) in
            try sql.execute("SELECT state, attempts FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"])
        }

        // queued -> cancelled; cancelled again is refused, the other job still changes.
        var run = vmerge(["queue", "cancel", "--db", database, "1"])
        XCTAssertEqual(run.stdout, "cancelled 1 trip\n")
        run = vmerge(["queue", "cancel", "--db", database, "1", "2", "9"])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stdout, "cancelled 2 party\n")
        XCTAssertEqual(
            run.stderr,
            "vmerge: job 1 (trip): cancelled; only a queued or running job can be cancelled\n"
                + "vmerge: job 9: not in the queue\n")

        // failed -> queued, its attempts counted again from 0.
        try sql.execute("UPDATE vmerge.jobs SET state = 'failed', attempts = 2, last_error = 'x' WHERE id = 1")
        run = vmerge(["queue", "retry", "--db", database, "1", "2"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "queued 1 trip\nqueued 2 party\n")
        XCTAssertEqual(try state(1).value(0, 0), "queued")
        XCTAssertEqual(try state(1).value(0, 1), "0")
        run = vmerge(["queue", "retry", "--db", database, "1"])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr, "vmerge: job 1 (trip): queued; only a failed or cancelled job can be retried\n")

        // running -> cancelled: its worker finds out at its next heartbeat.
        try sql.execute("UPDATE vmerge.jobs SET state = 'running', worker = 'w1', attempts = 1 WHERE id = 2")
        run = vmerge(["queue", "cancel", "--db", database, "2"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "cancelled 2 party (running: its worker stops it at its next heartbeat)\n")
        XCTAssertEqual(try state(2).value(0, 0), "cancelled")
        XCTAssertEqual(try state(2).value(0, 1), "1")
    }

    func testTheDatabaseComesFromDbOrVMERGE_DB() throws {
        let missing = vmerge(["queue", "status"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertEqual(
            missing.stderr.components(separatedBy: "\n").first,
            "vmerge: queue: no database given: use '--db <url>' or set VMERGE_DB")
        XCTAssertTrue(missing.stderr.contains("Usage: vmerge queue "), missing.stderr)
        let initialised = vmerge(["queue", "init"], environment: ["VMERGE_DB": database])
        XCTAssertEqual(initialised.status, 0, initialised.stderr)
        // --db wins.
        let other = vmerge(["queue", "status", "--db", "host=/nonexistent"], environment: ["VMERGE_DB": database])
        XCTAssertEqual(other.status, 1)
    }

    func testUsageErrors() {
        for (arguments, message) in [
            (["queue"], "queue: no action given: init, grants, add, status, retry, cancel, pause or resume"),
            (["queue", "halt"], "queue: unknown action 'halt' (expected init, grants, add, status, retry, cancel, pause or resume)"),
            (["queue", "pause", "now"], "queue pause: takes no arguments"),
            (["queue", "resume", "--json"], "queue resume: '--json' does not apply here"),
            (["queue", "retry", "--db", "x"], "queue retry: no job id given"),
            (
                ["queue", "cancel", "--db", "x", "3", "three"],
                "queue cancel: invalid job id 'three': expected a number such as 12"
            ),
            (["queue", "status", "--db", "x", "--quality", "high"], "queue status: '--quality' does not apply here"),
            (["queue", "add", "--db", "x"], "queue add: no job list or folder given"),
            (
                ["queue", "add", "--db", "x", "--max-attempts", "0", "j"],
                "invalid value '0' for '--max-attempts': expected a number from 1 to 100"
            ),
            (["queue", "init", "--db", ""], "'--db' needs a connection string"),
        ] {
            let result = vmerge(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.stderr.components(separatedBy: "\n").first, "vmerge: " + message, "\(arguments)")
        }
    }

    /// One line, naming the connection string without its password, and libpq's reason; exit 1.
    func testABadConnectionStringIsOneLine() {
        // After the warning a password in --db gets (every local user can read it in ps).
        let warning =
            "vmerge: queue: the password in '--db' can be read by every user of this machine (ps); put the "
            + "connection string in VMERGE_DB, or the password in ~/.pgpass or PGPASSWORD\n"
        let unreadable = vmerge(["queue", "status", "--db", "postgresql://me:s3cret@[::1/jobs"])
        XCTAssertEqual(unreadable.status, 1)
        XCTAssertEqual(
            unreadable.stderr,
            warning + "vmerge: connection string: end of string reached when looking for matching \"]\" in IPv6 host address "
                + "in URI: \"...\"\n")
        let nowhere = vmerge(["queue", "init", "--db", "host=/nonexistent dbname=jobs user=me password=s3cret"])
        XCTAssertEqual(nowhere.status, 1)
        XCTAssertEqual(
            nowhere.stderr,
            warning + "vmerge: host=/nonexistent dbname=jobs user=me: connection to server on socket "
                + "\"/nonexistent/.s.PGSQL.5432\" failed: No such file or directory; Is the server running locally "
                + "and accepting connections on that socket?\n")
        let option = vmerge(["queue", "init", "--db", "host=/tmp colour=red"])
        XCTAssertEqual(option.stderr, "vmerge: connection string: invalid connection option \"...\"\n")
    }

    func testAQueueThatIsNotThere() {
        let result = vmerge(["queue", "status", "--db", database])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(
            result.stderr,
            "vmerge: \(PGConnection.redacted(database)): no job queue in this database: create it with 'vmerge queue init'\n"
        )
    }

    /// The server going down between two commands, and coming back.
    func testAStoppedServer() throws {
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
        try server.stop()
        let down = vmerge(["queue", "status", "--db", database])
        XCTAssertEqual(down.status, 1)
        XCTAssertEqual(down.stderr.filter { $0 == "\n" }.count, 1, down.stderr)
        XCTAssertTrue(
            down.stderr.hasPrefix(
                "vmerge: \(PGConnection.redacted(database)): connection to server on socket \"\(server.folder)/.s.PGSQL.5432\" failed: "
            ),
            down.stderr)
        try server.start()
        XCTAssertEqual(vmerge(["queue", "status", "--db", database]).status, 0)
    }
}

/// Runs a vmerge command line in this process, as main does, with `environment` as its whole
/// environment; what it printed.
func vmerge(_ arguments: [String], environment: [String: String] = [:]) -> (
    status: Int32, stdout: String, stderr: String
) {
    let out = Locked(""), err = Locked("")
    let console = Console(
        output: { text in out.update { $0 += text } }, error: { text in err.update { $0 += text } },
        environment: environment)
    let status = VMergeCLI.run(arguments, console: console)
    return (status, out.value, err.value)
}
