import CMicroHTTPD
import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// What a client may ask of the dashboard: its own paths and methods only, and no client (slow,
/// trickling, flooding or with a huge header) stops the server or locks the others out.
final class DashboardRequestLimitTests: DashboardTestCase {
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
                method, "/metrics",
                headers: method == "POST" ? ["Content-Type: application/x-www-form-urlencoded"] : [],
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

    /// Starts the dashboard on a Unix socket and on 127.0.0.1 (a free port); the socket's path
    /// and the port.
    private func startOnSocketAndLoopback() throws -> (socket: String, port: UInt16) {
        let socket = folder.appendingPathComponent("d.sock").path
        // The socket first: once the port's line is logged, both serve.
        let (_, port) = try startDashboard(
            arguments: ["dashboard", "--db", database, "--listen", "unix:\(socket)", "--listen", "127.0.0.1:0"])
        return (socket, port)
    }

    /// Clients that hold connections open with half-sent headers from four loopback addresses
    /// (libmicrohttpd has no deadline for a whole header, and one byte every few seconds keeps
    /// each alive) spend loopback's one budget of 32, not four: the 33rd, from any 127.x, is
    /// closed at once; a client of the Unix socket, a door of its own, is served meanwhile.
    func testSlowHeadersFromSeveralAddressesLeaveRoomForOthers() throws {
        let (socket, port) = try startOnSocketAndLoopback()
        var slow: [RawHTTP.Connection] = []
        for address in 2...5 {
            for _ in 0..<8 {
                let connection = try RawHTTP.Connection(port: port, from: "127.0.0.\(address)")
                try connection.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
                slow.append(connection)
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        // Answered now, not when the slow ones time out (10 s after their last byte: a real one
        // would send another before then).
        let asked = Date()
        let other = try RawHTTP(port: 0, unixSocket: socket).request("GET", "/healthz")
        XCTAssertEqual(other.status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(asked), 5)
        for source in ["127.0.0.1", "127.0.0.9", "127.1.2.3"] {
            let refused = try RawHTTP.Connection(port: port, from: source)
            XCTAssertEqual(try refused.readToEnd(timeout: 5).count, 0, "\(source) had a budget of its own")
        }
        slow.removeAll()
    }

    /// All loopback addresses are one client: 32 connections spread one each over 127.0.0.2 to
    /// 127.0.0.33 spend the budget, and further ones from other 127.x addresses are closed at
    /// once without an answer; closing some gives room back.
    func testLoopbackAddressesShareOneBudget() throws {
        let (_, port) = try startDashboard()
        var held = try (2...33).map { try RawHTTP.Connection(port: port, from: "127.0.0.\($0)") }
        Thread.sleep(forTimeInterval: 0.3)
        for source in ["127.0.0.40", "127.0.0.41", "127.9.9.9"] {
            let refused = try RawHTTP.Connection(port: port, from: source)
            XCTAssertEqual(try refused.readToEnd(timeout: 5).count, 0, "\(source) was not counted with the others")
        }
        held.removeLast(4)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try RawHTTP(port: port, source: "127.0.0.50").request("GET", "/healthz").status, 200)
        held.removeAll()
    }

    /// --connections-per-client sets the budget (behind a reverse proxy every caller is the proxy).
    func testTheBudgetIsTheOperatorsToSet() throws {
        let (_, port) = try startDashboard(
            arguments: ["dashboard", "--db", database, "--listen", "127.0.0.1:0", "--connections-per-client", "4"])
        var held = try (2...5).map { try RawHTTP.Connection(port: port, from: "127.0.0.\($0)") }
        Thread.sleep(forTimeInterval: 0.3)
        let refused = try RawHTTP.Connection(port: port, from: "127.0.0.6")
        XCTAssertEqual(try refused.readToEnd(timeout: 5).count, 0, "a fifth connection was let in")
        held.removeAll()
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try RawHTTP(port: port, source: "127.0.0.7").request("GET", "/healthz").status, 200)
        let zero = vmerge(["dashboard", "--db", database, "--connections-per-client", "0"])
        XCTAssertEqual(zero.status, 2, zero.stderr)
    }

    /// `--listen unix:PATH`: the page over the socket (made 0600), removed when the dashboard
    /// stops; a file already at the path is never replaced (the dashboard refuses to start).
    func testADashboardServesOnAUnixSocket() throws {
        let socket = folder.appendingPathComponent("d.sock").path
        let (dashboard, _) = try startDashboard(
            arguments: ["dashboard", "--db", database, "--listen", "unix:\(socket)", "--listen", "127.0.0.1:0"])
        let page = try RawHTTP(port: 0, unixSocket: socket).request("GET", "/", host: "localhost")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("<table id=\"counts\">"), page.text)
        XCTAssertTrue(dashboard.log.contains("serving http://localhost/ (curl --unix-socket \(socket))"), dashboard.log)
        var info = stat()
        XCTAssertEqual(lstat(socket, &info), 0)
        XCTAssertEqual(info.st_mode & 0o7777, 0o600)
        // A live socket is another server's: not taken over, and left to it.
        let second = vmerge(["dashboard", "--db", database, "--listen", "unix:\(socket)"])
        XCTAssertEqual(second.status, 1)
        XCTAssertEqual(second.stderr, "vmerge: \(socket): another server listens on this socket\n")
        XCTAssertEqual(try RawHTTP(port: 0, unixSocket: socket).request("GET", "/healthz").status, 200)
        dashboard.kill(SIGTERM)
        XCTAssertNotNil(dashboard.waitForExit(seconds: 10))
        XCTAssertNotEqual(lstat(socket, &info), 0, "the socket is left after the dashboard stopped")

        // A socket a dashboard that died left (bound, never removed) is replaced.
        let dead = vm_stream_socket(AF_UNIX)
        XCTAssertEqual(vm_bind_unix(dead, socket), 0)
        close(dead)
        let (again, _) = try startDashboard(
            arguments: ["dashboard", "--db", database, "--listen", "unix:\(socket)", "--listen", "127.0.0.1:0"])
        XCTAssertEqual(try RawHTTP(port: 0, unixSocket: socket).request("GET", "/healthz").status, 200)
        again.kill(SIGTERM)
        XCTAssertNotNil(again.waitForExit(seconds: 10))

        let file = folder.appendingPathComponent("taken").path
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: file))
        let refused = vmerge(["dashboard", "--db", database, "--listen", "unix:\(file)"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "vmerge: \(file): exists and is not a socket; not replaced\n")
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "keep me\n")
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

    /// One client holding more connections than its share (32) is refused the rest; a client of
    /// the Unix socket is served all the while.
    func testAFloodFromOneAddressLeavesRoomForOthers() throws {
        let (socket, port) = try startOnSocketAndLoopback()
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
        let other = try RawHTTP(port: 0, unixSocket: socket).request("GET", "/metrics")
        XCTAssertEqual(other.status, 200)
        flood.removeAll()
    }
}
