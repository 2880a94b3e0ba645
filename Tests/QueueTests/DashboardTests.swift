import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// `vmerge dashboard`'s reading side: metrics, the page, what a client may ask, the command.
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
        XCTAssertTrue(page.text.contains("<p class=\"down\" id=\"database-down\">The queue's database cannot be read"), page.text)
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
        let found = try value(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
                + "AND application_name = 'vmerge'")
        let backend = try XCTUnwrap(found.flatMap { pid_t($0) })
        XCTAssertEqual(kill(backend, SIGSTOP), 0)
        defer { kill(backend, SIGCONT) }
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
            log.filter { $0 == "vmerge: dashboard: warning: the database cannot be read: no answer from the database within 3 s" }
                .count, 1, dashboard.log)
        XCTAssertEqual(log.filter { $0 == "vmerge: dashboard: the database answers again" }.count, 1, dashboard.log)
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

    // MARK: what a client may ask

    /// Paths are routes, never files (a NUL in the path does not cut it short); the reading
    /// routes take GET and HEAD only, and the server no method but those and POST; a declared
    /// body over the cap is refused; the built-in assets are served with their types.
    func testOnlyItsOwnPathsAndMethodsAreServed() throws {
        let (_, port) = try startDashboard()
        let http = RawHTTP(port: port)
        for path in [
            "/../../etc/passwd", "/%2e%2e/", "/%2e%2e/%2e%2e/etc/passwd", "/metrics/../../etc/passwd", "/nothing",
            "//metrics", "/metrics%00", "/metrics%00.png", "/%00", "/app.js%00x",
        ] {
            let response = try http.request("GET", path)
            XCTAssertEqual(response.status, 404, path)
            XCTAssertFalse(response.text.contains("root:"), path)
            XCTAssertEqual(response.headers["x-content-type-options"], "nosniff", path)
        }
        let get = try http.request("GET", "/metrics")
        let head = try http.request("HEAD", "/metrics")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body.count, 0)
        XCTAssertEqual(head.headers["content-type"], get.headers["content-type"])
        XCTAssertEqual(head.headers["content-length"], "\(get.body.count)")
        for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
            let refused = try http.request(
                method, "/metrics", headers: method == "POST" ? ["Content-Type: application/x-www-form-urlencoded"] : [],
                body: method == "POST" ? "retry=1" : "")
            XCTAssertEqual(refused.status, 405, method)
            XCTAssertEqual(refused.headers["allow"], method == "POST" ? "GET, HEAD" : "GET, HEAD, POST", method)
        }
        for (path, type) in [
            ("/app.js", "text/javascript; charset=utf-8"), ("/app.css", "text/css; charset=utf-8"),
            ("/favicon.ico", "image/svg+xml"),
        ] {
            let asset = try http.request("GET", path)
            XCTAssertEqual(asset.status, 200, path)
            XCTAssertEqual(asset.headers["content-type"], type, path)
        }
        let tooLarge = try http.request("GET", "/metrics", headers: ["Content-Length: 100000"])
        XCTAssertEqual(tooLarge.status, 413)
        let health = try http.request("GET", "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.text, "ok\n")
    }

    /// A client that never finishes its header holds nothing up, and is closed after the
    /// connection timeout (10 s); a header past the memory limit is refused, and the server goes on.
    func testSlowClientsAndHugeHeadersDoNotStopTheServer() throws {
        let (dashboard, port) = try startDashboard()
        let slow = try RawHTTP.Connection(port: port)
        try slow.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaa")
        let opened = Date()
        let meanwhile = try RawHTTP(port: port).request("GET", "/metrics")
        XCTAssertEqual(meanwhile.status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(opened), 5)
        let huge = try RawHTTP(port: port).request(
            "GET", "/metrics", headers: ["X-Huge: " + String(repeating: "a", count: 64 * 1024)])
        XCTAssertTrue([413, 431].contains(huge.status), "\(huge.status)")
        XCTAssertEqual(try RawHTTP(port: port).request("GET", "/metrics").status, 200)
        // The slow one is closed by the server: no response, just the end of the connection.
        let leftover = try slow.readToEnd(timeout: 20)
        let closedAfter = Date().timeIntervalSince(opened)
        XCTAssertTrue((8..<19).contains(closedAfter), "closed after \(closedAfter) s")
        XCTAssertEqual(leftover.count, 0, String(decoding: leftover, as: UTF8.self))
        XCTAssertTrue(dashboard.isRunning)
        XCTAssertEqual(try RawHTTP(port: port).request("GET", "/").status, 200)
    }

    /// Clients that hold connections open with half-sent headers, as many as four addresses may
    /// (32 each; libmicrohttpd has no deadline for a whole header, and one byte every few seconds
    /// keeps each alive) do not lock the others out: the server holds 1,024.
    func testSlowHeadersFromSeveralAddressesLeaveRoomForOthers() throws {
        let (dashboard, port) = try startDashboard()
        var slow: [RawHTTP.Connection] = []
        for address in 2...5 {
            for _ in 0..<32 {
                let connection = try RawHTTP.Connection(port: port, from: "127.0.0.\(address)")
                try connection.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
                slow.append(connection)
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        // Answered now, not when the slow ones time out (10 s after their last byte: a real one
        // would send another before then).
        let asked = Date()
        let other = try RawHTTP(port: port, source: "127.0.0.9").request("GET", "/healthz")
        XCTAssertEqual(other.status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(asked), 5)
        XCTAssertTrue(dashboard.isRunning)
        slow.removeAll()
    }

    /// Clients that keep their connections alive by sending a header a byte every 2 s (which
    /// libmicrohttpd's idle timeout never ends) hold them no longer than the 10 s a request is
    /// given: 32 of them from this machine's address, its whole share, are closed by then, and the
    /// server answers that address again.
    func testATricklingHeaderIsCutOffAtTheRequestDeadline() throws {
        let (dashboard, port) = try startDashboard()
        var slow: [RawHTTP.Connection] = []
        for _ in 0..<32 {
            let connection = try RawHTTP.Connection(port: port)
            try connection.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            slow.append(connection)
        }
        let opened = Date()
        var closedAt: [Double] = []
        while Date().timeIntervalSince(opened) < 20 && closedAt.count < slow.count {
            Thread.sleep(forTimeInterval: 2)
            closedAt = []
            for connection in slow {
                // A byte of a header line that never ends; a closed connection refuses it or reads EOF.
                var pollers = [pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)]
                if poll(&pollers, 1, 0) > 0 {
                    closedAt.append(Date().timeIntervalSince(opened))
                } else {
                    try? connection.send("X")
                }
            }
        }
        XCTAssertEqual(closedAt.count, 32, "still open after 20 s: \(32 - closedAt.count)")
        XCTAssertGreaterThanOrEqual(closedAt.min() ?? 0, 9, "closed before its deadline")
        XCTAssertEqual(try RawHTTP(port: port).request("GET", "/healthz").status, 200)
        XCTAssertTrue(dashboard.isRunning)
    }

    /// One address holding more connections than its share (32) is refused the rest; another
    /// address is served all the while.
    func testAFloodFromOneAddressLeavesRoomForOthers() throws {
        let (dashboard, port) = try startDashboard()
        var flood: [RawHTTP.Connection] = []
        for _ in 0..<40 { flood.append(try RawHTTP.Connection(port: port, from: "127.0.0.2")) }
        // The connections past the limit are closed at once, with no response; the others stay
        // open (well within the 10 s timeout).
        // Polled until the 8 have ended (a loaded machine accepts and closes them late), then
        // once more: no ninth follows.
        var ended: [Int] = []
        let limit = Date().addingTimeInterval(10)
        func endedNow() -> [Int] {
            var pollers = flood.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            _ = poll(&pollers, nfds_t(pollers.count), 0)
            return flood.indices.filter { pollers[$0].revents != 0 }
        }
        repeat {
            Thread.sleep(forTimeInterval: 0.1)
            ended = endedNow()
        } while ended.count < 8 && Date() < limit
        Thread.sleep(forTimeInterval: 0.5)
        ended = endedNow()
        XCTAssertEqual(ended.count, 8)
        for index in ended { XCTAssertEqual(try flood[index].readToEnd(timeout: 1).count, 0) }
        let other = try RawHTTP(port: port, source: "127.0.0.3").request("GET", "/metrics")
        XCTAssertEqual(other.status, 200)
        XCTAssertTrue(dashboard.isRunning)
        flood.removeAll()
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
            "Usage: vmerge dashboard [--db <url>] [--watch <path>]... [--listen <address:port>] [--token-file <file>]   "
            + "(see 'vmerge dashboard --help')\n"
        for (listen, reason) in [
            ("localhost:8080", "'localhost' is not a numeric IPv4 or IPv6 address"),
            ("127.0.0.1", "no port: write address:port"),
            ("127.0.0.1:65536", "the port must be a number from 0 to 65535"),
            ("::1:8080", "an IPv6 address is written [address]:port, e.g. [::1]:8080"),
            ("[::1]8080", "an IPv6 address is written [address]:port, e.g. [::1]:8080"),
            (":8080", "no address: write 127.0.0.1:8080 for this machine only"),
        ] {
            let refused = vmerge(["dashboard", "--db", database, "--listen", listen])
            XCTAssertEqual(refused.status, 2, listen)
            XCTAssertEqual(
                refused.stderr,
                "vmerge: invalid value '\(listen)' for '--listen': expected address:port (\(reason))\n" + usage)
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

/// promtool (Debian's prometheus, which make test installs) with `arguments`, `input` on its
/// stdin; its exit status and output. Skips the test when it is missing, but fails it under CI.
func runPromtool(_ arguments: [String], input: URL? = nil, in folder: URL? = nil) throws -> (Int32, String) {
    let candidates =
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/promtool" }
        + ["/usr/bin/promtool"]
    guard let promtool = candidates.first(where: FileManager.default.isExecutableFile) else {
        // Under CI (where make test installed it) a missing promtool fails: a skip there would
        // hide that no metrics text was checked.
        let environment = ProcessInfo.processInfo.environment
        if environment["CI"]?.isEmpty == false || environment["VMERGE_REQUIRE_TOOLS"] == "1" {
            throw HTTPTestError("promtool is not installed, and CI needs it (Debian: prometheus)")
        }
        throw XCTSkip("promtool is not installed (Debian: prometheus; make test installs it)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: promtool)
    process.arguments = arguments
    process.currentDirectoryURL = folder
    process.standardInput = try input.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, said)
}

/// The README's alert rule is valid, and fires when it says it does: pending for 30 minutes with
/// nothing finished (or nothing ever finished), not while jobs keep finishing nor while the queue
/// is paused.
final class DashboardReadmeTests: XCTestCase {
    func testTheAlertRuleIsValidAndFiresWhenItSays() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try XCTUnwrap(text.components(separatedBy: "\n### Dashboard and metrics\n").dropFirst().first)
        let rules = try XCTUnwrap(
            section.components(separatedBy: "```yaml\n").dropFirst().first?.components(separatedBy: "```")[0])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(rules.utf8).write(to: folder.appendingPathComponent("rules.yml"))
        let checked = try runPromtool(["check", "rules", "rules.yml"], in: folder)
        XCTAssertEqual(checked.0, 0, checked.1)
        XCTAssertTrue(checked.1.contains("SUCCESS: 2 rules found"), checked.1)
        let stalled = "summary: \"vmerge: jobs have waited 30 minutes and none finished in that time\""
        let cases = """
            rule_files: [rules.yml]
            evaluation_interval: 1m
            tests:
              - interval: 1m
                input_series:
                  - series: vmerge_queue_oldest_pending_age_seconds
                    values: 2000x60
                  - series: 'vmerge_queue_last_finished_timestamp_seconds{state="done"}'
                    values: 0x60
                alert_rule_test:
                  - eval_time: 20m
                    alertname: VMergeQueueStalled
                  - eval_time: 40m
                    alertname: VMergeQueueStalled
                    exp_alerts:
                      - exp_annotations: {\(stalled)}
              - interval: 1m
                input_series:
                  - series: vmerge_queue_oldest_pending_age_seconds
                    values: 2000x60
                  - series: 'vmerge_queue_last_finished_timestamp_seconds{state="done"}'
                    values: 0+60x60
                alert_rule_test:
                  - eval_time: 50m
                    alertname: VMergeQueueStalled
              - interval: 1m
                input_series:
                  - series: vmerge_queue_oldest_pending_age_seconds
                    values: 2000x60
                alert_rule_test:
                  - eval_time: 10m
                    alertname: VMergeQueueStalled
                    exp_alerts:
                      - exp_annotations: {\(stalled)}
                  - eval_time: 10m
                    alertname: VMergeDatabaseDown
              - interval: 1m
                input_series:
                  - series: vmerge_queue_oldest_pending_age_seconds
                    values: 2000x60
                  - series: vmerge_queue_paused
                    values: 1x60
                alert_rule_test:
                  - eval_time: 40m
                    alertname: VMergeQueueStalled
            """
        try Data(cases.utf8).write(to: folder.appendingPathComponent("cases.yml"))
        let tested = try runPromtool(["test", "rules", "cases.yml"], in: folder)
        XCTAssertEqual(tested.0, 0, tested.1)
    }
}
