import CCurl
import Foundation

/// vmerge's one HTTP client, over libcurl: TLS verified against the system's CA store (or the bundle
/// `SSL_CERT_FILE`, `CURL_CA_BUNDLE` or, for AWS, `AWS_CA_BUNDLE` names), no redirect followed to another host, S3 requests
/// signed by libcurl. One client per thread: it owns one easy handle, whose connection stays open
/// between requests to the same host.
final class HTTPClient {
    struct Settings: Sendable {
        /// A CA bundle to verify servers with instead of the system's (`SSL_CERT_FILE`, else
        /// `CURL_CA_BUNDLE`: OpenSSL's and curl's own names for it).
        var caFile: String?
        /// The bundle for AWS's endpoints (S3, STS), as the AWS tools read it (`AWS_CA_BUNDLE`),
        /// else `caFile`.
        var awsCAFile: String?
        /// Seconds to reach a host before giving up ("did not answer in 10 s").
        var connectTimeout = 10
        /// A transfer that moves less than one byte a second for this long has stalled.
        var stallTimeout = 30
        /// The most a whole request may take, in seconds (0: no limit; a download of a large
        /// object is bounded by `stallTimeout` instead). A webhook's POST has one: a receiver that
        /// trickles its answer forever would hold every event behind it.
        var totalTimeout = 0
        /// Plain http is for endpoints an operator names (a MinIO on a private network), never
        /// for a name from a job.
        var allowPlainHTTP = false
        /// Connect only to public addresses (a URL from outside that the operator did not list):
        /// checked for the very address connected to, after resolution (see `AddressRule`).
        var publicAddressesOnly = false
        /// Asked of each redirect's target on the same host: a reason refuses to follow it (a
        /// path outside the caller's --allow-remote prefix).
        var redirectCheck: (@Sendable (URL) -> String?)?
        /// Asked before anything is sent, each time: true to stop the request (vmerge's
        /// cancellation reaches a transfer through it).
        var shouldStop: @Sendable () -> Bool = { false }

        init(environment: [String: String] = ProcessInfo.processInfo.environment) {
            let named = { (name: String) in environment[name].flatMap { $0.isEmpty ? nil : $0 } }
            caFile = named("SSL_CERT_FILE") ?? named("CURL_CA_BUNDLE")
            awsCAFile = named("AWS_CA_BUNDLE")
        }
    }

    let settings: Settings
    private let handle: CurlHandle

    init(_ settings: Settings = Settings()) throws(HTTPFailure) {
        self.settings = settings
        handle = try CurlHandle()
    }

    /// One request and its whole answer; a redirect is followed only to the same scheme, host and
    /// port (a signed S3 request or a presigned URL is never sent elsewhere without being asked).
    /// - Parameter receive: takes the body as it arrives instead of collecting it; false stops the
    ///   transfer.
    /// - Parameter accept: asked before the body is taken: a reason refuses the answer
    ///   (`HTTPFailure.Kind.rejected`), as when it is another version of the object.
    func send(
        _ request: HTTPRequest, receive: ((UnsafeRawBufferPointer) -> Bool)? = nil,
        accept: ((HTTPHeaders) -> String?)? = nil
    ) throws(HTTPFailure) -> HTTPResponse {
        var current = request
        for _ in 0..<5 {
            let response = try perform(current, receive: receive, accept: accept)
            guard [301, 302, 303, 307, 308].contains(response.status),
                current.method == .get || current.method == .head,
                let location = response.headers["Location"]
            else { return response }
            guard let next = URL(string: location, relativeTo: current.url)?.absoluteURL,
                next.scheme == current.url.scheme, next.host == current.url.host, next.port == current.url.port
            else {
                if let next = URL(string: location, relativeTo: current.url)?.absoluteURL, next.host == current.url.host
                {
                    throw HTTPFailure(
                        .local, "redirected to \(next.scheme ?? "another scheme") or another port: not followed")
                }
                let host = URL(string: location)?.host ?? "elsewhere"
                throw HTTPFailure(.local, "redirected to another host (\(host)): not followed")
            }
            // On the same host too, only where the caller may go (an --allow-remote prefix).
            if let problem = settings.redirectCheck?(next) {
                throw HTTPFailure(.local, "redirected to \(problem): not followed")
            }
            current.url = next
        }
        throw HTTPFailure(.local, "redirected more than 5 times: not followed")
    }

    private func perform(
        _ request: HTTPRequest, receive: ((UnsafeRawBufferPointer) -> Bool)?, accept: ((HTTPHeaders) -> String?)?
    ) throws(HTTPFailure) -> HTTPResponse {
        guard let scheme = request.url.scheme?.lowercased(),
            scheme == "https" || (scheme == "http" && settings.allowPlainHTTP)
        else {
            throw HTTPFailure(.local, "only https is allowed here")
        }
        handle.reset()
        let transfer = Transfer(request: request, receive: receive, shouldStop: settings.shouldStop)
        transfer.accept = accept
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        let headers = try CurlHeaderList(headerLines(request))
        try configure(request, headers: headers, transfer: transfer, context: context)
        let (code, detail) = withExtendedLifetime((transfer, headers)) { handle.perform() }
        // A ranged request answered whole was stopped on purpose: its status says why.
        if code != CURLE_OK && !(code == CURLE_WRITE_ERROR && transfer.wholeInsteadOfRange) {
            throw failure(code, detail: detail, transfer: transfer)
        }
        return HTTPResponse(
            status: handle.info(long: CURLINFO_RESPONSE_CODE), headers: transfer.headers, body: transfer.body,
            url: handle.info(string: CURLINFO_EFFECTIVE_URL))
    }

    private func headerLines(_ request: HTTPRequest) -> [String] {
        // No "Expect:" line to turn off 100-continue: libcurl 7.88 signs a header removed that way
        // as if it were sent, and S3 refuses the signature.
        var lines = request.headers.map { "\($0.name): \($0.value)" }
        // libcurl calls a POST's body a form unless told otherwise; servers then parse it as one.
        if request.method == .post, !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            lines.append("Content-Type: application/octet-stream")
        }
        if let signing = request.signing {
            if let token = signing.credentials.sessionToken { lines.append("x-amz-security-token: \(token)") }
            // libcurl before 8.x signs no payload hash of its own for S3, which S3 requires.
            if signing.service == "s3",
                !request.headers.contains(where: { $0.name.lowercased() == "x-amz-content-sha256" })
            {
                lines.append("x-amz-content-sha256: UNSIGNED-PAYLOAD")
            }
        }
        return lines
    }

    private func configure(
        _ request: HTTPRequest, headers: CurlHeaderList, transfer: Transfer, context: UnsafeMutableRawPointer
    )
        throws(HTTPFailure)
    {
        try handle.set(CURLOPT_URL, request.url.absoluteString)
        try handle.set(CURLOPT_PROTOCOLS_STR, settings.allowPlainHTTP ? "https,http" : "https")
        try handle.set(CURLOPT_FOLLOWLOCATION, 0)
        // The path as given: an S3 key "a/../b" is that key, never resolved to another object.
        try handle.set(CURLOPT_PATH_AS_IS, 1)
        try handle.set(CURLOPT_NOSIGNAL, 1)
        try handle.set(CURLOPT_CONNECTTIMEOUT, settings.connectTimeout)
        try handle.set(CURLOPT_LOW_SPEED_LIMIT, 1)
        try handle.set(CURLOPT_LOW_SPEED_TIME, settings.stallTimeout)
        try handle.set(CURLOPT_TIMEOUT, settings.totalTimeout)
        try handle.set(CURLOPT_USERAGENT, "vmerge")
        if let caFile = settings.caFile { try handle.set(CURLOPT_CAINFO, caFile) }
        try check(vm_curl_set_headers(handle.raw, headers.raw))
        try check(vm_curl_on_header(handle.raw, Transfer.header, context))
        try check(vm_curl_on_body(handle.raw, Transfer.body, context))
        try check(vm_curl_on_progress(handle.raw, Transfer.progress, context))
        if settings.publicAddressesOnly { try check(vm_curl_guard_addresses(handle.raw, transfer.addressGuard)) }
        switch request.method {
        case .get: break
        case .head: try handle.set(CURLOPT_NOBODY, 1)
        case .delete: try handle.set(CURLOPT_CUSTOMREQUEST, "DELETE")
        case .put:
            try handle.set(CURLOPT_UPLOAD, 1)
            try handle.set(offset: CURLOPT_INFILESIZE_LARGE, request.body.length)
        case .post:
            try handle.set(CURLOPT_POST, 1)
            try handle.set(offset: CURLOPT_POSTFIELDSIZE_LARGE, request.body.length)
        }
        if request.method == .put || request.method == .post {
            try check(vm_curl_on_upload(handle.raw, Transfer.upload, context))
        }
        if let signing = request.signing {
            try handle.set(CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):\(signing.service)")
            try handle.set(CURLOPT_USERNAME, signing.credentials.accessKeyID)
            try handle.set(CURLOPT_PASSWORD, signing.credentials.secretAccessKey)
        }
    }

    private func check(_ code: CURLcode) throws(HTTPFailure) {
        guard code == CURLE_OK else {
            throw HTTPFailure(.local, "the HTTP client: \(String(cString: curl_easy_strerror(code)))")
        }
    }

    private func failure(_ code: CURLcode, detail: String, transfer: Transfer) -> HTTPFailure {
        switch code {
        case CURLE_ABORTED_BY_CALLBACK where transfer.stopped: return HTTPFailure(.cancelled, "stopped")
        case _ where transfer.refusedAddress != nil:
            return HTTPFailure(
                .local,
                "its host is at a private or local address (\(transfer.refusedAddress ?? "")); allowed only under an --allow-remote prefix"
            )
        case CURLE_WRITE_ERROR where transfer.rejected != nil: return HTTPFailure(.rejected, transfer.rejected ?? "")
        case CURLE_WRITE_ERROR where transfer.refused:
            return HTTPFailure(.local, "the download was stopped by its reader")
        case CURLE_OPERATION_TIMEDOUT where handle.info(long: CURLINFO_CONNECT_TIME_T) == 0:
            return HTTPFailure(.network, "did not answer in \(settings.connectTimeout) s")
        case CURLE_OPERATION_TIMEDOUT where settings.totalTimeout > 0:
            return HTTPFailure(.network, "no whole answer within \(settings.totalTimeout) s")
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPFailure(.network, "stalled: nothing arrived for \(settings.stallTimeout) s")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM:
            return HTTPFailure(.tls, "TLS: \(detail)")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: return HTTPFailure(.local, detail)
        case CURLE_COULDNT_RESOLVE_HOST: return HTTPFailure(.network, "its host name does not resolve (\(detail))")
        case CURLE_COULDNT_CONNECT: return HTTPFailure(.network, "nothing answers at its host and port (\(detail))")
        default: return HTTPFailure(.network, detail)
        }
    }
}
