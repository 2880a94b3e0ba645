import CMicroHTTPD
import Foundation
import VMergeCore

/// Owns a libmicrohttpd daemon: an HTTP server on its own thread pool, answering through an
/// `HTTPHandler`, stopped (MHD_stop_daemon, which also closes the listening socket) by `stop()`
/// or in deinit.
///
/// The limits keep one client from stopping the server: a connection that sends nothing for
/// `timeout` is closed; headers beyond `memoryPerConnection` are answered 431 (or 413 before
/// libmicrohttpd 1.0) by libmicrohttpd itself; at most `connections` at once, `perAddress` from
/// one address (which leaves a flood from one address room for others to be served); only GET and HEAD (405 otherwise), and a body over `bodyBytes` is refused.
package final class HTTPServer {
    package struct Limits: Sendable {
        package var connections: UInt32 = 128
        package var perAddress: UInt32 = 32
        package var timeoutSeconds: UInt32 = 10
        package var memoryPerConnection = 32 * 1024
        package var threads: UInt32 = 8
        package var bodyBytes = 4096

        package init() {}
    }

    /// Where it listens (with the port the system gave, when asked for port 0).
    package let address: ListenAddress
    private var daemon: OpaquePointer?
    private let dispatcher: Dispatcher
    private let binding: UnsafeMutablePointer<vm_mhd_binding>

    package init(listening requested: ListenAddress, limits: Limits = Limits(), handler: any HTTPHandler) throws {
        let (fd, bound) = try ListeningSocket.open(requested)
        address = bound
        dispatcher = Dispatcher(handler: handler, bodyBytes: limits.bodyBytes)
        binding = .allocate(capacity: 1)
        binding.initialize(
            to: vm_mhd_binding(handler: accessHandler, context: Unmanaged.passUnretained(dispatcher).toOpaque()))
        let settings = vm_mhd_limits(
            connections: limits.connections, connections_per_ip: limits.perAddress,
            timeout_seconds: limits.timeoutSeconds, memory_per_connection: limits.memoryPerConnection,
            threads: limits.threads)
        guard let started = vm_mhd_start(fd, binding, settings) else {
            close(fd)
            // Not deallocated here: every stored property is set, so deinit runs after the throw
            // and frees the binding (freeing it here too was a double free).
            throw VMergeError.io(file: bound.description, message: "libmicrohttpd could not start a server there")
        }
        daemon = started
    }

    /// Stops serving: open connections are closed, and no handler runs after it returns.
    package func stop() {
        guard let daemon else { return }
        MHD_stop_daemon(daemon)
        self.daemon = nil
    }

    deinit {
        stop()
        binding.deallocate()
    }
}

/// What libmicrohttpd calls for each step of a request; `context` is the server's `Dispatcher`.
/// The request's own context (`request`) counts the body bytes received, plus one, in the
/// pointer's bits: nothing is allocated per request, so nothing is left to free if a client goes.
private let accessHandler: vm_mhd_handler = { context, connection, url, method, upload, uploadSize, request in
    guard let context, let connection, let url, let method, let uploadSize, let request else { return 0 }
    let dispatcher = Unmanaged<Dispatcher>.fromOpaque(context).takeUnretainedValue()
    let methodName = String(cString: method)
    guard let received = request.pointee.map({ Int(bitPattern: $0) - 1 }) else {
        // The headers are in: refuse what no body can mend before reading one.
        request.pointee = UnsafeMutableRawPointer(bitPattern: 1)
        if let refusal = dispatcher.refusal(method: methodName, connection: connection) {
            return Dispatcher.send(refusal, on: connection) ? 1 : 0
        }
        return 1
    }
    if uploadSize.pointee > 0 {
        let total = received + uploadSize.pointee
        uploadSize.pointee = 0
        // A body without a length (chunked) past the cap: the connection is closed.
        if total > dispatcher.bodyBytes { return 0 }
        request.pointee = UnsafeMutableRawPointer(bitPattern: total + 1)
        return 1
    }
    let parsed = HTTPRequest(
        method: methodName, path: String(cString: url), query: Dispatcher.values(of: connection, headers: false),
        headers: Dictionary(
            Dispatcher.values(of: connection, headers: true).map { ($0.name.lowercased(), $0.value) },
            uniquingKeysWith: { first, _ in first }))
    return Dispatcher.send(dispatcher.handler.respond(to: parsed), on: connection) ? 1 : 0
}

/// The server's side of each request: the refusals every route shares, and sending a response.
final class Dispatcher: Sendable {
    let handler: any HTTPHandler
    let bodyBytes: Int

    init(handler: any HTTPHandler, bodyBytes: Int) {
        self.handler = handler
        self.bodyBytes = bodyBytes
    }

    /// 405 for a method other than GET and HEAD; 413 for a declared body over the cap.
    func refusal(method: String, connection: OpaquePointer) -> HTTPResponse? {
        guard method == "GET" || method == "HEAD" else {
            var response = HTTPResponse.text(405, "method not allowed: this server answers GET and HEAD\n")
            response.headers.append(("Allow", "GET, HEAD"))
            return response
        }
        let length = vm_mhd_header(connection, "Content-Length").map { String(cString: $0) }
        if let length, Int(length).map({ $0 > bodyBytes }) ?? true {
            return .text(413, "request body too large\n")
        }
        return nil
    }

    /// Queues `response` with the security headers; false if libmicrohttpd refused it.
    static func send(_ response: HTTPResponse, on connection: OpaquePointer) -> Bool {
        let made = response.body.withUnsafeBytes { vm_mhd_response_copy($0.count, $0.baseAddress) }
        guard let made else { return false }
        defer { MHD_destroy_response(made) }
        for (name, value) in response.headers + HTTPResponse.securityHeaders {
            // A value with a line break is refused by libmicrohttpd, never sent.
            _ = vm_mhd_add_header(made, name, value)
        }
        return vm_mhd_queue(connection, UInt32(response.status), made) != 0
    }

    /// The request's headers or query arguments, in order.
    static func values(of connection: OpaquePointer, headers: Bool) -> [(name: String, value: String)] {
        var found: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &found) { pointer in
            vm_mhd_each_value(
                connection, headers ? 1 : 0,
                { context, key, value in
                    guard let context, let key else { return 1 }
                    let found = context.assumingMemoryBound(to: [(name: String, value: String)].self)
                    found.pointee.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
                    return 1
                }, pointer)
        }
        return found
    }
}
