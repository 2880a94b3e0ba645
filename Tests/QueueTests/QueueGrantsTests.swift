import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeQueue

/// `vmerge queue grants`: the SQL it prints, run by psql against a real server, gives a role what
/// a worker or a read-only dashboard needs and nothing more, and a role's name stays one name.
final class QueueGrantsTests: ServerTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        let made = vmerge(["queue", "init", "--db", database])
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    /// Makes a login role named `name` (any text: quoted here), and runs the grants `vmerge queue
    /// grants --<use> <name>` prints through psql, as the queue's owner.
    private func grant(_ use: String, to name: String) throws {
        let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        try PGConnection(database).execute("CREATE ROLE \(quoted) LOGIN")
        let printed = vmerge(["queue", "grants", "--\(use)", name])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        let psql = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"), ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", database],
            input: printed.stdout)
        XCTAssertEqual(psql.status, 0, psql.stderr)
    }

    /// Every statement a worker runs, run as a role given only a worker's grants: claims (with the
    /// clean-ups before them), heartbeats, a retryable failure, a put-back, a cancel seen and
    /// recorded, a completion, the counts and the pause.
    func testAWorkerRoleMakesEveryChangeAWorkerMakes() throws {
        try grant("worker", to: "w")
        let owner = try JobQueue(connecting: database)
        let job = Job(name: "j", inputs: ["/srv/j.mov"], output: "/srv/j.mp4", options: MergeOptions())
        _ = try owner.add([job], maxAttempts: 5)
        let worker = try JobQueue(connecting: database + " user=w")
        let superuser = try PGConnection(database)

        var claim = try XCTUnwrap(try worker.claim(worker: "w1"))
        XCTAssertEqual(try worker.heartbeat(claim, progress: #"{"phase": "encoding"}"#), .renewed)
        XCTAssertEqual(
            try worker.fail(claim, error: "disk full", retryable: true, report: "{}", log: ["a line"]),
            .retrying(afterSeconds: JobQueue.backoff(afterAttempt: 1)))
        try superuser.execute("UPDATE vmerge.jobs SET not_before = now()")
        claim = try XCTUnwrap(try worker.claim(worker: "w1"))
        XCTAssertTrue(try worker.release(claim, report: "{}", log: ["put back"]))
        claim = try XCTUnwrap(try worker.claim(worker: "w1"))
        XCTAssertEqual(try owner.cancel(claim.id), .changed(name: "j", was: .running))
        XCTAssertEqual(try worker.heartbeat(claim), .cancelled)
        XCTAssertTrue(try worker.recordCancelled(claim, report: "{}", log: ["cancelled"]))
        XCTAssertEqual(try owner.retry(claim.id), .changed(name: "j", was: .cancelled))
        claim = try XCTUnwrap(try worker.claim(worker: "w1"))
        XCTAssertTrue(try worker.complete(claim, progress: #"{"phase": "done"}"#, report: "{}", log: ["done"]))
        XCTAssertEqual(try worker.counts(), [.done: 1])
        XCTAssertNil(try worker.paused())
        XCTAssertNil(try worker.claim(worker: "w1"))
    }

    /// A read-only dashboard's role reads all the dashboard reads (the snapshot, the pages, the
    /// name filter, a job's page) and changes nothing: not a job, not the pause, not the counts.
    func testAReaderRoleReadsTheQueueAndChangesNothing() throws {
        try grant("reader", to: "r")
        let owner = try JobQueue(connecting: database)
        _ = try owner.add(
            [Job(name: "trip", inputs: ["/srv/t.mov"], output: "/srv/t.mp4", options: MergeOptions())], maxAttempts: 3)
        let reader = try JobQueue(connecting: database + " user=r")
        XCTAssertEqual(try reader.status().jobs.map(\.name), ["trip"])
        XCTAssertEqual(try reader.snapshot().counts[.queued], 1)
        XCTAssertEqual(
            try reader.page(JobFilter(nameContains: "RI"), before: nil, limit: 10).jobs.map(\.name), ["trip"])
        XCTAssertEqual(try reader.detail(1)?.job?.output, "/srv/t.mp4")
        for (attempt, refusal) in [
            ({ _ = try reader.cancel(1) }, "permission denied for table jobs"),
            ({ _ = try reader.pause(by: "r") }, "permission denied for table control"),
            (
                { _ = try reader.connection.execute("SELECT vmerge.add_job_counts('{done}', '{5}')") },
                "permission denied for function add_job_counts"
            ),
        ] as [(() throws -> Void, String)] {
            XCTAssertThrowsError(try attempt()) { XCTAssertTrue("\($0)".contains(refusal), "\($0)") }
        }
        XCTAssertEqual(try owner.counts(), [.queued: 1])
    }

    /// The counting function runs as the queue's owner: no role may call it but the owner and the
    /// roles given it (workers). A queue made before version 5 loses PUBLIC's right as it migrates.
    func testOnlyTheOwnerAndWorkersMayWriteTheCounts() throws {
        let older = try server.makeDatabase("before5")
        let connection = try PGConnection(older)
        try QueueSchema.migrate(connection, upTo: 4)
        let function = "vmerge.add_job_counts(text[], bigint[])"
        let publicMay = "SELECT has_function_privilege('public', '\(function)', 'EXECUTE')"
        XCTAssertEqual(try connection.execute(publicMay).value(0, 0), "t", "version 4 left it to PUBLIC")
        try QueueSchema.migrate(connection)
        XCTAssertEqual(try connection.execute(publicMay).value(0, 0), "f")

        try PGConnection(database).execute("CREATE ROLE nobody LOGIN")
        try PGConnection(database).execute("GRANT USAGE ON SCHEMA vmerge TO nobody")
        XCTAssertThrowsError(
            try PGConnection(database + " user=nobody").execute("SELECT vmerge.add_job_counts('{done}', '{5}')")
        ) { XCTAssertTrue("\($0)".contains("permission denied for function add_job_counts"), "\($0)") }
        XCTAssertEqual(try JobQueue(connecting: database).counts(), [:])
    }

    /// Whatever a role is called, the SQL names that one role: quotes, semicolons, spaces and
    /// other scripts stay inside its name.
    func testAnyRoleNameIsOneQuotedName() throws {
        let hostile = #"x"; DROP TABLE vmerge.jobs; --"#
        for name in [hostile, "Ünïcode Rôle", "Worker"] {
            try grant("reader", to: name)
            let may = try PGConnection(database).execute(
                "SELECT has_table_privilege($1, 'vmerge.jobs', 'SELECT')", [name])
            XCTAssertEqual(may.value(0, 0), "t", name)
        }
        XCTAssertEqual(
            try PGConnection(database).execute("SELECT to_regclass('vmerge.jobs') IS NOT NULL").value(0, 0), "t")
        XCTAssertTrue(
            vmerge(["queue", "grants", "--worker", hostile]).stdout.contains(#"TO "x""; DROP TABLE vmerge.jobs; --";"#))
    }

    /// A name PostgreSQL would read as another role, or every role, is a usage error: one line,
    /// exit 2, no SQL.
    func testNamesThatAreNotOneRoleAreRefused() {
        let long = String(repeating: "a", count: 64)
        for (name, why) in [
            ("public", "PostgreSQL reads 'public' as every role"),
            ("PUBLIC", "PostgreSQL reads 'public' as every role"),
            ("none", "'none' is a name PostgreSQL keeps for itself"),
            ("pg_monitor", "names starting with pg_ are PostgreSQL's own roles"),
            ("", "a role name cannot be empty"), ("a\nb", "a role name cannot hold control characters"),
            (long, "a role name has at most 63 bytes (PostgreSQL would cut it to another name)"),
        ] {
            let refused = vmerge(["queue", "grants", "--reader", name])
            XCTAssertEqual(refused.status, 2, name)
            XCTAssertEqual(
                refused.stderr, "vmerge: invalid role '\(VisibleText.of(name))' for '--reader': \(why)\n", name)
            XCTAssertEqual(refused.stdout, "", name)
        }
        XCTAssertEqual(vmerge(["queue", "grants", "--worker", String(repeating: "é", count: 31) + "a"]).status, 0)
        for (arguments, message) in [
            (["queue", "grants"], "queue grants: name the role: '--worker <role>' or '--reader <role>'"),
            (
                ["queue", "grants", "--worker", "w", "--db", "x"],
                "queue grants: '--db' does not apply here (it prints SQL, for psql)"
            ),
            (["queue", "grants", "w"], "queue grants: takes no arguments"),
            (["queue", "status", "--db", "x", "--reader", "r"], "queue status: '--reader' does not apply here"),
        ] {
            let refused = vmerge(arguments)
            XCTAssertEqual(refused.status, 2, "\(arguments)")
            XCTAssertEqual(refused.stderr.components(separatedBy: "\n").first, "vmerge: \(message)", "\(arguments)")
        }
    }
}
