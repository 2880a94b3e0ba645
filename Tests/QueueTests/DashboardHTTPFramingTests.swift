import Foundation
import VMergeCore
import XCTest

/// How the dashboard reads where a request's body ends (RFC 9112, 6.3): a request whose framing
/// two readers could take differently (two lengths, a length beside chunked) is refused with 400
/// and its connection closed, so no second request can hide in its body; a chunked body past
/// the cap is answered 413, as a declared one is.
final class DashboardHTTPFramingTests: DashboardTestCase {
    /// Sends `raw` on one connection (no `Connection: close` of its own) and reads until the
    /// server closes it: what came back, or a failure when it is still open after 5 s.
    private func exchange(_ raw: String, port: UInt16) throws -> String {
        let connection = try RawHTTP.Connection(port: port)
        try connection.send(raw)
        return String(decoding: try connection.readToEnd(timeout: 5), as: UTF8.self)
    }

    private let head = "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    /// A request a smuggler hides after the first one's body.
    private let smuggled = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    /// Two Content-Length values that differ (two fields, or a list in one) are a 400 and the
    /// end of the connection, whichever comes first; the request behind is never answered.
    func testConflictingContentLengthsAreRefusedAndClosed() throws {
        let (_, port) = try startDashboard()
        for lengths in [
            "Content-Length: 7\r\nContent-Length: 70\r\n", "Content-Length: 70\r\nContent-Length: 7\r\n",
            "Content-Length: 7, 70\r\n",
        ] {
            let answer = try exchange(head + lengths + "\r\ntoken=x" + smuggled, port: port)
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), "\(lengths.debugDescription): \(answer)")
            XCTAssertFalse(answer.contains("HTTP/1.1 200 "), "the smuggled request was answered: \(answer)")
        }
        // The same length twice is one length.
        let same = try exchange(
            "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            port: port)
        XCTAssertTrue(same.hasPrefix("HTTP/1.1 200 "), same)
    }

    /// Content-Length beside Transfer-Encoding: chunked is a 400 and the connection is closed
    /// after it: a proxy in front that took the length would otherwise see the smuggled request
    /// as this one's body.
    func testALengthBesideChunkedIsRefusedAndClosed() throws {
        let (_, port) = try startDashboard()
        let answer = try exchange(
            head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, port: port)
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
        XCTAssertFalse(answer.contains("HTTP/1.1 200 "), "the smuggled request was answered: \(answer)")
    }

    /// A chunked body past the 4 KiB cap gets a 413, as a declared length past it does; one
    /// within the cap is read.
    func testAChunkedBodyPastTheCapIsRefusedWith413() throws {
        let (_, port) = try startDashboard()
        let chunk = "a=" + String(repeating: "b", count: 998)
        let chunks = (0..<6).map { _ in String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n" }.joined()
        let answer = try exchange(head + "Transfer-Encoding: chunked\r\n\r\n" + chunks + "0\r\n\r\n", port: port)
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 413 "), answer)
        let small = try exchange(
            head + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n7\r\ntoken=x\r\n0\r\n\r\n", port: port)
        XCTAssertFalse(small.hasPrefix("HTTP/1.1 413 "), small)
        XCTAssertTrue(small.hasPrefix("HTTP/1.1 "), small)
    }
}
