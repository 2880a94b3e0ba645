import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

final class QueueSchemaTests: ServerTestCase {
    func testInitTwiceChangesNothing() throws {
        let connection = try PGConnection(database)
        XCTAssertEqual(try QueueSchema.migrate(connection), .init(from: 0, to: QueueSchema.version))
        XCTAssertEqual(try QueueSchema.migrate(connection), .init(from: QueueSchema.version, to: QueueSchema.version))
        try QueueSchema.check(connection)
        let versions = try connection.execute("SELECT version FROM vmerge.schema_version ORDER BY version")
        XCTAssertEqual(
            (0..<versions.rowCount).map { versions.value($0, 0) }, (1...QueueSchema.version).map { "\($0)" })
    }

    /// `job_counts` (version 4) says what counting the jobs says after every kind of change:
    /// rows added, states changed (and changed back in a savepoint rolled back, or a transaction
    /// rolled back), rows that change without changing state, rows changed by a role granted only
    /// the jobs, rows deleted and the table truncated; and a long transaction that adds jobs keeps
    /// no other from changing a state.
    func testTheCountsFollowEveryChange() throws {
        let sql = try PGConnection(database)
        try QueueSchema.migrate(sql)
        let queue = JobQueue(connection: sql)
        func assertCountsAgree(_ step: String, line: UInt = #line) throws {
            let counted = try sql.execute("SELECT state, count(*) FROM vmerge.jobs GROUP BY state")
            var expected: [QueueState: Int] = [:]
            for row in 0..<counted.rowCount {
                expected[QueueState(rawValue: counted.value(row, 0) ?? "")!] = Int(counted.value(row, 1) ?? "")
            }
            XCTAssertEqual(try queue.counts(), expected, step, line: line)
        }
        try sql.execute(
            """
            INSERT INTO vmerge.jobs (job_key, name, spec) SELECT 'k' || n, 'job ' || n, '{}'
            FROM generate_series(1, 500) AS n
            """)
        try assertCountsAgree("added")
        try sql.execute(
            "UPDATE vmerge.jobs SET state = (ARRAY['queued', 'running', 'done', 'failed', 'cancelled'])[1 + id % 5]")
        try assertCountsAgree("states changed")
        try sql.execute("UPDATE vmerge.jobs SET heartbeat_at = now(), state = state WHERE id < 100")
        try assertCountsAgree("rows changed, states not")
        try sql.transaction {
            try sql.execute("UPDATE vmerge.jobs SET state = 'failed' WHERE id < 200")
            try sql.execute("SAVEPOINT inner_change")
            try sql.execute("UPDATE vmerge.jobs SET state = 'done' WHERE id < 300")
            try sql.execute("ROLLBACK TO SAVEPOINT inner_change")
        }
        try assertCountsAgree("a savepoint rolled back")
        try sql.execute("BEGIN")
        try sql.execute("UPDATE vmerge.jobs SET state = 'cancelled'")
        try sql.execute("ROLLBACK")
        try assertCountsAgree("a transaction rolled back")

        // A long `queue add` holds its counts' rows until it commits; a claim meanwhile does not wait.
        let other = try PGConnection(database)
        try other.execute("BEGIN")
        try other.execute(
            """
            INSERT INTO vmerge.jobs (job_key, name, spec) SELECT 'l' || n, 'late ' || n, '{}'
            FROM generate_series(1, 300) AS n
            """)
        try other.execute("SET LOCAL lock_timeout = '2s'")  // not a wait: fails the test at once
        try sql.execute("SET lock_timeout = '2s'")
        try sql.execute("UPDATE vmerge.jobs SET state = 'running' WHERE id = 1")
        try sql.execute("UPDATE vmerge.jobs SET state = 'done' WHERE id = 1")
        try assertCountsAgree("beside an open transaction")
        try other.execute("COMMIT")
        try assertCountsAgree("after it")

        // A role granted the jobs and the counting function, and nothing more (as workers are:
        // `queue grants --worker`), keeps the counts right.
        let role = "changer_\(UUID().uuidString.prefix(8).lowercased())"
        try sql.execute("CREATE ROLE \(role) LOGIN")
        try sql.execute("GRANT USAGE ON SCHEMA vmerge TO \(role)")
        try sql.execute("GRANT SELECT, INSERT, UPDATE ON vmerge.jobs TO \(role)")
        try sql.execute("GRANT USAGE ON SEQUENCE vmerge.jobs_id_seq TO \(role)")
        try sql.execute("GRANT EXECUTE ON FUNCTION vmerge.add_job_counts(text[], bigint[]) TO \(role)")
        let limited = try PGConnection(database + " user=\(role)")
        try limited.execute("UPDATE vmerge.jobs SET state = 'failed' WHERE id IN (SELECT id FROM vmerge.jobs LIMIT 10)")
        try limited.execute("INSERT INTO vmerge.jobs (job_key, name, spec) VALUES ('by role', 'by role', '{}')")
        XCTAssertThrowsError(try limited.execute("SELECT * FROM vmerge.job_counts"), "no rights of its own there")
        try assertCountsAgree("changed by that role")

        try sql.execute("DELETE FROM vmerge.jobs WHERE id % 3 = 0")
        try assertCountsAgree("deleted")
        try sql.execute("TRUNCATE vmerge.jobs")
        try assertCountsAgree("truncated")
        try sql.execute("INSERT INTO vmerge.jobs (job_key, name, spec) VALUES ('again', 'again', '{}')")
        try assertCountsAgree("added again")
        // However many changes, the counts stay a few rows.
        let rows = try sql.execute("SELECT count(*) FROM vmerge.job_counts")
        XCTAssertLessThanOrEqual(Int(rows.value(0, 0) ?? "") ?? 99, QueueState.allCases.count)
    }

    /// A queue of version 1 with jobs in it, one running under a lease, migrated: the rows are
    /// kept, the new columns start empty, and the running job's claim goes on (renewed, with
    /// progress, and completed) under the new version.
    func testVersion1IsMigratedWithItsJobs() throws {
        let connection = try PGConnection(database)
        XCTAssertEqual(try QueueSchema.migrate(connection, upTo: 1), .init(from: 0, to: 1))
        XCTAssertThrowsError(try QueueSchema.check(connection)) { error in
            XCTAssertTrue("\(error)".hasSuffix("'vmerge queue init' migrates it to \(QueueSchema.version)"), "\(error)")
        }
        try connection.execute(
            """
            INSERT INTO vmerge.jobs (job_key, name, spec, state, attempts, claims, worker, lease_until, started_at)
            VALUES ('k1', 'running one', '{}', 'running', 1, 1, 'w1', now() + interval '1 hour', now()),
                ('k2', 'done one', '{}', 'done', 1, 1, 'w1', NULL, now())
            """)
        XCTAssertEqual(try QueueSchema.migrate(connection), .init(from: 1, to: QueueSchema.version))
        try QueueSchema.check(connection)
        let rows = try connection.execute(
            "SELECT name, state, worker, heartbeat_at IS NULL, progress IS NULL FROM vmerge.jobs ORDER BY id")
        XCTAssertEqual(rows.rowCount, 2)
        XCTAssertEqual((0..<5).map { rows.value(0, $0) }, ["running one", "running", "w1", "t", "t"])
        XCTAssertEqual((0..<5).map { rows.value(1, $0) }, ["done one", "done", "w1", "t", "t"])

        let queue = JobQueue(connection: connection)
        XCTAssertEqual(try queue.counts(), [.running: 1, .done: 1], "the counts start from the jobs migrated")
        let claim = Claim(id: 1, name: "running one", worker: "w1", attempt: 1, maxAttempts: 3, number: 1, spec: "{}")
        let progress = #"{"phase":"encoding","clip":2,"clips":3,"out_time":4.5}"#
        XCTAssertEqual(try queue.heartbeat(claim, lease: 60, progress: progress), .renewed)
        let beat = try connection.execute(
            "SELECT heartbeat_at > now() - interval '1 minute', progress->>'clip' FROM vmerge.jobs WHERE id = 1")
        XCTAssertEqual([beat.value(0, 0), beat.value(0, 1)], ["t", "2"])
        // Another claim's number is not this lease: it writes nothing.
        var stale = claim
        stale.number = 7
        XCTAssertEqual(try queue.heartbeat(stale, lease: 60, progress: #"{"clip":3}"#), .lost)
        XCTAssertTrue(try queue.complete(claim))
        let done = try connection.execute("SELECT state, progress->>'clip' FROM vmerge.jobs WHERE id = 1")
        XCTAssertEqual([done.value(0, 0), done.value(0, 1)], ["done", "2"], "the last progress is kept")
        XCTAssertEqual(try queue.counts(), [.done: 2])
    }

    /// A queue of version 2 with a running job (its progress published) and a failed one,
    /// migrated to 3: the rows and their progress are kept, the report and log start empty, the
    /// queue is not paused (one row of control, and never a second), and the running job's claim
    /// is completed under the new version.
    func testVersion2IsMigratedWithItsJobs() throws {
        let connection = try PGConnection(database)
        XCTAssertEqual(try QueueSchema.migrate(connection, upTo: 2), .init(from: 0, to: 2))
        try connection.execute(
            """
            INSERT INTO vmerge.jobs (job_key, name, spec, state, attempts, claims, worker, lease_until, started_at,
                heartbeat_at, progress, last_error)
            VALUES ('k1', 'running one', '{}', 'running', 1, 1, 'w1', now() + interval '1 hour', now(), now(),
                    '{"phase": "encoding", "clip": 2}', NULL),
                ('k2', 'failed one', '{}', 'failed', 3, 3, 'w2', NULL, now(), now(), NULL, 'disk full')
            """)
        XCTAssertEqual(try QueueSchema.migrate(connection), .init(from: 2, to: QueueSchema.version))
        try QueueSchema.check(connection)
        let rows = try connection.execute(
            """
            SELECT name, state, worker, progress->>'clip', last_error, report IS NULL, log IS NULL
            FROM vmerge.jobs ORDER BY id
            """)
        XCTAssertEqual((0..<7).map { rows.value(0, $0) }, ["running one", "running", "w1", "2", nil, "t", "t"])
        XCTAssertEqual((0..<7).map { rows.value(1, $0) }, ["failed one", "failed", "w2", nil, "disk full", "t", "t"])
        let control = try connection.execute("SELECT singleton, paused_at IS NULL FROM vmerge.control")
        XCTAssertEqual(control.rowCount, 1)
        XCTAssertEqual([control.value(0, 0), control.value(0, 1)], ["t", "t"])
        XCTAssertThrowsError(try connection.execute("INSERT INTO vmerge.control DEFAULT VALUES"), "one row only")
        XCTAssertThrowsError(try connection.execute("INSERT INTO vmerge.control VALUES (false)"), "one row only")

        let claim = Claim(id: 1, name: "running one", worker: "w1", attempt: 1, maxAttempts: 3, number: 1, spec: "{}")
        XCTAssertTrue(try JobQueue(connection: connection).complete(claim))
        XCTAssertEqual(try connection.execute("SELECT state FROM vmerge.jobs WHERE id = 1").value(0, 0), "done")
    }

    /// The advisory lock makes the second wait for the first, then find the schema made.
    func testConcurrentInitsTakeTurns() throws {
        let target = database!
        let results = Locked<[Result<QueueSchema.Migration, Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let result = Result { try QueueSchema.migrate(PGConnection(target)) }
            results.update { $0.append(result) }
        }
        let migrations = try results.value.map { try $0.get() }
        XCTAssertEqual(migrations.filter { $0.from == 0 }.count, 1, "\(migrations)")
        XCTAssertEqual(Set(migrations.map(\.to)), [QueueSchema.version])
    }

    func testADatabaseWithoutTheQueueIsRefused() throws {
        let connection = try PGConnection(database)
        XCTAssertThrowsError(try QueueSchema.check(connection)) { error in
            XCTAssertEqual(
                "\(error)", "\(connection.target): no job queue in this database: create it with 'vmerge queue init'")
        }
    }

    /// A newer vmerge migrated the queue: this one neither uses nor "migrates" it.
    func testANewerSchemaIsRefused() throws {
        let connection = try PGConnection(database)
        try QueueSchema.migrate(connection)
        try connection.execute("INSERT INTO vmerge.schema_version (version) VALUES (99)")
        let expected =
            "\(connection.target): the job queue is at schema version 99, newer than this vmerge knows "
            + "(\(QueueSchema.version)): use a newer vmerge"
        XCTAssertThrowsError(try QueueSchema.check(connection)) { XCTAssertEqual("\($0)", expected) }
        XCTAssertThrowsError(try QueueSchema.migrate(connection)) { XCTAssertEqual("\($0)", expected) }
    }

    func testTheStatesAreChecked() throws {
        let connection = try PGConnection(database)
        try QueueSchema.migrate(connection)
        XCTAssertThrowsError(
            try connection.execute(
                "INSERT INTO vmerge.jobs (job_key, name, spec, state) VALUES ('k', 'n', '{}', $1)", ["paused"])
        ) { error in
            XCTAssertTrue("\(error)".contains("violates check constraint"), "\(error)")
        }
    }
}

/// What a worker sees of the server going away under an open connection.
final class ConnectionLossTests: ServerTestCase {
    func testARestartedServerBreaksTheConnection() throws {
        let connection = try PGConnection(database)
        XCTAssertFalse(connection.isBroken)
        try server.restart()
        XCTAssertThrowsError(try connection.execute("SELECT 1")) { error in
            guard case let .database(target, message)? = error as? VMergeError else { return XCTFail("\(error)") }
            XCTAssertEqual(target, PGConnection.redacted(database))
            XCTAssertFalse(message.contains("\n"), message)
        }
        XCTAssertTrue(connection.isBroken)
        XCTAssertEqual(try PGConnection(database).execute("SELECT 1").value(0, 0), "1")
    }
}

/// A value shared between threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
