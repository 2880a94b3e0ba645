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
/// one client (`ConnectionBudget`: every loopback address is one client, the Unix socket's
/// clients another), which leaves a flood from one client room for others to be served. A client
/// that sends its header a byte at a time, each before the timeout, holds its connection for as
/// long as it likes (libmicrohttpd has no deadline for a whole header), so `RequestDeadline` gives
/// each request `requestSeconds` to arrive. 1,024 connections, 32 a client. Only GET,
/// HEAD and POST (405 otherwise); a POST's body is a form (at most `bodyBytes`) or, under
/// `/api/`, JSON (`application/json`, at most `jsonBodyBytes`, kept as it came for the API to
/// read); anything else is refused.
package final class HTTPServer {
    package struct Limits: Sendable, Equatable {
        package var connections: UInt32 = 1024
        package var perAddress: UInt32 = 32
        package var timeoutSeconds: UInt32 = 10
        package var memoryPerConnection = 32 * 1024
        package var threads: UInt32 = 8
        package var bodyBytes = 4096
        /// A JSON body's cap (the job API's): 413 past it.
        package var jsonBodyBytes = 256 * 1024
        /// The most a request may take from its first byte (or the end of the request before it on
        /// the same connection) to its response.
        package var requestSeconds = 10.0

        package init() {}
    }

    /// Where it listens (with the port the system gave, when asked for port 0).
    package let address: ListenAddress
    /// The Unix socket file this server made (device and inode), removed when it stops.
    private let socketFile: FileID?
    private var daemon: OpaquePointer?
    private let dispatcher: Dispatcher
    private let binding: UnsafeMutablePointer<vm_mhd_binding>

    package init(listening requested: ListenAddress, limits: Limits = Limits(), handler: any HTTPHandler) throws {
        // Every connection is an open file: a default limit of 1,024 would cap the connections
        // below the server's own.
        vm_allow_descriptors(UInt(limits.connections) + 64)
        let (fd, bound) = try ListeningSocket.open(requested)
        address = bound
        socketFile = ListeningSocket.identity(bound)
        dispatcher = Dispatcher(
            handler: handler, bodyBytes: limits.bodyBytes, jsonBodyBytes: limits.jsonBodyBytes,
            hosts: Dispatcher.hosts(answering: bound),
            deadline: RequestDeadline(seconds: limits.requestSeconds),
            budget: ConnectionBudget(perClient: Int(limits.perAddress)))
        binding = .allocate(capacity: 1)
        binding.initialize(
            to: vm_mhd_binding(
                handler: accessHandler, completed: requestCompleted, connection_event: connectionEvent,
                accept: acceptClient, context: Unmanaged.passUnretained(dispatcher).toOpaque()))
        let settings = vm_mhd_limits(
            connections: limits.connections, timeout_seconds: limits.timeoutSeconds,
            memory_per_connection: limits.memoryPerConnection, threads: limits.threads)
        guard let started = vm_mhd_start(fd, binding, settings) else {
            close(fd)
            ListeningSocket.remove(bound, made: socketFile)
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
        ListeningSocket.remove(address, made: socketFile)
    }

    deinit {
        stop()
        binding.deallocate()
    }
}

/// What one request keeps between libmicrohttpd's calls for it: the body bytes received and the
/// form decoded from them. Made when its headers are in, released when libmicrohttpd says the
/// request ended (answered, or its client gone), so nothing outlives a request.
final class RequestState {
    var bodyBytes = 0
    /// A JSON body's bytes as they came (nil: the body is a form, or there is none).
    var json: [UInt8]?
    var fields: [(name: String, value: [UInt8])] = []
    var form: UnsafeMutablePointer<vm_mhd_form>?
    /// The decoder refused the body (a raw "=" in a value, too many fields): answered 400.
    var malformed = false

    deinit { if let form { vm_mhd_form_close(form) } }

    /// Appends a piece of a field: a long value comes in several, each at its offset.
    func add(_ name: String, _ bytes: UnsafeBufferPointer<UInt8>, offset: UInt64) {
        if offset > 0, let last = fields.indices.last, fields[last].name == name {
            fields[last].value += bytes
        } else {
            fields.append((name, Array(bytes)))
        }
    }
}

/// What libmicrohttpd calls for each step of a request; `context` is the server's `Dispatcher`.
/// Three steps: the headers (a request's state is made, and what no body can mend refused), each
/// piece of the body (counted against the cap, fed to the form decoder), and the end (answered).
private let accessHandler: vm_mhd_handler = { context, connection, url, method, upload, uploadSize, request in
    guard let context, let connection, let url, let method, let uploadSize, let request else { return 0 }
    let dispatcher = Unmanaged<Dispatcher>.fromOpaque(context).takeUnretainedValue()
    let methodName = String(cString: method)
    guard let pointer = request.pointee else {
        let state = RequestState()
        request.pointee = Unmanaged.passRetained(state).toOpaque()
        if let refusal = dispatcher.refusal(method: methodName, url: String(cString: url), connection: connection) {
            return dispatcher.answer(refusal, on: connection)
        }
        let path = String(cString: url)
        let contentType = vm_mhd_header(connection, "Content-Type")
        if methodName == "POST", path.hasPrefix("/api/") {
            // The API reads JSON; a body without a type is read as JSON too (curl's -d with a
            // type of its own is not).
            guard contentType == nil || Dispatcher.isJSON(contentType) else {
                let refusal = HTTPResponse.refusal(
                    415, "the body is not JSON (Content-Type: application/json)", path: path)
                return dispatcher.answer(refusal, on: connection)
            }
            state.json = []
        } else if methodName == "POST", contentType != nil {
            state.form = vm_mhd_form_open(connection, formField, Unmanaged.passUnretained(state).toOpaque())
            if state.form == nil {
                let refusal = HTTPResponse.text(415, "the body is not a form (application/x-www-form-urlencoded)\n")
                return dispatcher.answer(refusal, on: connection)
            }
        }
        return 1
    }
    let state = Unmanaged<RequestState>.fromOpaque(pointer).takeUnretainedValue()
    if uploadSize.pointee > 0 {
        let size = uploadSize.pointee
        state.bodyBytes = state.bodyBytes.addingSaturating(size)
        uploadSize.pointee = 0
        // A body without a length (chunked) past the cap: answered 413 as a declared one is,
        // once it has ended (libmicrohttpd 0.9 queues no response in the middle of a body). The
        // rest is dropped as it comes, never kept; a body that does not end meets the request
        // deadline.
        guard state.bodyBytes <= dispatcher.cap(of: state) else { return 1 }
        if state.json != nil, let upload {
            state.json?.append(contentsOf: UnsafeRawBufferPointer(start: upload, count: size))
        }
        if let form = state.form, let upload, !state.malformed, vm_mhd_form_feed(form, upload, size) == 0 {
            state.malformed = true
        }
        return 1
    }
    if state.bodyBytes > dispatcher.cap(of: state) {
        let refusal = HTTPResponse.refusal(413, "request body too large", path: String(cString: url))
        return dispatcher.answer(refusal.closing, on: connection)
    }
    if state.malformed {
        let refusal = HTTPResponse.text(
            400, "the form cannot be read (each value percent-encoded, at most 64 fields; curl: --data-urlencode)\n")
        return dispatcher.answer(refusal, on: connection)
    }
    let parsed = HTTPRequest(
        method: methodName, path: String(cString: url), query: Dispatcher.values(of: connection, VM_MHD_QUERY),
        headers: Dictionary(
            Dispatcher.values(of: connection, VM_MHD_HEADERS).map { ($0.name.lowercased(), $0.value) },
            uniquingKeysWith: { first, _ in first }),
        cookies: Dictionary(Dispatcher.values(of: connection, VM_MHD_COOKIES), uniquingKeysWith: { first, _ in first }),
        form: state.fields.map { ($0.name, String(decoding: $0.value, as: UTF8.self)) }, body: state.json ?? [])
    return dispatcher.answer(dispatcher.handler.respond(to: parsed), on: connection)
}

/// A decoded form field (or a piece of one), added to its request's state: at most 64 fields.
private let formField: vm_mhd_field = { context, key, data, offset, size in
    guard let context, let key else { return 0 }
    let state = Unmanaged<RequestState>.fromOpaque(context).takeUnretainedValue()
    guard state.fields.count < 64 || offset > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(
        start: data.map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self) }, count: size)
    state.add(String(cString: key), bytes, offset: offset)
    return 1
}

/// A request ended: its state is released.
private let requestCompleted: vm_mhd_completed = { context, connection, request in
    if let context, let connection {
        Unmanaged<Dispatcher>.fromOpaque(context).takeUnretainedValue().deadline.requestEnded(connection)
    }
    guard let request, let pointer = request.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(pointer).release()
    request.pointee = nil
}

/// A connection accepted or being closed: its request deadline is kept from one to the other,
/// and it counts against its client's budget.
private let connectionEvent: vm_mhd_connection_event = { context, connection, started in
    guard let context, let connection else { return }
    let dispatcher = Unmanaged<Dispatcher>.fromOpaque(context).takeUnretainedValue()
    if started != 0 {
        dispatcher.deadline.started(connection)
        dispatcher.budget.started(connection, client: ConnectionBudget.client(of: connection))
    } else {
        dispatcher.deadline.closed(connection)
        dispatcher.budget.closed(connection)
    }
}

/// A client connecting: closed at once when its budget is spent.
private let acceptClient: vm_mhd_accept = { context, family, bytes in
    guard let context, let bytes else { return 0 }
    let dispatcher = Unmanaged<Dispatcher>.fromOpaque(context).takeUnretainedValue()
    let length = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0
    let client = ConnectionBudget.client(family: family, bytes: Array(UnsafeBufferPointer(start: bytes, count: length)))
    return dispatcher.budget.admits(client) ? 1 : 0
}

/// The server's side of each request: the refusals every route shares, and sending a response.
final class Dispatcher: Sendable {
    let handler: any HTTPHandler
    let bodyBytes: Int
    let jsonBodyBytes: Int
    /// The Host header values answered (lower case); nil: any.
    let hosts: Set<String>?
    let deadline: RequestDeadline
    let budget: ConnectionBudget

    init(
        handler: any HTTPHandler, bodyBytes: Int, jsonBodyBytes: Int, hosts: Set<String>?,
        deadline: RequestDeadline, budget: ConnectionBudget
    ) {
        self.handler = handler
        self.bodyBytes = bodyBytes
        self.jsonBodyBytes = jsonBodyBytes
        self.hosts = hosts
        self.deadline = deadline
        self.budget = budget
    }

    /// The most a request's body may hold: a JSON body's cap, or a form's.
    func cap(of state: RequestState) -> Int { state.json == nil ? bodyBytes : jsonBodyBytes }

    /// A Content-Type of `application/json` (parameters such as a charset aside, any case).
    static func isJSON(_ header: UnsafePointer<CChar>?) -> Bool {
        guard let header else { return false }
        let type = String(cString: header).split(separator: ";").first ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    /// Queues `response` for the request on `connection`, which then has its answer.
    func answer(_ response: HTTPResponse, on connection: OpaquePointer) -> Int32 {
        deadline.answered(connection)
        return Dispatcher.send(response, on: connection) ? 1 : 0
    }

    /// A server on loopback answers only to loopback names (with any port): a web page elsewhere
    /// that points a name of its own at 127.0.0.1 (DNS rebinding) would otherwise read the
    /// dashboard as its own origin. On any other address the names it is reached by are not
    /// known here: any.
    static func hosts(answering address: ListenAddress) -> Set<String>? {
        guard address.isLoopback else { return nil }
        let bound = address.family == .ipv6 ? "[\(address.host)]" : address.host
        return [bound.lowercased(), "localhost", "127.0.0.1", "[::1]"]
    }

    /// The name in a Host header, without its port.
    static func hostName(_ header: String) -> String {
        var name = Substring(header.lowercased())
        if let colon = name.lastIndex(of: ":"), !name[name.index(after: colon)...].contains("]") {
            name = name[..<colon]
        }
        return String(name)
    }

    /// 400 for framing two readers could take differently (`framingRefusal`); 405 for a method
    /// other than GET, HEAD and POST; 413 for a declared body over the cap; 421 for a Host this
    /// server does not answer to.
    func refusal(method: String, url: String, connection: OpaquePointer) -> HTTPResponse? {
        if let refusal = Dispatcher.framingRefusal(Dispatcher.values(of: connection, VM_MHD_HEADERS)) { return refusal }
        if let hosts, let host = vm_mhd_header(connection, "Host").map({ String(cString: $0) }),
            !hosts.contains(Dispatcher.hostName(host))
        {
            return .text(
                421, "this server answers to loopback names only (\(hosts.sorted().joined(separator: ", ")))\n")
        }
        guard ["GET", "HEAD", "POST"].contains(method) else {
            var response = HTTPResponse.refusal(
                405, "method not allowed: this server answers GET, HEAD and POST", path: url)
            response.headers.append(("Allow", "GET, HEAD, POST"))
            return response
        }
        let length = vm_mhd_header(connection, "Content-Length").map { String(cString: $0) }
        // The API's bodies (JSON) have their own cap, as the body's own reading does (`cap(of:)`).
        let json = url.hasPrefix("/api/")
        if let length, Int(length).map({ $0 > (json ? jsonBodyBytes : bodyBytes) }) ?? true {
            // Closed after: the body is not read, and its bytes must not be taken for a request.
            return HTTPResponse.refusal(413, "request body too large", path: url).closing
        }
        return nil
    }

    /// 400, closing the connection, for a request whose body's end is not one reading (RFC 9112,
    /// 6.3): Content-Length values that differ (libmicrohttpd takes the first, a proxy in front
    /// may take the last), or a Content-Length beside a Transfer-Encoding (libmicrohttpd reads
    /// the chunks, a proxy may count the length). Either way the bytes after the body could be
    /// a request one reader sees and the other does not, so nothing more is read from the
    /// connection. The same length repeated is one length.
    static func framingRefusal(_ headers: [(name: String, value: String)]) -> HTTPResponse? {
        let lengths = headers.filter { $0.name.lowercased() == "content-length" }
            .flatMap { $0.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        if Set(lengths).count > 1 {
            return HTTPResponse.text(400, "the request has two different Content-Length values\n").closing
        }
        if !lengths.isEmpty, headers.contains(where: { $0.name.lowercased() == "transfer-encoding" }) {
            return HTTPResponse.text(400, "the request has both Content-Length and Transfer-Encoding\n").closing
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

    /// The request's headers, query arguments or cookies, in order.
    static func values(of connection: OpaquePointer, _ which: vm_mhd_values) -> [(name: String, value: String)] {
        var found: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &found) { pointer in
            vm_mhd_each_value(
                connection, which,
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
