import Foundation
import TestSupport
import VMergeCore
import XCTest

/// `vmerge batch` with real processes and real folders: shards, re-runs, job lists with their own
/// options, outputs that collide, a killed batch's temporaries and a malformed job list.
/// (`vmerge watch` is in WatchTests.)
final class BatchTests: XCTestCase {
    private func makeFolderBatch(_ dir: URL, jobs: Int) throws -> URL {
        let root = dir.appendingPathComponent("recordings")
        for j in 1...jobs {
            let folder = root.appendingPathComponent("rec\(j)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for i in 1...2 {
                try FileManager.default.copyItem(
                    atPath: Fixtures.path("l_tiny"), toPath: folder.appendingPathComponent("part\(i).mov").path)
            }
        }
        return root
    }

    private func report(_ url: URL) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    func testShardsCoverEveryJobOnce() throws {
        let dir = try makeScratchDirectory()
        _ = try makeFolderBatch(dir, jobs: 7)
        var seen: [String] = []
        for shard in 0..<3 {
            let run = try VMergeBinary.run(
                [
                    "batch", "recordings", "--out", "out", "--shard", "\(shard)/3", "--min-duration", "0",
                    "--report", "shard\(shard).json",
                ], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
            let r = try report(dir.appendingPathComponent("shard\(shard).json"))
            let jobs = r["jobs"] as? [[String: Any]] ?? []
            XCTAssertEqual(jobs.map { $0["index"] as? Int ?? -1 }.allSatisfy { $0 % 3 == shard }, true)
            XCTAssertTrue(jobs.allSatisfy { $0["status"] as? String == "ok" })
            seen += jobs.compactMap { $0["name"] as? String }
        }
        XCTAssertEqual(seen.sorted(), (1...7).map { "rec\($0)" }.sorted(), "every job once across the shards")
        XCTAssertEqual(listing(dir.appendingPathComponent("out")), (1...7).map { "rec\($0).mp4" }.sorted())
    }

    func testARerunSkipsCompletedJobsAndRedoesChangedOnes() throws {
        let dir = try makeScratchDirectory()
        let root = try makeFolderBatch(dir, jobs: 3)
        let arguments = ["batch", "recordings", "--out", "out", "--min-duration", "0", "-j", "2", "--report", "r.json"]
        let first = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(first.status, 0, first.stderr)
        let out = dir.appendingPathComponent("out")
        let stamp = { (name: String) in
            (try? FileManager.default.attributesOfItem(atPath: out.appendingPathComponent(name).path))?[
                .modificationDate]
                as? Date
        }
        let before = (1...3).map { stamp("rec\($0).mp4") }
        let second = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(second.status, 0, second.stderr)
        let r = try report(dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["skipped"] as? Int, 3)
        XCTAssertEqual(r["succeeded"] as? Int, 0)
        XCTAssertEqual((1...3).map { stamp("rec\($0).mp4") }, before, "outputs untouched")
        // A changed input makes its job due again, but its old output is only replaced with -y: a
        // file holding another key may as well be another job's.
        let part = root.appendingPathComponent("rec2/part1.mov").path
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: part)
        let third = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(third.status, 1, third.stderr)
        XCTAssertTrue(
            third.stderrLines.contains("vmerge: batch: [2/3] rec2: failed: out/rec2.mp4: output exists (use -y to overwrite)"),
            third.stderr)
        XCTAssertEqual(stamp("rec2.mp4"), before[1], "the old output is kept")
        let fourth = try VMergeBinary.run(arguments + ["-y"], in: dir)
        XCTAssertEqual(fourth.status, 0, fourth.stderr)
        let again = try report(dir.appendingPathComponent("r.json"))
        XCTAssertEqual(again["skipped"] as? Int, 2)
        XCTAssertEqual(again["succeeded"] as? Int, 1)
        XCTAssertTrue(fourth.stderrLines.contains { $0.contains("[2/3] rec2: done") }, fourth.stderr)
    }

    func testJobListWithOwnOptionsAndAFailingJob() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_"), c = Fixtures.path("c_"), bad = Fixtures.path("bad_text")
        let lines = [
            #"{"inputs": ["\#(a)", "\#(c)"], "output": "ac.mp4", "options": {"width": 160, "quality": "low"}}"#,
            "# a comment",
            #"{"inputs": ["\#(bad)"], "output": "bad.mp4"}"#,
            #"{"inputs": ["\#(c)"], "output": "c.mp4", "options": {"max-duration": 1}}"#,
        ]
        try lines.joined(separator: "\n").write(
            to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "--report", "-"], in: dir)
        XCTAssertEqual(run.status, 1, "one job failed")
        let r = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let jobs = r["jobs"] as? [[String: Any]] ?? []
        XCTAssertEqual(jobs.map { $0["status"] as? String }, ["ok", "failed", "ok"])
        XCTAssertEqual(listing(dir), ["ac.mp4", "c.mp4", "jobs.jsonl"])
        let ac = try MediaInspector(path: dir.appendingPathComponent("ac.mp4").path).streams()
        XCTAssertEqual(ac.video?.width, 160)
        let cFrames = try MediaInspector(path: dir.appendingPathComponent("c.mp4").path).videoFrames().times
        XCTAssertEqual(cFrames.count, 30, "--max-duration 1 from the job's own options")
        XCTAssertTrue(run.stderrLines.contains { $0.hasPrefix("vmerge: batch: [2/3] bad: failed: ") }, run.stderr)
        // Every job's own report is inside, and valid.
        let schema = Fixtures.directory.deletingLastPathComponent().appendingPathComponent("schema/report.schema.json")
        let validator = try JSONSchemaValidator(schemaFile: schema.path)
        for job in jobs { XCTAssertEqual(validator.validate(job["report"] as Any), []) }
    }

    /// A list in the current folder: its relative names are shown as written in it, in messages and
    /// in the report (`../clips/bad.mov`, not `./../clips/bad.mov`).
    func testAListInTheCurrentFolderShowsItsNamesAsWritten() throws {
        let dir = try makeScratchDirectory()
        let clips = dir.appendingPathComponent("clips")
        let lists = dir.appendingPathComponent("lists")
        for folder in [clips, lists] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(
            atPath: Fixtures.path("l_tiny"), toPath: clips.appendingPathComponent("a.mov").path)
        try Data("not a video".utf8).write(to: clips.appendingPathComponent("bad.mov"))
        try [
            #"{"inputs": ["../clips/a.mov"], "output": "../a.mp4", "options": {"min-duration": 0}}"#,
            #"{"inputs": ["../clips/bad.mov"], "output": "b.mp4"}"#,
        ].joined(separator: "\n").write(
            to: lists.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "-j", "1", "--report", "r.json"], in: lists)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains {
                $0.hasPrefix("vmerge: batch: [2/2] b: failed: ../clips/bad.mov: not a readable video")
            },
            run.stderr)
        XCTAssertFalse(run.stderr.contains("./.."), run.stderr)
        let jobs = try report(lists.appendingPathComponent("r.json"))["jobs"] as? [[String: Any]] ?? []
        let inputs = jobs.map {
            (($0["report"] as? [String: Any])?["inputs"] as? [[String: Any]])?.first?["path"] as? String
        }
        XCTAssertEqual(inputs, ["../clips/a.mov", "../clips/bad.mov"])
        XCTAssertEqual(jobs.map { $0["output"] as? String }, ["../a.mp4", "b.mp4"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("a.mp4").path))
    }

    /// A one-letter name (a list "j", a clip "a", an output "o"): NSString's path operations
    /// trapped on such a name in this toolchain's Foundation, and `vmerge batch j` crashed with a
    /// backtrace (exit 132). Names are cut by FileName, on bytes.
    func testOneLetterNamesAreNamesLikeAnyOther() throws {
        let dir = try makeScratchDirectory()
        try FileManager.default.copyItem(atPath: Fixtures.path("l_tiny"), toPath: dir.appendingPathComponent("a").path)
        try #"{"inputs": ["a"], "output": "o.mp4", "options": {"min-duration": 0}}"#.write(
            to: dir.appendingPathComponent("j"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(["batch", "j"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stderr.contains("crashed"), run.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("o.mp4").path), run.stderr)
        let folderJob = try VMergeBinary.run(["batch", ".", "--out", "m"], in: dir)
        XCTAssertFalse(folderJob.stderr.contains("crashed"), folderJob.stderr)
    }

    func testTwoJobsWithOneOutputAreRefused() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        try [#"{"inputs": ["\#(a)"], "output": "x.mp4"}"#, #"{"inputs": ["\#(a)"], "output": "./x.mp4"}"#]
            .joined(separator: "\n").write(
                to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("line 2: output"), run.stderr)
        XCTAssertEqual(listing(dir), ["jobs.jsonl"])
    }

    func testTheOutputFolderInsideAFolderBatchIsNoJob() throws {
        let dir = try makeScratchDirectory()
        _ = try makeFolderBatch(dir, jobs: 2)
        for _ in 0..<2 {
            let run = try VMergeBinary.run(
                ["batch", "recordings", "--out", "recordings/merged", "--min-duration", "0"], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
        }
        XCTAssertEqual(listing(dir.appendingPathComponent("recordings/merged")), ["rec1.mp4", "rec2.mp4"])
    }

    /// Temporaries of a batch killed on this machine are removed by the next run; those of a
    /// live process (or another machine) are not.
    /// Temporaries nobody holds (their run was killed, here or on another machine) are removed by
    /// the next run; a live one (locked by its writer) is not.
    func testARerunSweepsTheTemporariesOfAKilledBatch() throws {
        let dir = try makeScratchDirectory()
        _ = try makeFolderBatch(dir, jobs: 1)
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let live = try TemporaryFile(beside: out.appendingPathComponent("rec8.mp4").path)
        let stale = ".rec9.mp4.vmerge-somehost-21416-abc.tmp"
        let elsewhere = ".rec7.mp4.vmerge-otherhost-21416-abc.tmp"
        for name in [stale, elsewhere] { try Data([1]).write(to: out.appendingPathComponent(name)) }
        let run = try VMergeBinary.run(["batch", "recordings", "--out", "out", "--min-duration", "0"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains("vmerge: batch: removed 2 temporary files left by a run that was killed"),
            run.stderr)
        XCTAssertEqual(listing(out), [live.name, "rec1.mp4"].sorted())
    }

    func testAMalformedJobListStopsBeforeAnyWork() throws {
        let dir = try makeScratchDirectory()
        try #"{"inputs": ["a.mov"], "output": "x.mp4", "options": {"width": 333}}"#.write(
            to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(
            run.stderrLines,
            ["vmerge: jobs.jsonl: line 1: invalid value '333' for '--width': expected an even number from 16 to 7680"])
    }
}
