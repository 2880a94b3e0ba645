import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// The dashboard while its database cannot answer (stopped, holding a read up behind a lock, or its
/// server process stopped): every scrape is answered within the deadline with
/// vmerge_database_up 0, the page says so, the log says it once, and the figures come back.
final class DashboardDatabaseOutageTests: DashboardTestCase {
    /// A stopped database is an answer, at once (vmerge_database_up 0, no queue series), and the
    /// figures come back with it.
    func testADatabaseThatStopsIsSaidAtOnceAndComesBack() throws {
        try addJobs(["a", "b"])
        let (dashboard, port) = try startDashboard()
        XCTAssertTrue(try RawHTTP(port: port).request("GET", "/metrics").text.contains("\nvmerge_database_up 1\n"))
        try server.stop()
        defer { try? server.start() }
        // Past the second a snapshot is shared for.
        Thread.sleep(forTimeInterval: 1.1)
        let started = Date()
        let down = try RawHTTP(port: port).request("GET", "/metrics")
        XCTAssertLessThan(Date().timeIntervalSince(started), 3.5)
        XCTAssertEqual(down.status, 200)
        XCTAssertEqual(
            down.text,
            "# HELP vmerge_database_up 1 if the queue's database answered this scrape (with a queue of this vmerge's "
                + "schema), else 0.\n# TYPE vmerge_database_up gauge\nvmerge_database_up 0\n")
        let page = try RawHTTP(port: port).request("GET", "/")
        XCTAssertEqual(page.status, 200)
        // The page says so without the database's own words (they name hosts and users); the log has them.
        XCTAssertTrue(
            page.text.contains("<p class=\"down\" id=\"database-down\">The queue's database cannot be read"), page.text)
        XCTAssertFalse(page.text.contains("Connection refused") || page.text.contains("socket"), page.text)
        try server.start()
        let back = try RawHTTP(port: port).request("GET", "/metrics")
        XCTAssertTrue(back.text.contains("\nvmerge_database_up 1\n"), back.text)
        XCTAssertTrue(back.text.contains("\nvmerge_jobs{state=\"queued\"} 2\n"), back.text)
        XCTAssertTrue(dashboard.isRunning)
        // One line when it went, one when it came back: not one per request.
        let log = dashboard.log.components(separatedBy: "\n")
        XCTAssertEqual(
            log.filter { $0.hasPrefix("vmerge: dashboard: warning: the database cannot be read: ") }.count, 1,
            dashboard.log)
        XCTAssertEqual(log.filter { $0 == "vmerge: dashboard: the database answers again" }.count, 1, dashboard.log)
    }

    /// A database that holds the read up (a lock here) is given up by the server before the
    /// deadline (3 s): the scrape answers, and the next one after the lock is gone reads again.
    func testASlowDatabaseIsGivenUpAfterTheDeadline() throws {
        try addJobs(["a"])
        let (dashboard, port) = try startDashboard()
        XCTAssertTrue(try RawHTTP(port: port).request("GET", "/metrics").text.contains("\nvmerge_database_up 1\n"))
        let locker = try PGConnection(database)
        try locker.execute("BEGIN")
        try locker.execute("LOCK TABLE vmerge.jobs IN ACCESS EXCLUSIVE MODE")
        Thread.sleep(forTimeInterval: 1.1)
        let started = Date()
        let held = try RawHTTP(port: port).request("GET", "/metrics")
        let waited = Date().timeIntervalSince(started)
        // The 3 s deadline (the statement timeout at 2.5 s ends it), with room for a loaded machine.
        XCTAssertTrue((2.4..<9).contains(waited), "answered after \(waited) s")
        XCTAssertEqual(held.status, 200)
        XCTAssertTrue(held.text.hasSuffix("\nvmerge_database_up 0\n"), held.text)
        let page = try RawHTTP(port: port).request("GET", "/").text
        XCTAssertTrue(page.contains("id=\"database-down\""), page)
        XCTAssertTrue(dashboard.log.contains("canceling statement due to statement timeout"), dashboard.log)
        try locker.execute("ROLLBACK")
        let back = try RawHTTP(port: port).request("GET", "/metrics")
        XCTAssertTrue(back.text.contains("\nvmerge_jobs{state=\"queued\"} 1\n"), back.text)
    }

    /// A database process that stops answering but keeps its connection up (stopped, not
    /// crashed: no timeout of the server's or of TCP ends the wait) is cut off at the deadline;
    /// the next request connects anew, and one line each says it went and came back.
    func testAStoppedServerProcessIsCutOffAtTheDeadline() throws {
        try addJobs(["a"])
        let (dashboard, port) = try startDashboard()
        XCTAssertTrue(try RawHTTP(port: port).request("GET", "/metrics").text.contains("\nvmerge_database_up 1\n"))
        // Every backend of the dashboard's: a loaded machine may have it hold a second
        // connection, which would answer for the stopped one.
        let found = try value(
            "SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE datname = current_database() "
                + "AND pid <> pg_backend_pid() AND application_name = 'vmerge'")
        let backends = try XCTUnwrap(found).split(separator: ",").compactMap { pid_t($0) }
        XCTAssertFalse(backends.isEmpty)
        for backend in backends { XCTAssertEqual(kill(backend, SIGSTOP), 0) }
        defer { for backend in backends { kill(backend, SIGCONT) } }
        Thread.sleep(forTimeInterval: 1.1)
        let started = Date()
        let stuck = try RawHTTP(port: port).request("GET", "/metrics")
        let waited = Date().timeIntervalSince(started)
        XCTAssertTrue((2.4..<9).contains(waited), "answered after \(waited) s")
        XCTAssertTrue(stuck.text.hasSuffix("\nvmerge_database_up 0\n"), stuck.text)
        // The stopped process still holds its connection; the next read has its own.
        let back = try RawHTTP(port: port).request("GET", "/metrics")
        XCTAssertTrue(back.text.contains("\nvmerge_jobs{state=\"queued\"} 1\n"), back.text)
        let log = dashboard.log.components(separatedBy: "\n")
        XCTAssertEqual(
            log.filter {
                $0 == "vmerge: dashboard: warning: the database cannot be read: no answer from the database within 3 s"
            }
            .count, 1, dashboard.log)
        XCTAssertEqual(log.filter { $0 == "vmerge: dashboard: the database answers again" }.count, 1, dashboard.log)
    }
}
