import VMergeCore

/// One request as a handler sees it: libmicrohttpd has parsed it (no HTTP is parsed here).
package struct HTTPRequest: Sendable, Equatable {
    package var method: String
    /// The path without the query, as libmicrohttpd gives it.
    package var path: String
    /// The query's arguments, in order.
    package var query: [(name: String, value: String)]
    /// Header names in lower case.
    package var headers: [String: String]
    /// The cookies the browser sent (libmicrohttpd parses the Cookie header).
    package var cookies: [String: String]
    /// A POST's form fields, in order (libmicrohttpd's post processor decodes the body).
    package var form: [(name: String, value: String)]
    /// A JSON body under /api/, as it came (empty otherwise).
    package var body: [UInt8]

    package init(
        method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:],
        cookies: [String: String] = [:], form: [(name: String, value: String)] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.cookies = cookies
        self.form = form
        self.body = body
    }

    /// The first query argument named `name`.
    package func argument(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// The first form field named `name`.
    package func field(_ name: String) -> String? { form.first { $0.name == name }?.value }

    package static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.path == b.path && a.headers == b.headers && a.cookies == b.cookies
            && a.query.map { [$0.name, $0.value] } == b.query.map { [$0.name, $0.value] }
            && a.form.map { [$0.name, $0.value] } == b.form.map { [$0.name, $0.value] } && a.body == b.body
    }
}

/// A response: status, headers and the whole body (the dashboard's pages are small).
package struct HTTPResponse: Sendable, Equatable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    package static func == (a: HTTPResponse, b: HTTPResponse) -> Bool {
        a.status == b.status && a.body == b.body
            && a.headers.map { [$0.name, $0.value] } == b.headers.map { [$0.name, $0.value] }
    }

    /// A plain-text answer (errors, health).
    package static func text(_ status: Int, _ text: String, cache: CachePolicy = .noStore) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", cache.headerValue)],
            body: Array(text.utf8))
    }

    package static func notFound() -> HTTPResponse { .text(404, "not found\n") }

    /// A refusal the server makes before any handler: under `/api/` in the API's JSON shape
    /// (`{"error": {"status", "message"}}`), elsewhere as text.
    package static func refusal(_ status: Int, _ message: String, path: String) -> HTTPResponse {
        guard path.hasPrefix("/api/") else { return .text(status, message + "\n") }
        let json = JSON.object([("error", .object([("status", .int(Int64(status))), ("message", .string(message))]))])
        return HTTPResponse(
            status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: Array((json.text(pretty: true) + "\n").utf8))
    }

    /// This response with `Connection: close`: libmicrohttpd closes the connection once it is
    /// sent, reading nothing more from it.
    package var closing: HTTPResponse {
        var response = self
        response.headers.append(("Connection", "close"))
        return response
    }

    /// What a browser or proxy may keep.
    package enum CachePolicy: Sendable {
        /// Live data: never kept.
        case noStore
        /// Built into the binary: kept for `seconds`.
        case maxAge(Int)

        var headerValue: String {
            switch self {
            case .noStore: return "no-store"
            case let .maxAge(seconds): return "public, max-age=\(seconds)"
            }
        }
    }

    /// Sent with every response the server makes: no script, style or frame from anywhere but the
    /// server itself (and no inline script), no type sniffing, no referrer to other sites (but to
    /// itself: with none at all, Chromium sends a form's POST with `Origin: null`, which the actions'
    /// origin check must refuse), and the page not framed by another site (clickjacking).
    package static let securityHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
        ("X-Frame-Options", "DENY"),
    ]
}

/// Answers requests. Called on the server's threads, several at once.
package protocol HTTPHandler: Sendable {
    func respond(to request: HTTPRequest) -> HTTPResponse
}
