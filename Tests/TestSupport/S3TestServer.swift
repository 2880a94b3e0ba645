import Foundation
import XCTest

/// A private S3 server for the tests: moto (Servers/s3server.py) on 127.0.0.1, checking every
/// request's SigV4 signature against its IAM users, as AWS does. `accessKey` may do anything in S3,
/// `deniedAccessKey` nothing. Region us-east-1, path-style addresses (`endpoint/bucket/key`).
///
/// Its python is the virtualenv scripts/install-deps.sh makes (VMERGE_S3_SERVER_PYTHON names
/// another); without it the tests are skipped, except under CI, where that fails.
public final class S3TestServer {
    /// A fault the server injects into the S3 requests it matches (all of `method`, a substring
    /// `key` of the path `/bucket/key`, a substring `query` of the query string), `times` times:
    /// either an S3 error (`status` 503: SlowDown with Retry-After: 1; 500: InternalError; else
    /// `code`; in STS's shape if `sts`), or the real answer cut off (the connection closed) after `cutAfter` body bytes.
    public struct Fault: Encodable {
        public var method: String?
        public var key: String?
        public var query: String?
        public var times = 1
        public var status: Int?
        public var code: String?
        public var retryAfter: Int?
        public var cutAfter: Int?
        public var cutRequestAfter: Int?
        /// The request done, its answer lost (the connection shut before a byte of it).
        public var dropAnswer: Bool?
        /// The error in STS's XML (`<ErrorResponse><Error>`) rather than S3's.
        public var sts: Bool?

        public init(
            method: String? = nil, key: String? = nil, query: String? = nil, times: Int = 1, status: Int? = nil,
            code: String? = nil, retryAfter: Int? = nil, cutAfter: Int? = nil, sts: Bool? = nil
        ) {
            (self.method, self.key, self.query, self.times, self.status) = (method, key, query, times, status)
            (self.code, self.retryAfter, self.cutAfter, self.sts) = (code, retryAfter, cutAfter, sts)
        }

        public static func status(
            _ status: Int, method: String? = nil, key: String? = nil, query: String? = nil, times: Int = 1
        ) -> Fault {
            Fault(method: method, key: key, query: query, times: times, status: status)
        }

        /// The connection shut after `bytes` of the request's body (an upload cut midway).
        public static func cutRequest(
            after bytes: Int, method: String? = "PUT", key: String? = nil, query: String? = nil, times: Int = 1
        ) -> Fault {
            var fault = Fault(method: method, key: key, query: query, times: times)
            fault.cutRequestAfter = bytes
            return fault
        }

        /// The request done (an object stored), then the connection shut with no answer.
        public static func dropAnswer(method: String? = "PUT", key: String? = nil, query: String? = nil) -> Fault {
            var fault = Fault(method: method, key: key, query: query)
            fault.dropAnswer = true
            return fault
        }

        public static func cut(
            after bytes: Int, method: String? = "GET", key: String? = nil, query: String? = nil, times: Int = 1
        ) -> Fault {
            Fault(method: method, key: key, query: query, times: times, cutAfter: bytes)
        }
    }

    /// One S3 request the server saw (control requests are not logged): `path` as the client sent
    /// it (escaped), `range` its Range header, `bytesSent` the body bytes sent so far (all of them
    /// once the client has the answer, fewer if cut).
    public struct LoggedRequest: Decodable, Equatable {
        public let method: String
        public let path: String
        public let query: String
        public let range: String?
        /// The request's If-Match condition, if any.
        public let ifMatch: String?
        public let status: Int
        public let bytesSent: Int
    }

    public let endpoint: URL
    public let accessKey = "AKIAVMERGETESTS00001"
    public let secretKey: String
    public let deniedAccessKey = "AKIAVMERGEDENIED0001"
    public let deniedSecretKey: String
    public let region = "us-east-1"
    private let folder: URL
    private let server: ChildServer

    /// The virtualenv's python: VMERGE_S3_SERVER_PYTHON, else $VMERGE_CACHE/s3server/bin/python3.
    public static var python: String {
        let named = ProcessInfo.processInfo.environment["VMERGE_S3_SERVER_PYTHON"] ?? ""
        return named.isEmpty ? vmergeCache + "/s3server/bin/python3" : named
    }

    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../RemoteTests/Servers/s3server.py").standardizedFileURL

    /// Starts a server with fresh secrets and waits (20 s at most) until it accepts requests.
    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: S3TestServer.python) else {
            throw missingTool(
                "no S3 test server at \(S3TestServer.python): make deps makes it, or set VMERGE_S3_SERVER_PYTHON")
        }
        // Secrets of this server alone: a test can pass only by signing with them.
        secretKey = "vmerge-" + UUID().uuidString
        deniedSecretKey = "vmerge-denied-" + UUID().uuidString
        folder = try makeTemporaryFolder("vmerge-s3")
        let arguments = [
            S3TestServer.script.path, "--access-key", accessKey, "--secret-key", secretKey,
            "--denied-access-key", deniedAccessKey, "--denied-secret-key", deniedSecretKey,
        ]
        server = try ChildServer(
            S3TestServer.python, arguments, log: folder.appendingPathComponent("server.log"), readsOutput: true)
        guard let line = server.firstLine(timeout: 20), line.hasPrefix("ready "),
            let endpoint = URL(string: String(line.dropFirst("ready ".count)))
        else {
            server.stop()
            throw RemoteTestError("the S3 test server did not start: \(server.logText)")
        }
        self.endpoint = endpoint
    }

    deinit { stop() }

    /// Stops the server (its objects are gone with it) and removes its folder.
    public func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The server's own log (werkzeug's line per request, moto's tracebacks), for failure messages.
    public var log: String { server.logText }

    /// The S3 address of an object (path style; the key's characters escaped as S3 wants them).
    public func url(bucket: String, key: String) -> URL {
        endpoint.appendingPathComponent(bucket).appendingPathComponent(key)
    }

    public func createBucket(_ name: String) throws {
        try control("PUT", "buckets/\(name)")
    }

    public func put(bucket: String, key: String, bytes: Data) throws {
        try control("PUT", "objects/\(bucket)/\(key)", body: bytes)
    }

    /// Removes the object, as someone else with the bucket would.
    public func delete(bucket: String, key: String) throws {
        try control("DELETE", "objects/\(bucket)/\(key)")
    }

    /// The object's bytes as the server keeps them; nil if there is none.
    public func object(bucket: String, key: String) throws -> Data? {
        let response = try controlRequest("GET", controlURL("objects/\(bucket)/\(key)"))
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw RemoteTestError("object \(bucket)/\(key): \(response.text)") }
        return response.body
    }

    /// The bucket's keys, sorted.
    public func keys(bucket: String) throws -> [String] {
        try JSONDecoder().decode([String].self, from: control("GET", "buckets/\(bucket)"))
    }

    /// Adds faults after those already waiting; the first that matches a request applies.
    public func inject(_ faults: [Fault]) throws {
        try control("POST", "faults", body: JSONEncoder().encode(faults))
    }

    public func clearFaults() throws {
        try control("DELETE", "faults")
    }

    /// The S3 requests seen since the start or the last `clearRequests()`, oldest first.
    public func requests() throws -> [LoggedRequest] {
        try JSONDecoder().decode([LoggedRequest].self, from: control("GET", "requests"))
    }

    public func clearRequests() throws {
        try control("DELETE", "requests")
    }

    /// The role the server lets an unsigned AssumeRoleWithWebIdentity assume (moto checks no
    /// token); its keys may do anything in S3.
    public let webIdentityRole = "arn:aws:iam::123456789012:role/vmerge-test-role"

    /// The instance role the server's fake EC2 metadata service (IMDSv2, under /latest/) serves
    /// (nil: none, the role listing is a 404), with these keys and no session token, else with
    /// temporary keys of `webIdentityRole` the server mints, as an instance role's are. The fields
    /// served (AccessKeyId, SecretAccessKey, Token, Expiration).
    @discardableResult
    public func serveInstanceRole(_ role: String?, key: String? = nil, secret: String? = nil) throws -> [String: String]
    {
        guard let role else {
            try control("DELETE", "imds")
            return [:]
        }
        var fields = ["role": role, "Expiration": "2031-01-02T03:04:05Z"]
        if let key, let secret { (fields["AccessKeyId"], fields["SecretAccessKey"]) = (key, secret) }
        let served = try control("PUT", "imds", body: JSONEncoder().encode(fields))
        return try JSONDecoder().decode([String: String].self, from: served)
    }

    private func controlURL(_ command: String) -> URL {
        let escaped = command.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? command
        return URL(string: endpoint.absoluteString + "/_vmerge/" + escaped)!
    }

    @discardableResult
    private func control(_ method: String, _ command: String, body: Data? = nil) throws -> Data {
        let response = try controlRequest(method, controlURL(command), body: body)
        guard response.status == 200 else {
            throw RemoteTestError("\(method) /_vmerge/\(command): \(response.status) \(response.text)")
        }
        return response.body
    }
}

/// Tests against a real S3 server: one per test class (started by its first test, stopped when the
/// class is done); each test starts with no faults waiting and an empty request log.
open class S3TestCase: XCTestCase {
    nonisolated(unsafe) private static var servers: [ObjectIdentifier: S3TestServer] = [:]

    public var s3: S3TestServer!

    open override func setUpWithError() throws {
        try super.setUpWithError()
        let key = ObjectIdentifier(type(of: self))
        if S3TestCase.servers[key] == nil { S3TestCase.servers[key] = try S3TestServer() }
        s3 = S3TestCase.servers[key]
        try s3.clearFaults()
        try s3.clearRequests()
    }

    open override class func tearDown() {
        servers.removeValue(forKey: ObjectIdentifier(self))?.stop()
        super.tearDown()
    }
}
