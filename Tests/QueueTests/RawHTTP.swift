import CMicroHTTPD
import Foundation

/// A test's HTTP client over a plain TCP socket: it sends exactly the bytes a test writes (a
/// path with `..` in it, half a header, a header too large), which URLSession would mend or
/// refuse. Responses are read until the server closes the connection (`Connection: close`).
struct RawHTTP {
    let port: UInt16
    /// The address the connections come from: any of 127.0.0.0/8 reaches 127.0.0.1 on Linux,
    /// so one test can be several clients.
    var source = "127.0.0.1"
    /// A Unix socket's path: when set, the connections go there instead of to 127.0.0.1:port.
    var unixSocket: String? = nil

    struct Response {
        let status: Int
        /// Header names in lower case.
        let headers: [String: String]
        let body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// `GET path` (or another method), closed after the response.
    func request(
        _ method: String = "GET", _ path: String, headers: [String] = [], body: String = "", host: String = "127.0.0.1"
    ) throws -> Response {
        let connection = try unixSocket.map { try Connection(unixSocket: $0) } ?? Connection(port: port, from: source)
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n"
        for header in headers { text += header + "\r\n" }
        if !body.isEmpty { text += "Content-Length: \(body.utf8.count)\r\n" }
        try connection.send(text + "\r\n" + body)
        return try RawHTTP.parse(connection.readToEnd(timeout: 10))
    }

    static func parse(_ data: Data) throws -> Response {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else {
            throw HTTPTestError("no header end in \(data.count) bytes")
        }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw HTTPTestError("bad status line \(head[0])")
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Data(data[end.upperBound...]))
    }

    /// One TCP connection to 127.0.0.1:port, closed in deinit.
    final class Connection {
        let fd: Int32

        init(port: UInt16, from source: String = "127.0.0.1") throws {
            // A server that closes first must not kill the test with SIGPIPE.
            signal(SIGPIPE, SIG_IGN)
            fd = vm_stream_socket(AF_INET)
            guard fd >= 0 else { throw HTTPTestError("socket: \(errno)") }
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(fd)
                throw HTTPTestError("bind to \(source): errno \(errno)")
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(fd)
                throw HTTPTestError("connect to port \(port): errno \(errno)")
            }
        }

        /// One connection to the Unix socket at `path`.
        init(unixSocket path: String) throws {
            signal(SIGPIPE, SIG_IGN)
            fd = vm_stream_socket(AF_UNIX)
            guard fd >= 0 else { throw HTTPTestError("socket: \(errno)") }
            guard vm_connect_unix(fd, path) == 0 else {
                let code = errno
                close(fd)
                throw HTTPTestError("connect to \(path): errno \(code)")
            }
        }

        deinit { close(fd) }

        func send(_ text: String) throws {
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { throw HTTPTestError("send: errno \(errno)") }
                sent += n
            }
        }

        /// Everything until the server closes; throws if it has not closed within `timeout`.
        func readToEnd(timeout: Double) throws -> Data {
            var data = Data()
            let deadline = Date().addingTimeInterval(timeout)
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw HTTPTestError("not closed within \(timeout) s (\(data.count) bytes read)") }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, Int32(left * 1000)) <= 0 { continue }
                let n = recv(fd, &buffer, buffer.count, 0)
                if n == 0 { return data }
                // A reset after a refusal ends the response as well as a close does.
                if n < 0 { return data }
                data.append(contentsOf: buffer[..<n])
            }
        }
    }
}

struct HTTPTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
