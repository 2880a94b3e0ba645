import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeRemote

/// Uploads of a finished file: whole or not at all, every part checked, retried, and a killed
/// run's multipart upload aborted by the next.
final class S3UploadTests: S3TestCase {
    func client(singlePart: Int64 = 5 << 20, part: Int64 = 5 << 20) throws -> S3Client {
        let client = try S3Client(
            endpoint: S3Endpoint(region: s3.region, custom: s3.endpoint),
            credentials: AWSCredentials(
                accessKeyID: s3.accessKey, secretAccessKey: s3.secretKey, source: "AWS_ACCESS_KEY_ID"),
            retries: RetrySchedule(attempts: 4, base: 0.01, cap: 0.05))
        client.uploadSizes = (singlePart, part)
        return client
    }

    /// A file of `bytes` in a scratch folder, open for reading.
    func file(_ bytes: Data) throws -> (descriptor: Int32, close: () -> Void) {
        let folder = try makeTemporaryFolder("vmerge-upload-test")
        let url = folder.appendingPathComponent("file.mp4")
        try bytes.write(to: url)
        let descriptor = open(url.path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        return (
            descriptor,
            {
                close(descriptor)
                try? FileManager.default.removeItem(at: folder)
            }
        )
    }

    func testAFileGoesUpInCheckedPartsRetriedWhenAPartFails() throws {
        try s3.createBucket("upload-parts")
        let bytes = patternBytes(12 << 20)
        let (descriptor, done) = try file(bytes)
        defer { done() }
        try s3.inject([.status(503, method: "PUT", key: "upload-parts/out.mp4", query: "partNumber=2", times: 1)])
        let target = S3Address(bucket: "upload-parts", key: "out.mp4")
        _ = try client().upload(
            descriptor, length: Int64(bytes.count), to: target, condition: .absent, metadata: ["vmerge-job-key": "k1"])
        XCTAssertEqual(try s3.object(bucket: "upload-parts", key: "out.mp4"), bytes)
        let parts = try s3.requests().filter { $0.method == "PUT" && $0.query.contains("partNumber=") }
        XCTAssertEqual(parts.map(\.status), [200, 503, 200, 200], parts.map(\.query).description)
        XCTAssertEqual(try client().head(target).metadata["vmerge-job-key"], "k1")
        XCTAssertEqual(try uploadsInProgress("upload-parts"), 0)
    }

    func testAFailedUploadLeavesNoObjectAndNoUploadInProgress() throws {
        try s3.createBucket("upload-fails")
        let bytes = patternBytes(11 << 20)
        let (descriptor, done) = try file(bytes)
        defer { done() }
        try s3.inject([.status(500, method: "PUT", key: "upload-fails/out.mp4", query: "partNumber=2", times: 20)])
        XCTAssertThrowsError(
            try client().upload(
                descriptor, length: Int64(bytes.count), to: S3Address(bucket: "upload-fails", key: "out.mp4"),
                condition: .absent))
        XCTAssertEqual(try s3.keys(bucket: "upload-fails"), [])
        XCTAssertEqual(try uploadsInProgress("upload-fails"), 0)
    }

    func testAKilledRunsUploadIsAbortedByTheNextRunOfTheSameOutput() throws {
        try s3.createBucket("upload-killed")
        let client = try client()
        let target = S3Address(bucket: "upload-killed", key: "trip/out.mp4")
        // What a run killed mid-upload leaves: an upload started, a part sent, never completed.
        let start = HTTPRequest(.post, client.endpoint.url(target, query: [("uploads", "")]), signing: client.signing)
        _ = try client.send(start, about: target)
        XCTAssertEqual(try uploadsInProgress("upload-killed"), 1)
        let bytes = patternBytes(6 << 20)
        let (descriptor, done) = try file(bytes)
        defer { done() }
        _ = try client.upload(descriptor, length: Int64(bytes.count), to: target, condition: .absent)
        XCTAssertEqual(try uploadsInProgress("upload-killed"), 0)
        XCTAssertEqual(try s3.object(bucket: "upload-killed", key: "trip/out.mp4"), bytes)
        // The same when the next run's output is small enough for one PUT.
        let small = S3Address(bucket: "upload-killed", key: "trip/small.mp4")
        _ = try client.send(
            HTTPRequest(.post, client.endpoint.url(small, query: [("uploads", "")]), signing: client.signing),
            about: small)
        XCTAssertEqual(try uploadsInProgress("upload-killed"), 1)
        _ = try client.upload(descriptor, length: 1000, to: small, condition: .absent)
        XCTAssertEqual(try uploadsInProgress("upload-killed"), 0)
    }

    func testACutConnectionMidUploadIsTriedAgain() throws {
        try s3.createBucket("upload-cut")
        let bytes = patternBytes(1 << 20)
        let (descriptor, done) = try file(bytes)
        defer { done() }
        // Cut while the body is still going up: the part is sent again, whole.
        try s3.inject([.cutRequest(after: 100_000, method: "PUT", key: "upload-cut/out.mp4", times: 1)])
        _ = try client().upload(
            descriptor, length: Int64(bytes.count), to: S3Address(bucket: "upload-cut", key: "out.mp4"),
            condition: .absent)
        XCTAssertEqual(try s3.object(bucket: "upload-cut", key: "out.mp4"), bytes)
        let puts = try s3.requests().filter { $0.method == "PUT" }
        XCTAssertEqual(puts.count, 2, "the cut PUT and the one after it")
    }

    func testWithOverwriteAnObjectChangedSinceItWasSeenIsNotReplaced() throws {
        try s3.createBucket("upload-changed")
        try s3.put(bucket: "upload-changed", key: "out.mp4", bytes: Data("first".utf8))
        let client = try client()
        let target = S3Address(bucket: "upload-changed", key: "out.mp4")
        let seen = try client.head(target)
        try s3.put(bucket: "upload-changed", key: "out.mp4", bytes: Data("someone else's".utf8))
        let (descriptor, done) = try file(patternBytes(1000))
        defer { done() }
        XCTAssertThrowsError(
            try client.upload(descriptor, length: 1000, to: target, condition: .unchanged(etag: seen.etag))
        ) { error in
            XCTAssertEqual(
                "\(error)", "s3://upload-changed/out.mp4: output changed since it was looked at; not replaced")
        }
        XCTAssertEqual(try s3.object(bucket: "upload-changed", key: "out.mp4"), Data("someone else's".utf8))
    }
}
