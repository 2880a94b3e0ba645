import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

@testable import VMergeQueue

/// A database `vmerge worker` cannot use: one that refuses it for good, and one it cannot reach,
/// read or find a queue in at start, each said in one line with exit 1.
final class WorkerDatabaseRefusalTests: WorkerTestCase {
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
