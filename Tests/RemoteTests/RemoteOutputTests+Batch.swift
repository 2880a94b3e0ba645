import Foundation
import TestSupport
import XCTest

/// `vmerge batch --delete-sources` over objects: the batch's one rule across its jobs (an object
/// several jobs name goes only once every one of them merged all of it, deleted by the last),
/// with each DELETE conditional on the version the jobs read, and an object replaced while the
/// batch ran kept.
extension RemoteOutputTests {
    private func put(_ bucket: String, _ objects: [(key: String, fixture: String)]) throws {
        try s3.createBucket(bucket)
        for (key, fixture) in objects {
            try s3.put(bucket: bucket, key: key, bytes: Data(contentsOf: Fixtures.url(fixture)))
        }
    }

    private func batch(_ lines: [String], in folder: URL, _ extra: [String] = [], environment: [String: String]? = nil)
        throws -> RunResult
    {
        try (lines.joined(separator: "\n") + "\n").write(
            to: folder.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        return try VMergeBinary.run(
            ["batch", "jobs.jsonl", "--delete-sources", "--report", "b.json"] + extra, in: folder,
            environment: environment ?? self.environment)
    }

    func testABatchDeletesAnObjectOnlyOnceEveryJobNamingItMergedItWhole() throws {
        try put("batch-delete", [("in/a.mov", "a_"), ("in/c.mov", "c_"), ("in/e.mov", "e_"), ("t/t.mov", "t1_")])
        let folder = try makeScratchDirectory()
        let run = try batch(
            [
                #"{"inputs": ["s3://batch-delete/in/a.mov", "s3://batch-delete/in/c.mov"], "output": "s3://batch-delete/out/ac.mp4"}"#,
                #"{"inputs": ["s3://batch-delete/in/e.mov", "s3://batch-delete/in/a.mov"], "output": "ea.mp4"}"#,
                #"{"inputs": ["s3://batch-delete/t/", "s3://batch-delete/in/c.mov"], "output": "s3://batch-delete/out/tc.mp4"}"#,
                #"{"inputs": [{"path": "s3://batch-delete/t/t.mov", "start": 1, "end": 3.5}], "output": "t.mp4"}"#,
            ], in: folder, ["-j", "2", "--allow-remote", "s3://batch-delete/"])
        XCTAssertEqual(run.status, 0, run.stderr)
        // a: whole in jobs 1 and 2; c: whole in 1 and 3; e: whole in 2; t: whole in 3 (by its
        // prefix), a part in 4.
        XCTAssertEqual(try s3.keys(bucket: "batch-delete"), ["out/ac.mp4", "out/tc.mp4", "t/t.mov"], run.stderr)
        XCTAssertEqual(listing(folder), ["b.json", "ea.mp4", "jobs.jsonl", "t.mp4"])
        XCTAssertTrue(
            run.stderrLines.contains {
                $0.hasPrefix("vmerge: batch: [")
                    && $0.contains(": s3://batch-delete/t/t.mov: kept: only a part of it was merged (--trim)")
            }, run.stderr)
        for name in ["a", "c", "e"] {
            XCTAssertEqual(
                run.stderrLines.filter {
                    $0.hasPrefix("vmerge: batch: [")
                        && $0.hasSuffix(
                            ": s3://batch-delete/in/\(name).mov: deleted (--delete-sources: the output holds all of it)"
                        )
                }.count, 1, run.stderr)
        }
        let deletes = try s3.requests().filter { $0.method == "DELETE" }
        XCTAssertEqual(deletes.map(\.path).sorted(), ["a", "c", "e"].map { "/batch-delete/in/\($0).mov" })
        XCTAssertTrue(deletes.allSatisfy { $0.ifMatch?.isEmpty == false && $0.status == 204 }, "\(deletes)")
        let jobs = try jsonObject(at: folder.appendingPathComponent("b.json"))["jobs"] as? [[String: Any]] ?? []
        let deleted = jobs.flatMap { ($0["report"] as? [String: Any])?["deleted_sources"] as? [String] ?? [] }
        XCTAssertEqual(deleted.sorted(), ["a", "c", "e"].map { "s3://batch-delete/in/\($0).mov" })
    }

    /// Two jobs read an object, and it is replaced between them: each output holds a version of
    /// it, neither holds both, so the object stays (the one there now is the newer one).
    func testAnObjectReplacedBetweenTheJobsThatReadItIsKept() throws {
        try put("batch-replaced", [("in/a.mov", "a_"), ("in/e.mov", "e_")])
        let folder = try makeScratchDirectory()
        let pause = folder.appendingPathComponent("paused").path
        var environment = self.environment
        environment["VMERGE_TEST_PAUSE_AT"] = "after-video"
        environment["VMERGE_TEST_PAUSE_FILE"] = pause
        // At each job's pause: after the first job, a newer recording is put under a.mov.
        let done = DispatchSemaphore(value: 0)
        let stop = StopFlag()
        nonisolated(unsafe) let server = s3!
        DispatchQueue.global().async {
            defer { done.signal() }
            var pauses = 0
            while !stop.isSet {
                guard FileManager.default.fileExists(atPath: pause) else {
                    usleep(20_000)
                    continue
                }
                if pauses == 0 {
                    try? server.put(
                        bucket: "batch-replaced", key: "in/a.mov", bytes: Data(contentsOf: Fixtures.url("c_")))
                }
                pauses += 1
                try? FileManager.default.removeItem(atPath: pause)
            }
        }
        let run = try batch(
            [
                #"{"inputs": ["s3://batch-replaced/in/a.mov", "s3://batch-replaced/in/e.mov"], "output": "ae.mp4"}"#,
                #"{"inputs": ["s3://batch-replaced/in/a.mov"], "output": "a.mp4"}"#,
            ], in: folder, ["-j", "1", "--allow-remote", "s3://batch-replaced/"], environment: environment)
        stop.set()
        done.wait()
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try s3.keys(bucket: "batch-replaced"), ["in/a.mov"], run.stderr)
        XCTAssertEqual(
            try s3.object(bucket: "batch-replaced", key: "in/a.mov"), try Data(contentsOf: Fixtures.url("c_")))
        XCTAssertTrue(
            run.stderrLines.contains(
                "vmerge: batch: [2/2] a: s3://batch-replaced/in/a.mov: kept: it was replaced while the batch ran "
                    + "(its jobs read 2 versions of it)"), run.stderr)
    }
}

/// Set once by the test when the run is over; read by its helper thread.
private final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
