import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeJobs
@testable import VMergeRemote

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

    /// A bucket's jobs are a prefix: one named without its '/' is not read as a local job list.
    func testABatchOfAPrefixWithoutItsSlashSaysWhatABatchOfABucketIs() throws {
        let run = try VMergeBinary.run(
            ["batch", "s3://batch-slash/trips", "--out", "out"], in: makeScratchDirectory(), environment: environment)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(
            run.stderrLines,
            [
                "vmerge: s3://batch-slash/trips: a batch of a bucket is a prefix ending in '/' (each prefix under it a "
                    + "job); a job list is a local file"
            ])
    }

    /// The batch's rule in process (`BatchDeletion`), in the order a race gives: an object put
    /// under a prefix after the batch looked is read by the first job to end, and still named
    /// (by the prefix) by a job that is running; it waits for that job, then goes.
    func testAnObjectUnderARunningJobsPrefixWaitsForIt() throws {
        try put("batch-cover", [("t/a.mov", "a_"), ("d/d.mov", "e_")])
        let saved = environment.keys.map { ($0, ProcessInfo.processInfo.environment[$0]) }
        for (name, value) in environment where name != "TMPDIR" { setenv(name, value, 1) }
        defer { for (name, value) in saved { if let value { setenv(name, value, 1) } else { unsetenv(name) } } }
        let job = { (name: String, inputs: [String]) -> Job in
            var job = Job(name: name, inputs: inputs.map { JobInput(FileName($0)) }, output: FileName(name + ".mp4"))
            job.deleteSources = true
            job.remoteAccess = RemoteAccess(listed: [RemoteName("s3://batch-cover/")!])
            return job
        }
        let jobs = [
            job("b", ["s3://batch-cover/t/"]), job("d", ["s3://batch-cover/d/d.mov", "s3://batch-cover/t/"]),
        ]
        let deletion = BatchDeletion(jobs: jobs, shard: [0, 1], hooks: MergeHooks())
        // Put there after the batch looked: only the prefix says job d may use it.
        try s3.put(bucket: "batch-cover", key: "t/x.mov", bytes: Data(contentsOf: Fixtures.url("c_")))
        let inputs = RemoteInputs(connector: RemoteConnector(environment: environment))
        let names = ["s3://batch-cover/t/a.mov", "s3://batch-cover/t/x.mov", "s3://batch-cover/d/d.mov"]
        _ = try inputs.resolve(names.map { JobInput(FileName($0)) })
        let ledger = { (read: [String]) in
            SourceLedger(
                entries: read.map {
                    var entry = SourceLedger.Entry(path: $0, id: nil)
                    entry.object = inputs.version(named: $0)
                    return entry
                })
        }
        let lines = LinesSink()
        let first = deletion.finish(0, ledger: ledger(Array(names.prefix(2))), failed: nil) { _ in lines.sink }
        XCTAssertEqual(first.deleted, [], "job d, still running, names both under its prefix")
        XCTAssertEqual(try s3.keys(bucket: "batch-cover"), ["d/d.mov", "t/a.mov", "t/x.mov"])
        let last = deletion.finish(1, ledger: ledger(names), failed: nil) { _ in lines.sink }
        XCTAssertEqual(last.deleted, names.sorted())
        XCTAssertEqual(try s3.keys(bucket: "batch-cover"), [])
        XCTAssertTrue(deletion.settle { _ in lines.sink }.kept.isEmpty)
    }

    /// A job that may use an object by its prefix and fails keeps it for all, and every job that
    /// merged it says why in its report; one whose DELETE's answer was lost counts it deleted.
    func testAPrefixJobThatFailsKeepsItsObjectsAndALostDeleteAnswerIsADeletion() throws {
        try put("batch-failed", [("t/a.mov", "a_"), ("e.mov", "e_")])
        let folder = try makeScratchDirectory()
        try s3.inject([.dropAnswer(method: "DELETE", key: "e.mov")])
        let run = try batch(
            [
                #"{"inputs": ["s3://batch-failed/t/a.mov", "s3://batch-failed/e.mov"], "output": "ae.mp4"}"#,
                #"{"inputs": ["s3://batch-failed/t/", "s3://batch-failed/missing.mov"], "output": "t.mp4"}"#,
            ], in: folder, ["-j", "1", "--allow-remote", "s3://batch-failed/"])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(try s3.keys(bucket: "batch-failed"), ["t/a.mov"], run.stderr)
        let reason = "kept: job 2 (t) uses it too and failed"
        XCTAssertTrue(
            run.stderrLines.contains("vmerge: batch: [2/2] t: s3://batch-failed/t/a.mov: \(reason)"), run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains(
                "vmerge: batch: [1/2] ae: s3://batch-failed/e.mov: deleted (--delete-sources: the output holds all of it)"
            ),
            run.stderr)
        // The first DELETE did it; its answer was lost, and the retry found nothing.
        XCTAssertEqual(try s3.requests().filter { $0.method == "DELETE" }.map(\.status), [204, 404])
        let jobs = try jsonObject(at: folder.appendingPathComponent("b.json"))["jobs"] as? [[String: Any]] ?? []
        let report = jobs.first?["report"] as? [String: Any] ?? [:]
        XCTAssertEqual(report["deleted_sources"] as? [String], ["s3://batch-failed/e.mov"])
        let kept = report["kept_sources"] as? [[String: Any]] ?? []
        XCTAssertEqual(kept.map { $0["path"] as? String }, ["s3://batch-failed/t/a.mov"])
        XCTAssertEqual(kept.map { $0["reason"] as? String }, [reason])
    }
}

/// Set once by the test when the run is over; read by its helper thread.
private final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// Collects a sink's lines, for an in-process test.
private final class LinesSink: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var sink: DiagnosticSink { DiagnosticSink { [self] diagnostic in lock.withLock { lines.append(diagnostic.text) } } }
}
