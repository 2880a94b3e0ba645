import VMergeCore
import XCTest

@testable import VMergeWeb

final class MetricsTextTests: XCTestCase {
    /// Families in name order, samples in label order, labels in name order, whatever the order
    /// they were added in: the same scrape gives the same bytes.
    func testTheTextIsSortedAndExact() {
        var jobs = MetricFamily("vmerge_jobs", kind: .gauge, help: "Jobs in the queue, by state.")
        jobs.add(2, labels: ["state": "queued"])
        jobs.add(0, labels: ["state": "cancelled"])
        var finished = MetricFamily("vmerge_jobs_finished_total", kind: .counter, help: "Jobs finished.")
        finished.add(7, labels: ["worker": "w1", "reason": "ok"])
        var up = MetricFamily("vmerge_database_up", kind: .gauge, help: "1 if up.")
        up.add(1)
        var metrics = MetricsText()
        metrics.append(jobs)
        metrics.append(finished)
        metrics.append(up)
        XCTAssertEqual(
            metrics.text,
            """
            # HELP vmerge_database_up 1 if up.
            # TYPE vmerge_database_up gauge
            vmerge_database_up 1
            # HELP vmerge_jobs Jobs in the queue, by state.
            # TYPE vmerge_jobs gauge
            vmerge_jobs{state="cancelled"} 0
            vmerge_jobs{state="queued"} 2
            # HELP vmerge_jobs_finished_total Jobs finished.
            # TYPE vmerge_jobs_finished_total counter
            vmerge_jobs_finished_total{reason="ok",worker="w1"} 7

            """)
        XCTAssertEqual(MetricsText.contentType, "text/plain; version=0.0.4; charset=utf-8")
    }

    /// Buckets cumulative, in order of their bound, +Inf last and equal to the count; then sum
    /// and count.
    func testAHistogram() {
        var speed = MetricFamily("vmerge_encode_speed_ratio", kind: .histogram, help: "Encode speed (x realtime).")
        speed.addHistogram(buckets: [(4, 3), (1, 1), (2, 2)], sum: 7.5, count: 4, labels: ["worker": "a"])
        XCTAssertEqual(
            speed.text,
            """
            # HELP vmerge_encode_speed_ratio Encode speed (x realtime).
            # TYPE vmerge_encode_speed_ratio histogram
            vmerge_encode_speed_ratio_bucket{le="1",worker="a"} 1
            vmerge_encode_speed_ratio_bucket{le="2",worker="a"} 2
            vmerge_encode_speed_ratio_bucket{le="4",worker="a"} 3
            vmerge_encode_speed_ratio_bucket{le="+Inf",worker="a"} 4
            vmerge_encode_speed_ratio_sum{worker="a"} 7.5
            vmerge_encode_speed_ratio_count{worker="a"} 4

            """)
    }

    /// Backslash, double quote and line feed escaped as the format says; a byte that is not
    /// UTF-8 (FileName's U+10FF80-U+10FFFF) shown as U+FFFD; other text, tabs included, as it is.
    func testHostileLabelValuesAreEscaped() {
        XCTAssertEqual(
            MetricFamily.escapedLabelValue(#"a\b"c"# + "\nd\u{10FFFF}\u{10FF80}é\t"),
            #"a\\b\"c\nd"# + "\u{FFFD}\u{FFFD}é\t")
        XCTAssertEqual(MetricFamily.escapedLabelValue(#"\n"#), #"\\n"#)
        var workers = MetricFamily("vmerge_worker_running_jobs", kind: .gauge, help: "Jobs.\nA back\\slash.")
        workers.add(1, labels: ["worker": "x\"} 99\nvmerge_fake 1"])
        XCTAssertEqual(
            workers.text,
            """
            # HELP vmerge_worker_running_jobs Jobs.\\nA back\\\\slash.
            # TYPE vmerge_worker_running_jobs gauge
            vmerge_worker_running_jobs{worker="x\\"} 99\\nvmerge_fake 1"} 1

            """)
    }

    func testNumbers() {
        XCTAssertEqual(MetricFamily.number(2), "2")
        XCTAssertEqual(MetricFamily.number(-3), "-3")
        XCTAssertEqual(MetricFamily.number(0.5), "0.5")
        XCTAssertEqual(MetricFamily.number(1_767_225_600.25), "1767225600.25")
        XCTAssertEqual(MetricFamily.number(.infinity), "+Inf")
        XCTAssertEqual(MetricFamily.number(-.infinity), "-Inf")
        XCTAssertEqual(MetricFamily.number(.nan), "NaN")
        XCTAssertEqual(MetricFamily.number(1e20), "1e+20")
    }

    func testNames() {
        for good in ["vmerge_jobs", "a:b_c", "_x", "X9"] { XCTAssertTrue(MetricFamily.isMetricName(good), good) }
        for bad in ["", "9x", "vmerge-jobs", "vmérge", "a b"] { XCTAssertFalse(MetricFamily.isMetricName(bad), bad) }
        for good in ["state", "_x", "le"] { XCTAssertTrue(MetricFamily.isLabelName(good), good) }
        for bad in ["", "__name__", "a:b", "9", "é"] { XCTAssertFalse(MetricFamily.isLabelName(bad), bad) }
    }
}

final class ListenAddressTests: XCTestCase {
    func testForms() throws {
        let v4 = try ListenAddress.parse("127.0.0.1:8080")
        XCTAssertEqual([v4.host, "\(v4.port)", v4.description], ["127.0.0.1", "8080", "127.0.0.1:8080"])
        XCTAssertEqual(v4.family, .ipv4)
        let v6 = try ListenAddress.parse("[::1]:8080")
        XCTAssertEqual([v6.host, "\(v6.port)", v6.description], ["::1", "8080", "[::1]:8080"])
        XCTAssertEqual(v6.family, .ipv6)
        XCTAssertEqual(try ListenAddress.parse("0.0.0.0:9000").port, 9000)
        XCTAssertEqual(try ListenAddress.parse("127.0.0.1:0").port, 0)
    }

    func testRefusals() {
        for (text, reason) in [
            ("localhost:8080", "'localhost' is not a numeric IPv4 or IPv6 address"),
            ("127.0.0.1", "no port: write address:port"),
            ("127.0.0.1:", "the port must be a number from 0 to 65535"),
            ("127.0.0.1:+80", "the port must be a number from 0 to 65535"),
            ("127.0.0.1:٨٠", "the port must be a number from 0 to 65535"),
            ("127.0.0.1:65536", "the port must be a number from 0 to 65535"),
            ("::1:8080", "an IPv6 address is written [address]:port, e.g. [::1]:8080"),
            ("[::1]", "an IPv6 address is written [address]:port, e.g. [::1]:8080"),
            ("[::1:8080", "an IPv6 address is written [address]:port, e.g. [::1]:8080"),
            ("[127.0.0.1]:80", "brackets hold an IPv6 address; write 127.0.0.1:80"),
            (":8080", "no address: write 127.0.0.1:8080 for this machine only"),
            ("256.0.0.1:80", "'256.0.0.1' is not a numeric IPv4 or IPv6 address"),
        ] {
            XCTAssertThrowsError(try ListenAddress.parse(text), text) { error in
                XCTAssertEqual((error as? ListenAddress.Refusal)?.reason, reason, text)
            }
        }
    }

    /// unix:PATH where the command allows it (the dashboard's --listen): a Unix socket, local,
    /// not loopback (no Host check: no browser reaches a socket by a name).
    func testUnixSockets() throws {
        let socket = try ListenAddress.parse("unix:/run/vmerge/d.sock", unixSockets: true)
        XCTAssertEqual([socket.host, socket.description], ["/run/vmerge/d.sock", "unix:/run/vmerge/d.sock"])
        XCTAssertEqual(socket.family, .unix)
        XCTAssertTrue(socket.isLocal)
        XCTAssertFalse(socket.isLoopback)
        XCTAssertNil(Dispatcher.hosts(answering: socket))
        XCTAssertThrowsError(try ListenAddress.parse("unix:/x.sock"))
        for (text, reason) in [
            ("unix:", "no path: write unix:/path/to/dashboard.sock"),
            ("unix:/" + String(repeating: "a", count: 200), "a Unix socket's path is at most 107 bytes"),
        ] {
            XCTAssertThrowsError(try ListenAddress.parse(text, unixSockets: true), text) { error in
                XCTAssertEqual((error as? ListenAddress.Refusal)?.reason, reason, text)
            }
        }
    }

    /// Whose connection budget a client spends: every loopback address (IPv4, ::1, IPv4 mapped
    /// into IPv6) is one client; an IPv4 address is the same client mapped or not; a Unix
    /// socket's clients are one of their own.
    func testLoopbackClientsShareOneBudget() {
        let v6 = { (tail: [UInt8]) in [UInt8](repeating: 0, count: 16 - tail.count) + tail }
        for (family, bytes) in [
            (AF_INET, [127, 0, 0, 1]), (AF_INET, [127, 0, 0, 2]), (AF_INET, [127, 255, 1, 9]), (AF_INET6, v6([1])),
            (AF_INET6, v6([0xFF, 0xFF, 127, 0, 0, 2])),
        ] as [(Int32, [UInt8])] {
            XCTAssertEqual(ConnectionBudget.client(family: family, bytes: bytes), .loopback, "\(bytes)")
        }
        XCTAssertEqual(
            ConnectionBudget.client(family: AF_INET6, bytes: v6([0xFF, 0xFF, 10, 0, 0, 1])),
            ConnectionBudget.client(family: AF_INET, bytes: [10, 0, 0, 1]))
        XCTAssertNotEqual(
            ConnectionBudget.client(family: AF_INET, bytes: [10, 0, 0, 1]),
            ConnectionBudget.client(family: AF_INET, bytes: [10, 0, 0, 2]))
        XCTAssertEqual(ConnectionBudget.client(family: AF_UNIX, bytes: []), .unixSocket)
        XCTAssertNotEqual(ConnectionBudget.client(family: AF_INET6, bytes: v6([2])), .loopback)

        let budget = ConnectionBudget(perClient: 2)
        let connections = (1...3).map { OpaquePointer(bitPattern: $0 * 16)! }
        budget.started(connections[0], client: .loopback)
        XCTAssertTrue(budget.admits(.loopback))
        budget.started(connections[1], client: .loopback)
        XCTAssertFalse(budget.admits(.loopback))
        XCTAssertTrue(budget.admits(.unixSocket))
        budget.closed(connections[0])
        budget.closed(connections[2])  // never started: nothing to give back
        XCTAssertTrue(budget.admits(.loopback))
    }

    /// A burst accepted before any "started" notice (another thread, a loaded machine) is held to
    /// the cap: each admission reserves its place. A reservation that never starts lapses.
    func testABurstBeforeAnyStartIsHeldToTheCap() {
        let budget = ConnectionBudget(perClient: 3)
        let admitted = (0..<10).filter { _ in budget.admits(.address([10, 0, 0, 9])) }
        XCTAssertEqual(admitted.count, 3)
        XCTAssertTrue(budget.admits(.loopback), "another client's budget is its own")
        budget.started(OpaquePointer(bitPattern: 16)!, client: .address([10, 0, 0, 9]))
        XCTAssertFalse(budget.admits(.address([10, 0, 0, 9])), "the started one took its reservation's place")
        Thread.sleep(forTimeInterval: ConnectionBudget.reservationLapse + 0.1)
        XCTAssertEqual((0..<10).filter { _ in budget.admits(.address([10, 0, 0, 9])) }.count, 2)
    }

    /// What the dashboard warns of: anything but loopback.
    func testLoopback() throws {
        for text in ["127.0.0.1:1", "127.9.9.9:1", "[::1]:1", "[::ffff:127.0.0.1]:1"] {
            XCTAssertTrue(try ListenAddress.parse(text).isLoopback, text)
        }
        for text in ["0.0.0.0:1", "10.0.0.1:1", "[::]:1", "[fe80::1]:1", "[::ffff:10.0.0.1]:1", "128.0.0.1:1"] {
            XCTAssertFalse(try ListenAddress.parse(text).isLoopback, text)
        }
    }
}

/// Which framing is refused before any route (RFC 9112, 6.3), from the headers alone.
final class HTTPFramingRuleTests: XCTestCase {
    private func refusal(_ headers: [(String, String)]) -> Int? {
        Dispatcher.framingRefusal(headers.map { (name: $0.0, value: $0.1) })?.status
    }

    func testLengthsThatDifferAndALengthBesideTransferEncodingAreRefusedAndClose() throws {
        for headers in [
            [("Content-Length", "5"), ("content-length", "6")], [("Content-Length", "5, 6")],
            [("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
            [("transfer-encoding", "gzip, chunked"), ("CONTENT-LENGTH", "0")],
        ] {
            XCTAssertEqual(refusal(headers), 400, "\(headers)")
            let response = try XCTUnwrap(Dispatcher.framingRefusal(headers.map { (name: $0.0, value: $0.1) }))
            XCTAssertTrue(response.headers.contains { $0.name == "Connection" && $0.value == "close" })
        }
        for headers in [
            [], [("Content-Length", "5")], [("Content-Length", "5"), ("Content-Length", "5")], [("Content-Length", "5, 5")],
            [("Transfer-Encoding", "chunked")], [("Host", "x")],
        ] {
            XCTAssertNil(refusal(headers), "\(headers)")
        }
    }
}

final class HTMLTextTests: XCTestCase {
    func testMarkupAndControlsAreText() {
        XCTAssertEqual(HTMLText.escaped("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;")
        XCTAssertEqual(HTMLText.escaped(#"a&b "c" 'd'"#), "a&amp;b &quot;c&quot; &#39;d&#39;")
        // Made visible as in a log line first: the escape's backslash is plain text in HTML.
        XCTAssertEqual(HTMLText.escaped("x\ny\u{1B}z\u{10FFFF}"), #"x\ny\x1Bz\xFF"#)
        XCTAssertEqual(HTMLText.escaped("été ☃"), "été ☃")
    }
}
