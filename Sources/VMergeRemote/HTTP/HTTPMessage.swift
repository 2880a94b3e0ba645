import Foundation

/// One HTTP request as the client sends it. The URL is sent as it is (already percent-encoded: S3's
/// signature covers the path and query exactly as they go on the wire).
struct HTTPRequest: Sendable {
    enum Method: String, Sendable { case get = "GET", head = "HEAD", put = "PUT", post = "POST", delete = "DELETE" }

    /// What is sent as the body. A file part is read straight from the descriptor (an upload of a
    /// multi-gigabyte video never sits in memory).
    enum Body: Sendable {
        case none
        case bytes(Data)
        case file(descriptor: Int32, offset: Int64, length: Int64)

        var length: Int64 {
            switch self {
            case .none: 0
            case let .bytes(data): Int64(data.count)
            case let .file(_, _, length): length
            }
        }
    }

    var method: Method
    var url: URL
    var headers: [(name: String, value: String)] = []
    var body: Body = .none
    /// Signed with AWS Signature V4 by libcurl (CURLOPT_AWS_SIGV4) when set.
    var signing: AWSSigning?

    init(
        _ method: Method, _ url: URL, headers: [(name: String, value: String)] = [], body: Body = .none,
        signing: AWSSigning? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.signing = signing
    }
}

/// What AWS Signature V4 needs from a request: the scope and the keys. libcurl computes the
/// signature; vmerge only says what to sign with.
struct AWSSigning: Sendable {
    var region: String
    var service: String
    var credentials: AWSCredentials
}

/// The response's header fields, looked up without regard to case (as HTTP defines them).
struct HTTPHeaders: Sendable {
    private(set) var fields: [(name: String, value: String)] = []
    /// The status of the response these fields belong to (0 before its status line).
    private(set) var status = 0

    subscript(name: String) -> String? {
        fields.last { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// One line as libcurl hands it over ("Name: value\r\n"); a status line starts a new response
    /// (a redirect's or a 100 Continue's fields are not this response's).
    mutating func take(line: String) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("HTTP/") {
            fields.removeAll()
            status = trimmed.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        let name = String(trimmed[..<colon])
        let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        fields.append((name, value))
    }
}

struct HTTPResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    /// The body, when the caller did not take it as it came.
    var body: Data
    /// Where the response came from (after redirects libcurl was allowed to follow: none).
    var url: String?

    var isSuccess: Bool { (200..<300).contains(status) }
}

/// Why a request did not get an answer that can be used, in one line fit for an error message
/// (never a secret: no header, no query string), and whether trying again may help.
struct HTTPFailure: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// Nothing was reached in time, or the connection failed or was cut: worth another try.
        case network
        /// The certificate did not verify, or TLS failed: not worth another try.
        case tls
        /// The server answered with this status (an S3 error code beside it when it sent one).
        case status(Int, code: String?)
        /// Stopped by vmerge's cancellation.
        case cancelled
        /// The request could not be made here (bad URL, out of memory, refused redirect).
        case local
        /// The answer's headers were refused before its body was taken (not the object asked for).
        case rejected
    }

    var kind: Kind
    var message: String
    /// Seconds the server asked to wait (Retry-After), when it said.
    var retryAfter: Double?

    init(_ kind: Kind, _ message: String, retryAfter: Double? = nil) {
        self.kind = kind
        self.message = message
        self.retryAfter = retryAfter
    }

    /// Worth another try: the network, a 5xx, throttling (429, S3's SlowDown as a 503), or a
    /// request the server timed out (408, S3's RequestTimeout as a 400).
    var isTransient: Bool {
        switch kind {
        case .network: return true
        case let .status(status, code):
            return status >= 500 || status == 429 || status == 408 || code == "RequestTimeout" || code == "SlowDown"
                || code == "Throttling" || code == "ThrottlingException"
        case .tls, .cancelled, .local, .rejected: return false
        }
    }

    var description: String { message }
}
