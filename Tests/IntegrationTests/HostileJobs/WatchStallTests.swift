import Foundation
import TestSupport
import XCTest

/// A watcher never stalls silently: a job put back for lack of space is reported under --once
/// and waits while the others go on, a read-only inbox is an error, a removed inbox is watched
/// again once made anew, a status file it cannot keep stops it at start (issue 11, finding 7).
final class WatchStallTests: HostileJobTestCase {
    /// A job put back for lack of space (its job.json asks for more than is free, but
    /// less than the file system holds) is not done: --once exits 1, and the job is back in the
    /// inbox, whole. (Asking for more than the file system holds fails the job at once: JobFileStrictnessTests.)
    func testAJobPutBackForSpaceUnderOnceIsReported() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "big")
        var info = statvfs()
        XCTAssertEqual(statvfs(dir.path, &info), 0)
        let free = UInt64(info.f_bavail) * UInt64(info.f_frsize), total = UInt64(info.f_blocks) * UInt64(info.f_frsize)
        try XCTSkipIf(total - free < 64 << 20, "the file system is nearly empty: nothing between free and total")
        try #"{"options": {"min-free": \#(total - (16 << 20))}}"#.write(
            to: inbox.appendingPathComponent("big/job.json"), atomically: true, encoding: .utf8)
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertTrue(run.lines.contains { $0.contains("big") && $0.contains("back to the inbox") }, run.log)
        XCTAssertTrue(listing(inbox.appendingPathComponent("big")).contains("clip1.mov"), "put back whole")
        XCTAssertEqual(listing(inbox.appendingPathComponent(".processing")), [])
        XCTAssertFalse(listing(dir.appendingPathComponent("out")).contains { $0.hasSuffix(".mp4") })
    }

    /// A job put back for space is not claimed again at once (it used to be claimed
    /// thousands of times a minute, starving the rest); the other jobs are done meanwhile.
    func testAJobPutBackForSpaceWaitsAndOthersGoOn() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "0first")
        _ = try makeJob(inbox, "b")
        var info = statvfs()
        XCTAssertEqual(statvfs(dir.path, &info), 0)
        let free = UInt64(info.f_bavail) * UInt64(info.f_frsize), total = UInt64(info.f_blocks) * UInt64(info.f_frsize)
        try XCTSkipIf(total - free < 64 << 20, "the file system is nearly empty: nothing between free and total")
        try #"{"options": {"min-free": \#(total - (16 << 20))}}"#.write(
            to: inbox.appendingPathComponent("0first/job.json"), atomically: true, encoding: .utf8)
        let (process, err) = try startWatcher([], in: dir)
        // b is done meanwhile, then a few more seconds in which 0first must not be claimed again.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && !listing(dir.appendingPathComponent("out")).contains("b.mp4.json") {
            Thread.sleep(forTimeInterval: 0.05)
        }
        Thread.sleep(forTimeInterval: 3)
        kill(process.processIdentifier, SIGTERM)
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let claims = log.split(separator: "\n").filter { $0.contains("claimed 0first") }.count
        XCTAssertEqual(claims, 1, log)
        XCTAssertTrue(listing(dir.appendingPathComponent("out")).contains("b.mp4"), log)
        XCTAssertTrue(listing(inbox).contains("0first"), "still waiting in the inbox")
    }

    /// A read-only inbox (the claim fails) is an error under --once, not a silent
    /// exit 0. As root, permissions do not stop a write, so the inbox is made a read-only bind
    /// mount (skipped where mounting is not allowed).
    func testAReadOnlyInboxIsReported() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "job")
        for sub in [".processing", ".done", ".failed", ".events"] {
            try FileManager.default.createDirectory(
                at: inbox.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        var mounted = false
        if getuid() == 0 {
            let bind = try runProgram(URL(fileURLWithPath: "/bin/mount"), ["--bind", inbox.path, inbox.path], in: dir)
            let readOnly =
                bind.status == 0
                ? try runProgram(
                    URL(fileURLWithPath: "/bin/mount"), ["-o", "remount,bind,ro", inbox.path, inbox.path], in: dir)
                : bind
            mounted = bind.status == 0
            if mounted && readOnly.status != 0 {
                _ = try runProgram(URL(fileURLWithPath: "/bin/umount"), [inbox.path], in: dir)
            }
            try XCTSkipIf(readOnly.status != 0, "cannot make a read-only bind mount here")
        } else {
            XCTAssertEqual(chmod(inbox.path, 0o555), 0)
        }
        defer {
            if mounted { _ = try? runProgram(URL(fileURLWithPath: "/bin/umount"), [inbox.path], in: dir) }
            chmod(inbox.path, 0o755)
        }
        let run = try watchOnce(dir, timeout: 10)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("vmerge: watch: cannot claim job: ") }, run.log)
    }

    /// An inbox removed and made anew (a redeploy, a cleanup script) is taken up again:
    /// the worker re-creates its folders and does the job that arrives in the new inbox.
    func testAnInboxRemovedAndMadeAnewIsWatchedAgain() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let (process, err) = try startWatcher(["--poll"], in: dir)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let outbox = dir.appendingPathComponent("out")
        // Up and running: its three folders made (.failed is the last).
        XCTAssertTrue(
            waitUntil(10) { FileManager.default.fileExists(atPath: inbox.appendingPathComponent(".failed").path) })
        Thread.sleep(forTimeInterval: 0.5)
        try FileManager.default.removeItem(at: inbox)
        Thread.sleep(forTimeInterval: 2.5)  // at least one look at the missing inbox
        _ = try makeJob(inbox, "again")
        XCTAssertTrue(
            waitUntil(30) { listing(outbox).contains("again.mp4") }, "the job in the new inbox was never done")
        kill(process.processIdentifier, SIGTERM)
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, log)
        XCTAssertTrue(log.contains("disappeared"), log)
        XCTAssertEqual(listing(inbox).filter { $0.hasPrefix(".") }, [".done", ".events", ".failed", ".processing"])
    }

    /// A status file whose folder does not exist stops the watcher at start (not a
    /// watcher that runs for ever without the status it was asked to keep); the command's mistake,
    /// so exit 2.
    func testAStatusFileInAMissingFolderFailsAtStart() throws {
        let dir = try makeScratchDirectory()
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("in"), withIntermediateDirectories: true)
        let run = try vmerge(
            ["watch", "in", "--out", "out", "--status-file", "missing/dir/status.json"], in: dir, timeout: 10)
        XCTAssertFalse(run.timedOut, "still running after 10 s: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertEqual(run.status, 2, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertTrue(
            run.lines.contains { $0.contains("status.json: folder missing/dir does not exist") },
            "names the status file and why: \(run.log)")
    }
}
