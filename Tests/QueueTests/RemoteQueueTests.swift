import Foundation
import TestSupport
import VMergeCore
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
                try s3.put(
                    bucket: "queue-trips", key: "jobs/\(day)/\(url.lastPathComponent)", bytes: Data(contentsOf: url))
            }
        }
        let credentials = [
            "AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey,
            "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
            "AWS_REGION": s3.region, "AWS_EC2_METADATA_DISABLED": "true",
        ]
        let adder = try makeScratchDirectory()
        let added = try VMergeBinary.run(
            ["queue", "add", "--db", database, "s3://queue-trips/jobs/", "--out", "s3://queue-trips/merged/"],
            in: adder,
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
            let worker = try startWorker(
                name, ["--once", "--allow-remote", "s3://queue-trips/"], environment: environment, in: home)
            machines.append((worker, home))
        }
        for (worker, _) in machines {
            XCTAssertEqual(worker.waitForExit(seconds: 120), 0, worker.log)
        }
        for id in 1...4 { XCTAssertEqual(row(id)?.state, "done", "job \(id): \(String(describing: row(id)))") }
        XCTAssertEqual(
            try s3.keys(bucket: "queue-trips").filter { $0.hasPrefix("merged/") }, days.map { "merged/\($0).mp4" })
        for (worker, home) in machines {
            XCTAssertTrue(
                worker.log.contains(": done -> s3://queue-trips/merged/"), "each worker ran jobs: \(worker.log)")
            XCTAssertEqual(listing(home), ["tmp"], "nothing written beside the worker")
            XCTAssertEqual(listing(home.appendingPathComponent("tmp")), [], "nothing staged or cached is left")
        }
    }

    /// docs/operators.md's worker Deployment: no volume but the staging one, its command as written
    /// (less the metrics port, which a test cannot take), with keys where the pod's web identity
    /// would give them.
    func testTheWorkerDeploymentRunsAsWrittenAgainstABucket() throws {
        let s3 = try Self.s3 ?? S3TestServer()
        Self.s3 = s3
        let deployment = try XCTUnwrap(
            try readmeManifests().first {
                $0["kind"] as? String == "Deployment" && follow($0, ["metadata", "name"]) as? String == "vmerge-worker"
            })
        let pod = follow(deployment, ["spec", "template", "spec"])
        let volumes = try XCTUnwrap(follow(pod, ["volumes"]) as? [[String: Any]])
        XCTAssertTrue(volumes.allSatisfy { $0["persistentVolumeClaim"] == nil }, "no shared volume: \(volumes)")
        var command = try XCTUnwrap(follow(pod, ["containers", 0, "command"]) as? [String])
        XCTAssertEqual(Array(command.prefix(2)), ["vmerge", "worker"])
        let allowed = try XCTUnwrap(command.firstIndex(of: "--allow-remote").map { command[$0 + 1] })
        let bucket = try XCTUnwrap(S3Address(allowed)?.bucket)
        if let metrics = command.firstIndex(of: "--metrics-listen") { command.removeSubrange(metrics...metrics + 1) }
        try s3.createBucket(bucket)
        for clip in ["a_", "b_"] {
            let url = Fixtures.url(clip)
            try s3.put(bucket: bucket, key: "uploads/day1/\(url.lastPathComponent)", bytes: Data(contentsOf: url))
        }
        var environment = [
            "AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey,
            "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
            "AWS_EC2_METADATA_DISABLED": "true",
        ]
        for variable in try XCTUnwrap(follow(pod, ["containers", 0, "env"]) as? [[String: Any]]) {
            if let name = variable["name"] as? String, let value = variable["value"] as? String {
                environment[name] = value
            }
        }
        let added = try VMergeBinary.run(
            ["queue", "add", "--db", database, "s3://\(bucket)/uploads/", "--out", "s3://\(bucket)/merged/"],
            in: folder,
            environment: environment)
        XCTAssertEqual(added.status, 0, added.stderr)
        environment["VMERGE_DB"] = database
        let worker = try WorkerProcess(
            Array(command.dropFirst()) + ["--once", "--name", "pod"], log: folder.appendingPathComponent("pod.log"),
            environment: environment, in: folder)
        workers.append(worker)
        XCTAssertEqual(worker.waitForExit(seconds: 120), 0, worker.log)
        XCTAssertEqual(try s3.keys(bucket: bucket).filter { $0.hasPrefix("merged/") }, ["merged/day1.mp4"])
    }
}
