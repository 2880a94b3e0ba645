import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeRemote

/// vmerge's S3 requests, signed by libcurl, against the S3 server that checks signatures.
final class S3ClientTests: S3TestCase {
    func client(secret: String? = nil, key: String? = nil, source: String = "AWS_ACCESS_KEY_ID", attempts: Int = 5)
        throws -> S3Client
    {
        let credentials = AWSCredentials(
            accessKeyID: key ?? s3.accessKey, secretAccessKey: secret ?? s3.secretKey, source: source)
        return try S3Client(
            endpoint: S3Endpoint(region: s3.region, custom: s3.endpoint), credentials: credentials,
            retries: RetrySchedule(attempts: attempts, base: 0.01, cap: 0.05))
    }

    func address(_ text: String) -> S3Address { S3Address(text)! }

    func testHeadAndARangedReadGiveTheObjectsSizeAndExactlyTheBytesAsked() throws {
        try s3.createBucket("client-read")
        let bytes = patternBytes(100_000)
        try s3.put(bucket: "client-read", key: "trip/a b+ç.mov", bytes: bytes)
        let object = try client().head(address("s3://client-read/trip/a b+ç.mov"))
        XCTAssertEqual(object.size, 100_000)
        XCTAssertFalse(object.etag.isEmpty)
        var got = Data()
        try client().read(address("s3://client-read/trip/a b+ç.mov"), range: 1000..<1100, ifMatch: object.etag) {
            got.append(contentsOf: $0)
            return true
        }
        XCTAssertEqual(got, bytes[1000..<1100])
        XCTAssertEqual(try s3.requests().last?.range, "bytes=1000-1099")
    }

    func testAWrongSecretAnUnknownKeyAndAMissingPermissionAreSaidApartAndNameTheirSource() throws {
        try s3.createBucket("client-refused")
        try s3.put(bucket: "client-refused", key: "k", bytes: patternBytes(10))
        let target = address("s3://client-refused/k")
        let wrongSecret = s3.secretKey + "x"
        XCTAssertThrowsError(try client(secret: wrongSecret, source: "AWS_PROFILE=ci").head(target)) { error in
            XCTAssertEqual(
                "\(error)", "s3://client-refused/k: the secret key was refused (credentials from AWS_PROFILE=ci)")
        }
        XCTAssertThrowsError(try client(key: "AKIAVMERGENOSUCHKEY0").head(target)) { error in
            XCTAssertEqual(
                "\(error)",
                "s3://client-refused/k: the access key is not known to the server (credentials from AWS_ACCESS_KEY_ID)")
        }
        XCTAssertThrowsError(try client(secret: s3.deniedSecretKey, key: s3.deniedAccessKey).head(target)) { error in
            XCTAssertEqual("\(error)", "s3://client-refused/k: access denied (credentials from AWS_ACCESS_KEY_ID)")
            XCTAssertFalse("\(error)".contains(self.s3.deniedSecretKey))
        }
    }

    func testMissingObjectsAndBucketsAreSaidSo() throws {
        try s3.createBucket("client-missing")
        XCTAssertThrowsError(try client().head(address("s3://client-missing/none.mov"))) { error in
            XCTAssertEqual((error as? S3Failure)?.kind, .noSuchObject, "\(error)")
            XCTAssertEqual("\(error)", "s3://client-missing/none.mov: no such object")
        }
        XCTAssertThrowsError(try client().list(address("s3://client-nobucket/trip/"))) { error in
            XCTAssertEqual("\(error)", "s3://client-nobucket/trip/: no such bucket")
        }
    }

    func testAWriteNeverReplacesAnObjectAndReplacesOnlyTheOneSeen() throws {
        try s3.createBucket("client-write")
        let target = address("s3://client-write/out.mp4")
        let first = try client().put(target, bytes: Data("first".utf8), condition: .absent)
        XCTAssertThrowsError(try client().put(target, bytes: Data("second".utf8), condition: .absent)) { error in
            XCTAssertEqual((error as? S3Failure)?.kind, .exists, "\(error)")
        }
        XCTAssertEqual(try s3.object(bucket: "client-write", key: "out.mp4"), Data("first".utf8))
        try s3.put(bucket: "client-write", key: "out.mp4", bytes: Data("someone else".utf8))
        XCTAssertThrowsError(
            try client().put(target, bytes: Data("third".utf8), condition: .unchanged(etag: first))
        ) { error in
            XCTAssertEqual((error as? S3Failure)?.kind, .preconditionFailed, "\(error)")
        }
        XCTAssertEqual(try s3.object(bucket: "client-write", key: "out.mp4"), Data("someone else".utf8))
        let seen = try client().head(target).etag
        try client().put(target, bytes: Data("fourth".utf8), condition: .unchanged(etag: seen))
        XCTAssertEqual(try s3.object(bucket: "client-write", key: "out.mp4"), Data("fourth".utf8))
    }

    func testAListingIsThePrefixsObjectsInKeyOrder() throws {
        try s3.createBucket("client-list")
        for key in ["trip/b.mov", "trip/a.mov", "trip/sub/c.mov", "other/d.mov"] {
            try s3.put(bucket: "client-list", key: key, bytes: patternBytes(3))
        }
        let keys = try client().list(address("s3://client-list/trip/")).map(\.address.key)
        XCTAssertEqual(keys, ["trip/a.mov", "trip/b.mov", "trip/sub/c.mov"])
    }

    func testThrottlingAndServerErrorsAreTriedAgainAndThenGiveUp() throws {
        try s3.createBucket("client-retry")
        try s3.put(bucket: "client-retry", key: "k", bytes: patternBytes(50))
        try s3.inject([
            .status(503, method: "GET", key: "client-retry/k", times: 1),
            .status(500, method: "GET", key: "client-retry/k", times: 1),
        ])
        var got = Data()
        try client().read(address("s3://client-retry/k"), range: 0..<50, ifMatch: nil) {
            got.append(contentsOf: $0)
            return true
        }
        XCTAssertEqual(got, patternBytes(50))
        XCTAssertEqual(try s3.requests().filter { $0.method == "GET" }.map(\.status), [503, 500, 206])
        try s3.inject([.status(500, method: "GET", key: "client-retry/k", times: 10)])
        XCTAssertThrowsError(
            try client(attempts: 3).read(address("s3://client-retry/k"), range: 0..<5, ifMatch: nil) { _ in true }
        ) { error in
            XCTAssertEqual("\(error)", "s3://client-retry/k: the server failed (HTTP 500, InternalError)")
        }
    }

    func testAnEndpointThatIsNotThereIsSaidInALine() throws {
        let dead = try S3Client(
            endpoint: S3Endpoint(region: "us-east-1", custom: URL(string: "http://127.0.0.1:9")!),
            credentials: AWSCredentials(accessKeyID: "a", secretAccessKey: "b", source: "AWS_ACCESS_KEY_ID"),
            retries: RetrySchedule(attempts: 2, base: 0.01, cap: 0.02))
        XCTAssertThrowsError(try dead.head(address("s3://b-u-c/k"))) { error in
            XCTAssertTrue("\(error)".hasPrefix("s3://b-u-c/k: "), "\(error)")
            XCTAssertFalse("\(error)".contains("\n"))
        }
    }
}
