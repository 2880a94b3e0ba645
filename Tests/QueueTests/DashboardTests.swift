import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// `vmerge dashboard`'s reading side: its metrics, its page, the command itself. A database that
/// stops or stalls is in DashboardDatabaseOutageTests, what a client may ask in
/// DashboardRequestLimitTests.
final class DashboardTests: DashboardTestCase {
    // MARK: metrics

    /// Exact figures from a queue in every state, a hostile worker name escaped, and promtool's
    /// approval of the whole text.
    func testMetricsAreTheQueuesFiguresAndPassPromtool() throws {
        try addJobs(["a", "b", "c", "d", "e"])
        try sql("UPDATE vmerge.jobs SET state = 'done', finished_at = '2026-01-01T00:00:00Z' WHERE id = 1")
        try sql("UPDATE vmerge.jobs SET state = 'failed', finished_at = '2026-01-02T00:00:00Z' WHERE id = 2")
        // A name no vmerge worker would take (a newline), and a byte that is not UTF-8 (U+10FFFF).
        try sql(
            "UPDATE vmerge.jobs SET state = 'running', worker = $1, lease_until = '2026-01-03T00:00:30Z' WHERE id = 3",
            ["evil\"\\name\nx\u{10FFFF}"])
        try sql("UPDATE vmerge.jobs SET not_before = now() - interval '100 seconds' WHERE id = 4")
        try sql("UPDATE vmerge.jobs SET not_before = now() + interval '1 hour' WHERE id = 5")
        let (_, port) = try startDashboard()
        let response = try RawHTTP(port: port).request("GET", "/metrics")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertEqual(response.headers["cache-control"], "no-store")
        XCTAssertEqual(response.headers["x-content-type-options"], "nosniff")
        let lines = response.text.components(separatedBy: "\n")
        for expected in [
            "vmerge_database_up 1",
            #"vmerge_jobs{state="cancelled"} 0"#, #"vmerge_jobs{state="done"} 1"#, #"vmerge_jobs{state="failed"} 1"#,
            #"vmerge_jobs{state="queued"} 2"#, #"vmerge_jobs{state="running"} 1"#,
            #"vmerge_queue_last_finished_timestamp_seconds{state="done"} 1767225600"#,
            #"vmerge_queue_last_finished_timestamp_seconds{state="failed"} 1767312000"#,
            #"vmerge_worker_lease_expiry_timestamp_seconds{worker="evil\"\\name\nx\#u{FFFD}"} 1767398430"#,
            #"vmerge_worker_running_jobs{worker="evil\"\\name\nx\#u{FFFD}"} 1"#,
            "# TYPE vmerge_jobs gauge",
        ] {
            XCTAssertTrue(lines.contains(expected), "missing \(expected) in\n\(response.text)")
        }
        // Job 4 has waited 100 s (job 5 is not claimable yet and does not count).
        let age = try XCTUnwrap(
            lines.first { $0.hasPrefix("vmerge_queue_oldest_pending_age_seconds ") }.flatMap {
                Double($0.split(separator: " ")[1])
            })
        XCTAssertTrue((100..<160).contains(age), "\(age)")
        try assertPromtoolAccepts(response.text)
    }

    /// promtool reads the text as Prometheus does.
    func assertPromtoolAccepts(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let input = folder.appendingPathComponent("metrics.txt")
        try Data(text.utf8).write(to: input)
        let (status, said) = try runPromtool(["check", "metrics"], input: input)
        XCTAssertEqual(status, 0, "promtool: \(said)", file: file, line: line)
        XCTAssertEqual(said, "", file: file, line: line)
    }

    // MARK: the page

    /// A job named like markup shows as text; the page's only script is its own file (no inline
    /// script, which the policy would not run anyway).
    func testThePageShowsAHostileJobNameAsText() throws {
        try addJobs(["<img src=x onerror=alert(1)>", "Tom & \"Jerry's\""])
        // Error text comes from FFmpeg, the file system and the database: anything at all.
        try sql("UPDATE vmerge.jobs SET last_error = $1 WHERE id = 2", ["\u{1B}[31m<b>bad</b>\nnext"])
        let (_, port) = try startDashboard()
        let page = try RawHTTP(port: port).request("GET", "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")
        XCTAssertEqual(
            page.headers["content-security-policy"],
            "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
        XCTAssertEqual(page.headers["referrer-policy"], "same-origin")
        XCTAssertTrue(page.text.contains("<td class=\"name\">&lt;img src=x onerror=alert(1)&gt;</td>"), page.text)
        XCTAssertTrue(page.text.contains("<td class=\"name\">Tom &amp; &quot;Jerry&#39;s&quot;</td>"), page.text)
        XCTAssertTrue(page.text.contains(#"<td class="error">\x1B[31m&lt;b&gt;bad&lt;/b&gt;\nnext</td>"#), page.text)
        XCTAssertFalse(page.text.contains("<img"))
        XCTAssertEqual(page.text.lowercased().components(separatedBy: "<script").count, 2, page.text)
        XCTAssertTrue(page.text.contains("<script src=\"/app.js\" defer></script>"), page.text)
        XCTAssertTrue(page.text.contains(#"<td class="number" id="count-queued">2</td>"#), page.text)
        XCTAssertTrue(page.text.contains(#"<td class="number" id="count-done">0</td>"#), page.text)
        // What the page's script asks for: only <main>, the same escaping.
        let part = try RawHTTP(port: port).request("GET", "/", headers: ["X-VMerge-Part: main"])
        XCTAssertFalse(part.text.contains("<html") || part.text.contains("<main"), part.text)
        XCTAssertTrue(part.text.contains("<td class=\"name\">&lt;img src=x onerror=alert(1)&gt;</td>"), part.text)
        XCTAssertEqual(part.headers["vary"], "X-VMerge-Part")
    }

    // MARK: the command

    /// SIGTERM and SIGINT stop it cleanly with exit 0; a non-loopback address is warned of.
    func testSignalsStopItAndAnOpenAddressIsWarnedOf() throws {
        let (open, _) = try startDashboard(listen: "0.0.0.0:0")
        XCTAssertTrue(
            open.log.contains(
                "vmerge: dashboard: 0.0.0.0:0 can be reached from other machines, and nothing asks them for a token: "
                    + "anyone who can connect reads the queue's job names and errors\n"), open.log)
        open.kill(SIGTERM)
        XCTAssertEqual(open.waitForExit(seconds: 5), 0)
        XCTAssertTrue(open.log.hasSuffix("vmerge: dashboard: stopped (SIGTERM)\n"), open.log)
        let (local, port) = try startDashboard()
        XCTAssertFalse(local.log.contains("warning") || local.log.contains("reached from other machines"), local.log)
        local.kill(SIGINT)
        XCTAssertEqual(local.waitForExit(seconds: 5), 0)
        XCTAssertThrowsError(try RawHTTP(port: port).request("GET", "/metrics"))
    }

    /// Mistakes in the command are exit 2 with one line; an address it cannot listen on exit 1.
    func testRefusalsSayWhatIsWrong() throws {
        let (_, port) = try startDashboard()
        let inUse = vmerge(["dashboard", "--db", database, "--listen", "127.0.0.1:\(port)"])
        XCTAssertEqual(inUse.status, 1)
        XCTAssertEqual(inUse.stderr, "vmerge: 127.0.0.1:\(port): cannot listen: Address already in use\n")
        let usage =
            "Usage: vmerge dashboard [--db <url>] [--watch <path>]... [--listen <address:port>]... "
            + "[--token-file <file>] [--api-tokens <file>] [--allow-inputs <dir>]... [--allow-outputs <dir>]... "
            + "[--allow-remote <prefix>]... [options]   (see 'vmerge dashboard --help')\n"
        for (listen, reason) in [
            ("localhost:8080", "'localhost' is not a numeric IPv4 or IPv6 address"),
            ("127.0.0.1", "no port: write address:port"),
            ("127.0.0.1:65536", "the port must be a number from 0 to 65535"),
            ("::1:8080", "an IPv6 address is written [address]:port, e.g. [::1]:8080"),
            ("[::1]8080", "an IPv6 address is written [address]:port, e.g. [::1]:8080"),
            (":8080", "no address: write 127.0.0.1:8080 for this machine only"),
            ("unix:", "no path: write unix:/path/to/dashboard.sock"),
        ] {
            let refused = vmerge(["dashboard", "--db", database, "--listen", listen])
            XCTAssertEqual(refused.status, 2, listen)
            XCTAssertEqual(
                refused.stderr,
                "vmerge: invalid value '\(listen)' for '--listen': expected address:port or unix:PATH (\(reason))\n"
                    + usage)
        }
        let noDatabase = vmerge(["dashboard"])
        XCTAssertEqual(noDatabase.status, 2)
        XCTAssertEqual(
            noDatabase.stderr, "vmerge: dashboard: no database given: use '--db <url>' or set VMERGE_DB\n" + usage)
        let extra = vmerge(["dashboard", "--db", database, "status"])
        XCTAssertEqual(extra.status, 2)
        XCTAssertEqual(extra.stderr, "vmerge: dashboard: unexpected argument 'status'\n" + usage)
    }
}
