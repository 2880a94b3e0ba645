import Foundation
import TestSupport
import XCTest

/// The queue without a shared disk (issue 47): jobs added from a bucket's prefix, run by two
/// workers that share nothing but the database and the object store (each in an empty folder of
/// its own, with its own temporary folder), their outputs published to the bucket.
final class RemoteQueueTests: WorkerTestCase {
    nonisolated(unsafe) static var s3: S3TestServer?

    override class func tearDown() {
        s3?.stop()
        s3 = nil
        super.tearDown()
    }

    func testTwoWorkersSharingNoFolderRunABucketsJobsIntoTheBucket() throws {
        let s3 = try Self.s3 ?? S3TestServer()
        Self.s3 = s3
        try s3.createBucket("queue-trips")
        let days = ["day1", "day2", "day3", "day4"]
        for day in days {
            for clip in ["a_", "b_"] {
                let url = Fixtures.url(clip)
                try s3.put(bucket: "queue-trips", key: "jobs/\(day)/\(url.lastPathComponent)", bytes: Data(contentsOf: url))
            }
        }
        let credentials = [
            "AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey, "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
            "AWS_REGION": s3.region, "AWS_EC2_METADATA_DISABLED": "true",
        ]
        let adder = try makeScratchDirectory()
        let added = try VMergeBinary.run(
            ["queue", "add", "--db", database, "s3://queue-trips/jobs/", "--out", "s3://queue-trips/merged/"], in: adder,
            environment: credentials)
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertTrue(added.stdout.hasSuffix("4 added, 0 already there\n"), added.stdout)
        XCTAssertEqual(listing(adder), [], "the adder made no local folder for the bucket")
        var machines: [(worker: WorkerProcess, home: URL)] = []
        for name in ["w1", "w2"] {
            let home = folder.appendingPathComponent(name)
            let temporary = home.appendingPathComponent("tmp")
            try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
            var environment = credentials
            environment["TMPDIR"] = temporary.path
            let worker = try startWorker(name, ["--once", "--allow-remote", "s3://queue-trips/"], environment: environment, in: home)
            machines.append((worker, home))
        }
        for (worker, _) in machines {
            XCTAssertEqual(worker.waitForExit(seconds: 120), 0, worker.log)
        }
        for id in 1...4 { XCTAssertEqual(row(id)?.state, "done", "job \(id): \(String(describing: row(id)))") }
        XCTAssertEqual(try s3.keys(bucket: "queue-trips").filter { $0.hasPrefix("merged/") }, days.map { "merged/\($0).mp4" })
        for (worker, home) in machines {
            XCTAssertTrue(worker.log.contains(": done -> s3://queue-trips/merged/"), "each worker ran jobs: \(worker.log)")
            XCTAssertEqual(listing(home), ["tmp"], "nothing written beside the worker")
            XCTAssertEqual(listing(home.appendingPathComponent("tmp")), [], "nothing staged or cached is left")
        }
    }
}
