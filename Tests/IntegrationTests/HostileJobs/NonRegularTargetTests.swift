import Foundation
import TestSupport
import XCTest

/// An output or a report that is a symbolic link, a FIFO, a folder or a device is refused before
/// any work, or fails its job, without hanging and without writing through it (issue 11,
/// findings 1b, 1c, 5 and 6).
final class NonRegularTargetTests: HostileJobTestCase {
    /// --report naming a symlink to the victim is refused before any work.
    func testAReportThatIsASymlinkIsRefused() throws {
        let dir = try makeScratchDirectory()
        let victim = try makeVictim(dir)
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let report = dir.appendingPathComponent("r.json")
        try symlink(report, to: victim.url)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--report", "r.json", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["r.json"], saying: "is a symbolic link")
        assertUntouched(victim)
        XCTAssertEqual(fileType(report), S_IFLNK, "the link is still a link")
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind")
    }

    /// -o naming a symlink to the victim is refused (without -y).
    func testAnOutputThatIsASymlinkIsRefused() throws {
        let dir = try makeScratchDirectory()
        let victim = try makeVictim(dir)
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let out = dir.appendingPathComponent("out.mp4")
        try symlink(out, to: victim.url)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["out.mp4"], saying: "is a symbolic link")
        assertUntouched(victim)
        XCTAssertEqual(fileType(out), S_IFLNK, "the link is still a link")
    }

    /// -o naming a symlink to the victim is refused even with -y.
    func testAnOutputThatIsASymlinkIsRefusedEvenWithOverwrite() throws {
        let dir = try makeScratchDirectory()
        let victim = try makeVictim(dir)
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let out = dir.appendingPathComponent("out.mp4")
        try symlink(out, to: victim.url)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "-y", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["out.mp4"], saying: "is a symbolic link")
        assertUntouched(victim)
        XCTAssertEqual(fileType(out), S_IFLNK, "the link is still a link")
    }

    /// -o naming a FIFO is refused at once (no open that blocks), FIFO kept.
    func testAnOutputThatIsAFIFOIsRefusedWithoutHanging() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let fifo = dir.appendingPathComponent("out.mp4")
        try makeFIFO(fifo)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--min-duration", "0"], in: dir, timeout: 20)
        assertRefused(run, naming: ["out.mp4"], saying: "is a FIFO")
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
    }

    /// -y does not make a FIFO a replaceable output either.
    func testAnOutputThatIsAFIFOIsRefusedEvenWithOverwrite() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let fifo = dir.appendingPathComponent("out.mp4")
        try makeFIFO(fifo)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "-y", "--min-duration", "0"], in: dir, timeout: 20)
        assertRefused(run, naming: ["out.mp4"], saying: "is a FIFO")
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
    }

    /// --report naming a FIFO is refused before any work, without hanging.
    func testAReportThatIsAFIFOIsRefusedWithoutHanging() throws {
        let dir = try makeScratchDirectory()
        let fifo = dir.appendingPathComponent("r.json")
        try makeFIFO(fifo)
        let run = try mergeTinyClip(["--report", "r.json"], in: dir)
        assertRefused(run, naming: ["r.json"], saying: "is a FIFO")
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind")
    }

    /// A report that cannot be written as a regular file (a directory) fails the run
    /// before an output is published.
    func testAReportThatIsAFolderLeavesNoOutput() throws {
        let dir = try makeScratchDirectory()
        let folder = dir.appendingPathComponent("rdir")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let run = try mergeTinyClip(["--report", "rdir"], in: dir)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertNotEqual(run.status, 0, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertTrue(run.lines.contains { $0.contains("'--report rdir' names a folder") }, run.log)
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind: \(run.log)")
        XCTAssertEqual(fileType(folder), S_IFDIR)
        XCTAssertEqual(listing(folder), [])
    }

    /// --report /dev/fd/3 (not a regular file, and fd 3 is not open in the child)
    /// fails the run before an output is published.
    func testAReportOnADeviceFileDescriptorPathLeavesNoOutput() throws {
        let dir = try makeScratchDirectory()
        let run = try mergeTinyClip(["--report", "/dev/fd/3"], in: dir)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertNotEqual(run.status, 0, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertTrue(
            run.lines.contains { $0.hasPrefix("vmerge: /dev/fd/3: cannot write the report") }, "says why: \(run.log)")
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind: \(run.log)")
    }

    /// --report naming a character device (a private copy of /dev/null, made with
    /// mknod; root only) is refused, and the device stays a device.
    func testAReportThatIsACharacterDeviceIsRefused() throws {
        try XCTSkipIf(getuid() != 0, "mknod needs root")
        let dir = try makeScratchDirectory()
        let device = dir.appendingPathComponent("null")
        let made = try runProgram(URL(fileURLWithPath: "/usr/bin/mknod"), [device.path, "c", "1", "3"], in: dir)
        try XCTSkipIf(made.status != 0, "mknod not allowed here: \(made.stderr)")
        let run = try mergeTinyClip(["--report", "null"], in: dir)
        assertRefused(run, naming: ["null"], saying: "is a device")
        XCTAssertEqual(fileType(device), S_IFCHR, "still a character device")
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind")
    }

    /// A job list whose output is an existing FIFO: that job fails, the batch ends.
    func testABatchJobWhoseOutputIsAFIFOFailsWithoutHanging() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let fifo = dir.appendingPathComponent("x.mp4")
        try makeFIFO(fifo)
        try writeLines([#"{"inputs":["a.mov"],"output":"x.mp4"}"#], to: dir.appendingPathComponent("jobs.jsonl"))
        let run = try vmerge(["batch", "jobs.jsonl", "--min-duration", "0"], in: dir, timeout: 20)
        XCTAssertFalse(run.timedOut, "hung: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertEqual(run.status, 1, "the job failed: \(run.log)")
        assertOnlyVMergeLines(run)
        XCTAssertTrue(run.lines.contains { $0.contains("x: failed: x.mp4: is a FIFO") }, "says why: \(run.log)")
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
    }

    /// OUTBOX/job.mp4 is a FIFO: the worker neither hangs nor loses the job.
    func testAWatchJobWhoseOutputIsAFIFOFinishesWithoutHanging() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        let fifo = outbox.appendingPathComponent("job.mp4")
        try makeFIFO(fifo)
        _ = try makeJob(inbox, "job")
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertFalse(run.timedOut, "hung: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
        let failed = !failedEntries(inbox, job: "job").isEmpty
        let published = listing(outbox).contains {
            $0 != "job.mp4" && $0.hasPrefix("job") && $0.hasSuffix(".mp4")
                && fileType(outbox.appendingPathComponent($0)) == S_IFREG
        }
        XCTAssertTrue(failed || published, "the job is in .failed or published under another name: \(run.log)")
    }
}
