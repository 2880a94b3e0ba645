import Foundation
import TestSupport
import VMergeCore
import XCTest

/// `vmerge watch` and `vmerge batch` with real processes and real folders.
final class WatchTests: XCTestCase {
    private func entries(_ folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// An inbox job folder: `clips` copies of a fixture and the .ready marker.
    private func makeJob(_ inbox: URL, _ name: String, fixture: String = "l_tiny", clips: Int = 2) throws {
        let folder = inbox.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for i in 0..<clips {
            try FileManager.default.copyItem(
                atPath: Fixtures.path(fixture), toPath: folder.appendingPathComponent("clip\(i + 1).mov").path)
        }
        try Data().write(to: folder.appendingPathComponent(".ready"))
    }

    private func startWatcher(_ arguments: [String], in dir: URL) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = VMergeBinary.url
        process.arguments = ["watch"] + arguments
        process.currentDirectoryURL = dir
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return (process, err)
    }

    private func finish(_ watcher: (Process, Pipe)) -> (status: Int32, log: [String]) {
        let text = String(decoding: watcher.1.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watcher.0.waitUntilExit()
        return (watcher.0.terminationStatus, text.split(separator: "\n").map(String.init))
    }

    private func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }

    func testTwoWatchersOnOneInboxDoEachJobExactlyOnce() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        let names = (1...20).map { "job\($0)" }
        for name in names { try makeJob(inbox, name) }
        let arguments = ["in", "--out", "out", "--once", "--min-duration", "0"]
        let first = try startWatcher(arguments, in: dir)
        let second = try startWatcher(arguments, in: dir)
        let a = finish(first), b = finish(second)
        XCTAssertEqual(a.status, 0, a.log.joined(separator: "\n"))
        XCTAssertEqual(b.status, 0, b.log.joined(separator: "\n"))
        let done = (a.log + b.log).filter { $0.hasPrefix("vmerge: watch: done ") }
            .map { $0.split(separator: " ")[3] }.map(String.init)
        XCTAssertEqual(done.sorted(), names.sorted(), "every job done once, by one of the two")
        // Each says what it watches, first, and what it did, last.
        for log in [a.log, b.log] {
            XCTAssertEqual(
                log.first,
                "vmerge: watch: watching in (a folder with .ready or a job.json, or a video file unchanged for 5 s) "
                    + "into out, one job at a time; the jobs ready now, then stopping")
            let count = log.filter { $0.hasPrefix("vmerge: watch: done ") }.count
            XCTAssertEqual(log.last, "vmerge: watch: stopped: \(count) done, 0 failed")
        }
        XCTAssertEqual(entries(outbox), names.flatMap { ["\($0).mp4", "\($0).mp4.json"] }.sorted())
        XCTAssertEqual(entries(inbox.appendingPathComponent(".done")).count, 20)
        XCTAssertEqual(entries(inbox.appendingPathComponent(".processing")), [])
        XCTAssertEqual(entries(inbox.appendingPathComponent(".failed")), [])
        XCTAssertEqual(entries(inbox), [".done", ".failed", ".processing"])
        let frames = try MediaInspector(path: outbox.appendingPathComponent("job7.mp4").path).videoFrames().times
        XCTAssertEqual(frames.count, 6, "two 0.1 s clips at 30 fps")
        print(
            "two watchers: \(a.log.filter { $0.contains(": done ") }.count) and "
                + "\(b.log.filter { $0.contains(": done ") }.count) jobs")
    }

    /// SIGKILL mid-merge, then a restart: the job completes, nothing is lost, no temporary file
    /// is left, and --delete-sources deletes only after the output is published.
    func testAWorkerKilledMidMergeIsRecoveredOnRestart() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        try makeJob(inbox, "long", fixture: "b_", clips: 40)
        let arguments = ["in", "--out", "out", "--delete-sources"]
        let watcher = try startWatcher(arguments, in: dir)
        let started = waitFor(60) { entries(outbox).contains { $0.hasSuffix(".tmp") } }
        XCTAssertTrue(started, "the merge never started")
        Thread.sleep(forTimeInterval: 0.3)
        kill(watcher.0.processIdentifier, SIGKILL)
        _ = finish(watcher)
        XCTAssertEqual(watcher.0.terminationReason, .uncaughtSignal)
        let claims = entries(inbox.appendingPathComponent(".processing")).filter { !$0.hasPrefix(".") }
        XCTAssertEqual(claims.count, 1, "the job is still claimed by the dead worker")
        let claimed = inbox.appendingPathComponent(".processing/\(claims.first ?? "")")
        XCTAssertEqual(entries(claimed).filter { $0.hasSuffix(".mov") }.count, 40, "sources still there")
        XCTAssertFalse(entries(outbox).contains("long.mp4"))

        let restart = finish(try startWatcher(arguments + ["--once"], in: dir))
        XCTAssertEqual(restart.status, 0, restart.log.joined(separator: "\n"))
        XCTAssertTrue(restart.log.contains { $0.contains("recovered long@") }, restart.log.joined(separator: "\n"))
        XCTAssertEqual(entries(outbox), ["long.mp4", "long.mp4.json"], "published, no temporary file left")
        XCTAssertEqual(entries(inbox.appendingPathComponent(".processing")), [], "claim and lock file gone")
        XCTAssertEqual(entries(inbox.appendingPathComponent(".done")), [], "sources deleted (--delete-sources)")
        let frames = try MediaInspector(path: outbox.appendingPathComponent("long.mp4").path).videoFrames().times
        XCTAssertEqual(frames.count, 3000, "40 x 2.5 s at 30 fps")
    }

    func testAGrowingFileIsNotPickedUpBeforeItSettles() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let watcher = try startWatcher(["in", "--out", "out", "--settle", "1.5"], in: dir)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("a_")))
        let target = inbox.appendingPathComponent("grow.mov")
        _ = FileManager.default.createFile(atPath: target.path, contents: nil)
        let handle = try FileHandle(forWritingTo: target)
        // Written in four parts over three seconds: each pause is shorter than --settle.
        let parts = 4
        for i in 0..<parts {
            let range = (bytes.count * i / parts)..<(bytes.count * (i + 1) / parts)
            handle.write(bytes.subdata(in: range))
            if i < parts - 1 {
                Thread.sleep(forTimeInterval: 1.0)
                XCTAssertTrue(FileManager.default.fileExists(atPath: target.path), "taken while still growing")
            }
        }
        try handle.close()
        let published = waitFor(20) { entries(outbox).contains("grow.mp4.json") }
        kill(watcher.0.processIdentifier, SIGTERM)
        let result = finish(watcher)
        XCTAssertTrue(published, result.log.joined(separator: "\n"))
        XCTAssertEqual(result.status, 0, "a SIGTERM stops a watcher cleanly")
        XCTAssertEqual(entries(inbox.appendingPathComponent(".failed")), [])
        let frames = try MediaInspector(path: outbox.appendingPathComponent("grow.mp4").path).videoFrames().times
        XCTAssertEqual(frames.count, 90, "the whole 3 s file, not a part of it")
    }

    func testAPoisonJobLandsInFailedWithAReasonAndIsNotRetried() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let bad = inbox.appendingPathComponent("bad.mov")
        try FileManager.default.copyItem(atPath: Fixtures.path("bad_text"), toPath: bad.path)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: bad.path)
        let first = finish(try startWatcher(["in", "--out", "out", "--once"], in: dir))
        XCTAssertEqual(first.status, 1, "--once reports the failure")
        let failed = entries(inbox.appendingPathComponent(".failed"))
        XCTAssertEqual(failed.count, 2, "the job's folder and its error note beside it")
        let claim = failed.first { !$0.hasSuffix(".error.json") } ?? ""
        let folder = inbox.appendingPathComponent(".failed/\(claim)")
        XCTAssertEqual(entries(folder), ["bad.mov"], "the source is kept, and nothing is written into it")
        let note = try JSONSerialization.jsonObject(
            with: Data(contentsOf: inbox.appendingPathComponent(".failed/\(claim).error.json")))
        let error = (note as? [String: Any])?["error"] as? String ?? ""
        XCTAssertTrue(
            error.hasSuffix(
                "bad.mov: not a readable video file (unknown format, or a recording cut off before it was finalised)"),
            error)
        // The line names the file as the job's, not by the .processing path it has left.
        XCTAssertTrue(
            first.log.contains {
                $0.hasPrefix("vmerge: watch: failed bad.mov: bad.mov: not a readable video file") && $0.contains("moved to .failed/")
            }, first.log.joined(separator: "\n"))
        XCTAssertFalse(first.log.contains { $0.contains(".processing/") }, first.log.joined(separator: "\n"))
        let second = finish(try startWatcher(["in", "--out", "out", "--once"], in: dir))
        XCTAssertEqual(second.status, 0)
        // Nothing left to do: a poison job never loops (the start and stop lines alone).
        XCTAssertEqual(second.log.count, 2, second.log.joined(separator: "\n"))
        XCTAssertEqual(second.log.last, "vmerge: watch: stopped: 0 done, 0 failed")
        XCTAssertEqual(entries(inbox.appendingPathComponent(".failed")), failed)
    }

    func testDeleteSourcesAfterPublishingAndReportBesideTheOutput() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        try makeJob(inbox, "trip", fixture: "a_", clips: 2)
        let run = finish(try startWatcher(["in", "--out", "out", "--once", "--delete-sources"], in: dir))
        XCTAssertEqual(run.status, 0, run.log.joined(separator: "\n"))
        XCTAssertEqual(entries(inbox), [".done", ".failed", ".processing"])
        XCTAssertEqual(entries(inbox.appendingPathComponent(".done")), [])
        let report =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: outbox.appendingPathComponent("trip.mp4.json"))) as? [String: Any]
        XCTAssertEqual(report?["status"] as? String, "ok")
        XCTAssertEqual((report?["output"] as? [String: Any])?["video_frames"] as? Int, 180)
        let schema = Fixtures.directory.deletingLastPathComponent().appendingPathComponent("schema/report.schema.json")
        XCTAssertEqual(try JSONSchemaValidator(schemaFile: schema.path).validate(report as Any), [])
    }

    func testABadJobJSONFailsTheJobNotTheWorker() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        try makeJob(inbox, "wide", fixture: "a_", clips: 1)
        try #"{"options": {"width": 1e300}}"#.write(
            to: inbox.appendingPathComponent("wide/job.json"), atomically: true, encoding: .utf8)
        try makeJob(inbox, "fine", fixture: "a_", clips: 1)
        let run = finish(try startWatcher(["in", "--out", "out", "--once"], in: dir))
        XCTAssertEqual(run.status, 1, run.log.joined(separator: "\n"))
        // The command line's own check and wording, not a crash.
        XCTAssertTrue(
            run.log.contains {
                $0.hasPrefix(
                    "vmerge: watch: failed wide: job.json: invalid value '1e+300' for '--width': "
                        + "expected an even number from 16 to 7680; moved to .failed/wide@")
            },
            run.log.joined(separator: "\n"))
        XCTAssertEqual(entries(dir.appendingPathComponent("out")), ["fine.mp4", "fine.mp4.json"])
        XCTAssertEqual(entries(inbox.appendingPathComponent(".failed")).count, 2, "the job and its note")
    }

    /// A worker that died after making a loose file's claim folder but before moving the file in
    /// took nothing: the empty claim is cleared and the file processed normally.
    func testAnEmptyClaimOfADeadWorkerIsCleared() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let processing = inbox.appendingPathComponent(".processing")
        try FileManager.default.createDirectory(
            at: processing.appendingPathComponent("clip.mov@deadhost-1-x"), withIntermediateDirectories: true)
        try Data().write(to: processing.appendingPathComponent(".clip.mov@deadhost-1-x.lock"))
        let clip = inbox.appendingPathComponent("clip.mov")
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: clip.path)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: clip.path)
        let run = finish(try startWatcher(["in", "--out", "out", "--once"], in: dir))
        XCTAssertEqual(run.status, 0, run.log.joined(separator: "\n"))
        XCTAssertEqual(entries(processing), [])
        XCTAssertEqual(entries(inbox.appendingPathComponent(".failed")), [])
        XCTAssertEqual(entries(dir.appendingPathComponent("out")), ["clip.mp4", "clip.mp4.json"])
    }

    func testSIGTERMMidJobPutsTheJobBackAndExitsCleanly() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        try makeJob(inbox, "long", fixture: "b_", clips: 40)
        let watcher = try startWatcher(["in", "--out", "out", "--status-file", "status.json"], in: dir)
        XCTAssertTrue(waitFor(60) { entries(outbox).contains { $0.hasSuffix(".tmp") } }, "the merge never started")
        let status = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("status.json")))
        XCTAssertEqual((status as? [String: Any])?["state"] as? String, "working")
        XCTAssertEqual((status as? [String: Any])?["job"] as? String, "long")
        kill(watcher.0.processIdentifier, SIGTERM)
        let result = finish(watcher)
        XCTAssertEqual(result.status, 0, result.log.joined(separator: "\n"))
        XCTAssertEqual(entries(outbox), [], "no output, no temporary file")
        XCTAssertTrue(entries(inbox).contains("long"), "the job is back in the inbox")
        XCTAssertEqual(entries(inbox.appendingPathComponent("long")).filter { $0.hasSuffix(".mov") }.count, 40)
        XCTAssertEqual(entries(inbox.appendingPathComponent(".processing")), [])
        XCTAssertTrue(
            result.log.contains("vmerge: watch: stopped: long put back in the inbox"),
            result.log.joined(separator: "\n"))
    }
}

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
