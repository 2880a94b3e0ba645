import Foundation
import TestSupport
import XCTest

/// `vmerge ... -o s3://bucket/key.mp4`: the set uploaded poster first and video last, faststart,
/// never over an object it did not look at, a re-run a no-op, nothing staged left behind.
final class RemoteOutputTests: S3TestCase {
    var temporary: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        temporary = try makeTemporaryFolder("vmerge-remote-tmp")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporary)
        try super.tearDownWithError()
    }

    var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey, "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
            "AWS_REGION": s3.region, "TMPDIR": temporary.path,
        ]
    }

    func upload(_ bucket: String) throws {
        try s3.createBucket(bucket)
        for clip in ["a_", "b_"] {
            try s3.put(bucket: bucket, key: "in/" + Fixtures.url(clip).lastPathComponent, bytes: Data(contentsOf: Fixtures.url(clip)))
        }
    }

    func vmerge(_ arguments: [String]) throws -> RunResult {
        try VMergeBinary.run(arguments, in: makeScratchDirectory(), environment: environment)
    }

    func testABucketToBucketMergePublishesThePosterThenTheVideoFaststart() throws {
        try upload("out-set")
        let run = try vmerge(["s3://out-set/in/", "-o", "s3://out-set/trip/day.mp4", "--poster", "day.jpg"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("vmerge: wrote s3://out-set/trip/day.mp4 (2 clips"), run.stderr)
        let video = try XCTUnwrap(try s3.object(bucket: "out-set", key: "trip/day.mp4"))
        let file = temporary.appendingPathComponent("check.mp4")
        try video.write(to: file)
        XCTAssertEqual(try topLevelBoxes(file.path).prefix(2), ["ftyp", "moov"])
        let poster = try XCTUnwrap(try s3.object(bucket: "out-set", key: "trip/day.jpg"))
        XCTAssertEqual(Array(poster.prefix(2)), [0xFF, 0xD8])
        let puts = try s3.requests().filter { $0.method == "PUT" }.map(\.path)
        XCTAssertEqual(puts, ["/out-set/trip/day.jpg", "/out-set/trip/day.mp4"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0 != "check.mp4" }, [], "nothing staged is left")
    }

    func testAnObjectIsNeverReplacedWithoutYesAndARerunIsANoOp() throws {
        try upload("out-exists")
        try s3.put(bucket: "out-exists", key: "theirs.mp4", bytes: Data("someone else's".utf8))
        let refused = try vmerge(["s3://out-exists/in/", "-o", "s3://out-exists/theirs.mp4"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "vmerge: s3://out-exists/theirs.mp4: output exists (use -y to overwrite)\n")
        XCTAssertEqual(try s3.object(bucket: "out-exists", key: "theirs.mp4"), Data("someone else's".utf8))
        XCTAssertEqual(try vmerge(["s3://out-exists/in/", "-o", "s3://out-exists/ours.mp4"]).status, 0)
        try s3.clearRequests()
        let again = try vmerge(["s3://out-exists/in/", "-o", "s3://out-exists/ours.mp4"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("up to date"), again.stderr)
        XCTAssertEqual(try s3.requests().filter { $0.method == "PUT" || $0.method == "POST" }.count, 0)
        let replaced = try vmerge(["s3://out-exists/in/", "-o", "s3://out-exists/theirs.mp4", "-y"])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertNotEqual(try s3.object(bucket: "out-exists", key: "theirs.mp4"), Data("someone else's".utf8))
    }

    func testAFailedVideoUploadTakesItsPosterBackAndSaysWhy() throws {
        try upload("out-fails")
        try s3.inject([.status(500, method: "PUT", key: "out-fails/trip.mp4", times: 50)])
        let run = try vmerge(["s3://out-fails/in/", "-o", "s3://out-fails/trip.mp4", "--poster", "trip.jpg"])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr, "vmerge: s3://out-fails/trip.mp4: the server failed (HTTP 500, InternalError)\n")
        XCTAssertEqual(try s3.keys(bucket: "out-fails").filter { !$0.hasPrefix("in/") }, [])
    }

    func testDeletingSourcesAcrossABucketIsRefusedBeforeAnyWork() throws {
        try upload("out-delete")
        let run = try vmerge(["s3://out-delete/in/", "-o", "s3://out-delete/trip.mp4", "--delete-sources"])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("--delete-sources does not yet delete objects"), run.stderr)
        XCTAssertEqual(try s3.keys(bucket: "out-delete").count, 2)
    }
}
