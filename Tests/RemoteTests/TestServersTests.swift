import Foundation
import TestSupport
import XCTest

/// The curl CLI's answer to one request: its exit status (18: the body came short; 60: the
/// certificate was not trusted), the HTTP status, the headers (names in lower case) and the body.
struct CurlAnswer {
    let exit: Int32
    let status: Int
    let headers: [String: String]
    let body: Data
    let output: String
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Runs the curl CLI on `url` (these tests check the servers, not vmerge's client, which is
/// libcurl itself).
func curl(_ url: URL, _ options: [String] = []) throws -> CurlAnswer {
    let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/curl" }
    guard let curl = (candidates + ["/usr/bin/curl"]).first(where: FileManager.default.isExecutableFile) else {
        throw missingTool("the curl CLI is not installed")
    }
    let folder = try makeTemporaryFolder("vmerge-curl")
    defer { try? FileManager.default.removeItem(at: folder) }
    let bodyFile = folder.appendingPathComponent("body").path
    let headersFile = folder.appendingPathComponent("headers").path
    let arguments = ["-sS", "-o", bodyFile, "-D", headersFile, "-w", "%{http_code}", "--max-time", "10"] + options
    let result = try runTool(curl, arguments + [url.absoluteString])
    var headers: [String: String] = [:]
    let headerText = (try? String(contentsOfFile: headersFile, encoding: .utf8)) ?? ""
    for line in headerText.split(separator: "\r\n") {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    let status = Int(result.output.suffix(3)) ?? 0
    let body = FileManager.default.contents(atPath: bodyFile) ?? Data()
    return CurlAnswer(exit: result.status, status: status, headers: headers, body: body, output: result.output)
}

/// Bytes that differ from place to place, so a range of them shows where it was taken.
func patternBytes(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) }) }

/// The S3 server checks signatures and users, injects its faults once each and logs what it sent.
final class S3TestServerTests: S3TestCase {
    /// SHA-256 of no bytes: the payload hash of a GET. S3 wants it in x-amz-content-sha256, and
    /// curl before 8.1 does not send that header itself.
    let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    func signed(_ url: URL, key: String? = nil, secret: String? = nil, _ options: [String] = []) throws -> CurlAnswer {
        let user = "\(key ?? s3.accessKey):\(secret ?? s3.secretKey)"
        let signing = ["--aws-sigv4", "aws:amz:\(s3.region):s3", "--user", user]
        return try curl(url, signing + ["-H", "x-amz-content-sha256: \(emptyHash)"] + options)
    }

    func bucketListing(_ bucket: String) -> URL { URL(string: s3.endpoint.absoluteString + "/\(bucket)?list-type=2")! }

    func testARequestSignedWithTheRightKeyListsTheBucket() throws {
        try s3.createBucket("smoke-list")
        try s3.put(bucket: "smoke-list", key: "a/one.bin", bytes: patternBytes(5))
        let answer = try signed(bucketListing("smoke-list"))
        XCTAssertEqual(answer.status, 200, answer.text + s3.log)
        XCTAssertTrue(answer.text.contains("<Key>a/one.bin</Key>"), answer.text)
    }

    func testAWrongSecretAnUnknownKeyAndNoSignatureAreRefused() throws {
        try s3.createBucket("smoke-refused")
        let wrong = try signed(bucketListing("smoke-refused"), secret: s3.secretKey + "x")
        XCTAssertEqual(wrong.status, 403)
        XCTAssertTrue(wrong.text.contains("<Code>SignatureDoesNotMatch</Code>"), wrong.text)
        let unknown = try signed(bucketListing("smoke-refused"), key: "AKIAVMERGENOSUCHKEY0", secret: s3.secretKey)
        XCTAssertEqual(unknown.status, 403)
        XCTAssertTrue(unknown.text.contains("<Code>InvalidAccessKeyId</Code>"), unknown.text)
        let anonymous = try curl(bucketListing("smoke-refused"))
        XCTAssertEqual(anonymous.status, 403)
        XCTAssertTrue(anonymous.text.contains("<Code>AccessDenied</Code>"), anonymous.text)
    }

    func testTheDeniedUsersRightlySignedRequestIsDenied() throws {
        try s3.createBucket("smoke-denied")
        let answer = try signed(bucketListing("smoke-denied"), key: s3.deniedAccessKey, secret: s3.deniedSecretKey)
        XCTAssertEqual(answer.status, 403)
        XCTAssertTrue(answer.text.contains("<Code>AccessDenied</Code>"), answer.text)
    }

    func testAnInjected503IsAnsweredOnceThenTheRealAnswer() throws {
        try s3.createBucket("smoke-503")
        let bytes = patternBytes(300)
        try s3.put(bucket: "smoke-503", key: "clip.mov", bytes: bytes)
        try s3.inject([.status(503, method: "GET", key: "clip.mov")])
        let url = s3.url(bucket: "smoke-503", key: "clip.mov")
        let refused = try signed(url)
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertTrue(refused.text.contains("<Code>SlowDown</Code>"), refused.text)
        let served = try signed(url)
        XCTAssertEqual(served.status, 200, served.text)
        XCTAssertEqual(served.body, bytes)
        XCTAssertEqual(try s3.requests().map(\.status), [503, 200])
    }

    func testAnInjectedCutDeliversFewerBytesThanTheObject() throws {
        try s3.createBucket("smoke-cut")
        let bytes = patternBytes(200_000)
        try s3.put(bucket: "smoke-cut", key: "big.mov", bytes: bytes)
        try s3.inject([.cut(after: 1000, key: "big.mov")])
        let url = s3.url(bucket: "smoke-cut", key: "big.mov")
        let cut = try signed(url)
        // 18: "transfer closed with outstanding read data remaining", the headers having promised more.
        XCTAssertEqual(cut.exit, 18, cut.output)
        XCTAssertEqual(cut.body, bytes.prefix(1000))
        let whole = try signed(url)
        XCTAssertEqual(whole.body, bytes)
        XCTAssertEqual(try s3.requests().map(\.bytesSent), [1000, 200_000])
    }

    func testTheRequestLogShowsARangedRead() throws {
        try s3.createBucket("smoke-range")
        let bytes = patternBytes(100)
        try s3.put(bucket: "smoke-range", key: "dir/part one.mov", bytes: bytes)
        let answer = try signed(s3.url(bucket: "smoke-range", key: "dir/part one.mov"), ["-r", "10-19"])
        XCTAssertEqual(answer.status, 206, answer.text)
        XCTAssertEqual(answer.body, bytes[10..<20])
        let logged = try s3.requests()
        XCTAssertEqual(logged.count, 1)
        XCTAssertEqual(logged.first?.range, "bytes=10-19")
        XCTAssertEqual(logged.first?.bytesSent, 10)
        XCTAssertEqual(logged.first?.path, "/smoke-range/dir/part%20one.mov")
    }

    func testTheControlsStoreListAndReturnObjects() throws {
        try s3.createBucket("smoke-controls")
        try s3.put(bucket: "smoke-controls", key: "b/two.bin", bytes: patternBytes(7))
        try s3.put(bucket: "smoke-controls", key: "a/one.bin", bytes: patternBytes(3))
        XCTAssertEqual(try s3.keys(bucket: "smoke-controls"), ["a/one.bin", "b/two.bin"])
        XCTAssertEqual(try s3.object(bucket: "smoke-controls", key: "b/two.bin"), patternBytes(7))
        XCTAssertNil(try s3.object(bucket: "smoke-controls", key: "none"))
        XCTAssertEqual(try s3.requests(), [], "the controls are no S3 requests")
    }
}

/// nginx serves byte ranges over TLS to a client that trusts the test's CA, and only to it.
final class HTTPSTestServerTests: HTTPSTestCase {
    func testARangeIsServedToAClientThatTrustsTheCA() throws {
        let bytes = patternBytes(100)
        try bytes.write(to: https.folder.appendingPathComponent("file"))
        let answer = try curl(https.url("file"), ["--cacert", https.caFile, "-r", "10-19"])
        XCTAssertEqual(answer.status, 206, answer.output + https.errorLog)
        XCTAssertEqual(answer.body, bytes[10..<20])
        XCTAssertEqual(answer.headers["content-range"], "bytes 10-19/100")
        XCTAssertNotNil(answer.headers["etag"])
    }

    func testAClientWithoutTheCAFailsVerification() throws {
        try patternBytes(10).write(to: https.folder.appendingPathComponent("file"))
        let answer = try curl(https.url("file"))
        XCTAssertEqual(answer.exit, 60, answer.output)
        XCTAssertEqual(answer.body, Data())
    }

    func testTheRedirectsAndTheUnavailableAnswer() throws {
        try patternBytes(10).write(to: https.folder.appendingPathComponent("file"))
        let trusting = ["--cacert", https.caFile]
        let port = https.port
        for (location, target) in [
            ("redirect-here", "127.0.0.1"), ("redirect-elsewhere", "localhost"), ("redirect-away", "127.0.0.2"),
        ] {
            let answer = try curl(https.url("\(location)/file"), trusting)
            XCTAssertEqual(answer.status, 302)
            XCTAssertEqual(answer.headers["location"], "https://\(target):\(port)/file")
        }
        #if os(Linux)
            let followed = try curl(https.url("redirect-away/file"), trusting + ["-L"])
            XCTAssertEqual(followed.status, 200, followed.output)
            XCTAssertEqual(followed.body, patternBytes(10))
        #endif
        let unavailable = try curl(https.url("unavailable/file"), trusting)
        XCTAssertEqual(unavailable.status, 503)
        XCTAssertEqual(unavailable.headers["retry-after"], "1")
    }
}
