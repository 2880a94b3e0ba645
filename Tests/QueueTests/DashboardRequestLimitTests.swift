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
}
