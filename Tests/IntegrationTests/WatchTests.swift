import Foundation
import TestSupport
import VMergeCore
import XCTest

/// `vmerge watch` with real processes and real folders: two watchers on one inbox, a watcher
/// killed or terminated mid-job, a dead worker's empty claim, a file still growing, poison jobs and
/// bad job.json files, --delete-sources. (`vmerge batch` is in BatchTests.)
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
        XCTAssertEqual(entries(inbox), [".done", ".events", ".failed", ".processing"])
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
                $0.hasPrefix("vmerge: watch: failed bad.mov: bad.mov: not a readable video file")
                    && $0.contains("moved to .failed/")
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
        XCTAssertEqual(entries(inbox), [".done", ".events", ".failed", ".processing"])
        XCTAssertEqual(entries(inbox.appendingPathComponent(".done")), [])
        let report =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: outbox.appendingPathComponent("trip.mp4.json"))) as? [String: Any]
        XCTAssertEqual(report?["status"] as? String, "ok")
        XCTAssertEqual((report?["output"] as? [String: Any])?["video_frames"] as? Int, 180)
        let schema = Fixtures.directory.deletingLastPathComponent().appendingPathComponent("schema/report.schema.json")
        XCTAssertEqual(try JSONSchemaValidator(schemaFile: schema.path).validate(report as Any), [])
    }

    /// A job.json's renditions are made with the job and published in the outbox beside its video,
    /// named after the name the video is published under.
    func testAJobJSONsRenditionsArePublishedInTheOutbox() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        try makeJob(inbox, "trip", fixture: "a_", clips: 1)
        try #"{"renditions": ["1x1-720", "4x3-480=web.mp4"]}"#.write(
            to: inbox.appendingPathComponent("trip/job.json"), atomically: true, encoding: .utf8)
        let run = finish(try startWatcher(["in", "--out", "out", "--once"], in: dir))
        XCTAssertEqual(run.status, 0, run.log.joined(separator: "\n"))
        let out = dir.appendingPathComponent("out")
        XCTAssertEqual(entries(out), ["trip-1x1-720.mp4", "trip.mp4", "trip.mp4.json", "web.mp4"])
        for (file, width) in [("trip-1x1-720.mp4", 720), ("web.mp4", 640)] {
            XCTAssertEqual(
                try MediaInspector(path: out.appendingPathComponent(file).path).streams().video?.width, width)
        }
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
