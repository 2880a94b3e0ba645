import Foundation
import VMergeCore

/// Why an S3 request about one object failed, in words for `vmerge: s3://b/k: <message>`, and
/// whether another try may help. Built from S3's error code when it sent one, from the status
/// when it did not (a HEAD's answer has no body).
struct S3Failure: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        case noSuchObject, noSuchBucket, accessDenied, secretRefused, unknownAccessKey
        /// A condition did not hold: the object is no longer the one seen (If-Match), or one
        /// exists where none may (If-None-Match).
        case preconditionFailed
        /// An object exists where a write may put one only when there is none.
        case exists
        case throttled, server, network, tls, cancelled, unreadableAnswer, other
    }

    var address: S3Address
    var kind: Kind
    var message: String
    var retryAfter: Double?
    /// The client's failure underneath, when the request got no answer.
    var http: HTTPFailure?

    init(_ address: S3Address, _ kind: Kind, _ message: String) {
        self.address = address
        self.kind = kind
        self.message = message
    }

    init(_ address: S3Address, _ failure: HTTPFailure) {
        let kind: Kind =
            switch failure.kind {
            case .network: .network
            case .tls: .tls
            case .cancelled: .cancelled
            case .rejected: .preconditionFailed
            default: .other
            }
        self.init(address, kind, failure.message)
        http = failure
    }

    init(_ address: S3Address, answer: HTTPResponse, credentials: AWSCredentials, method: HTTPRequest.Method) {
        let xml = S3XML.parse(answer.body)
        let code = xml?["Code"]?.text
        let (kind, message) = S3Failure.meaning(
            status: answer.status, code: code, credentials: credentials, method: method)
        // S3's own message only where vmerge has no words of its own for the code (it holds no
        // secret: S3 never echoes a key or a signature in it).
        let said = xml?["Message"]?.text
        let detail = kind == .other ? said.map { ": \($0)" } ?? "" : ""
        self.init(address, kind, message + detail)
        retryAfter = answer.headers["Retry-After"].flatMap(Double.init)
        http = HTTPFailure(.status(answer.status, code: code), message, retryAfter: retryAfter)
    }

    private static func meaning(status: Int, code: String?, credentials: AWSCredentials, method: HTTPRequest.Method)
        -> (Kind, String)
    {
        switch (status, code) {
        case (_, "NoSuchKey"),
            (404, nil) where method == .head || method == .delete:
            return (.noSuchObject, "no such object")
        case (_, "NoSuchBucket"): return (.noSuchBucket, "no such bucket")
        case (_, "SignatureDoesNotMatch"): return (.secretRefused, "the secret key was refused (\(credentials))")
        case (_, "InvalidAccessKeyId"):
            return (.unknownAccessKey, "the access key is not known to the server (\(credentials))")
        case (_, "InvalidToken"), (_, "ExpiredToken"):
            return (.accessDenied, "the session token was refused (\(credentials))")
        case (_, "AccessDenied"), (403, _): return (.accessDenied, "access denied (\(credentials))")
        case (412, _), (_, "PreconditionFailed"), (409, "ConditionalRequestConflict"):
            return (.preconditionFailed, "changed since it was seen")
        case (503, _), (429, _), (_, "SlowDown"): return (.throttled, "the server asked to slow down (HTTP \(status))")
        case (500..., _): return (.server, "the server failed (HTTP \(status)\(code.map { ", \($0)" } ?? ""))")
        case (404, _): return (.noSuchObject, "no such object")
        default: return (.other, "refused (HTTP \(status)\(code.map { ", \($0)" } ?? ""))")
        }
    }

    var isTransient: Bool {
        switch kind {
        case .throttled, .server, .network: true
        default: http?.isTransient ?? false
        }
    }

    var description: String { "\(address): \(message)" }
}

/// How long to wait before each new try: exponential with full jitter (AWS's advice, so that many
/// workers throttled at once do not come back at once), or what the server asked (Retry-After),
/// within a cap.
struct RetrySchedule: Sendable {
    var attempts = 5
    var base = 0.25
    var cap = 20.0

    /// Seconds to wait after failed try `attempt` (1-based), or nil when no try is left.
    func wait(after attempt: Int, asked: Double?) -> Double? {
        guard attempt < attempts else { return nil }
        if let asked { return min(max(asked, 0), cap) }
        let ceiling = min(cap, base * Double(1 << min(attempt, 16)))
        return Double.random(in: ceiling / 2...ceiling)
    }

    /// Sleeps, waking early when `stop` says so (checked every tenth of a second).
    func sleep(_ seconds: Double, unless stop: () -> Bool) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, !stop() { usleep(UInt32(min(0.1, max(0, end.timeIntervalSinceNow)) * 1_000_000)) }
    }
}
