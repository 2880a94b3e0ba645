import Foundation
import TestSupport
import XCTest

/// A watch job reads only its own folder: inputs climbing out with "..", absolute paths, linked
/// clips and folders are refused unless --allow-inputs names where they are; a job folder swapped
/// for a link, or .processing renamed mid-job, redirects nothing; the outbox and --allow-inputs
/// stay out of the inbox (issue 11, finding 8, and its reviews).
final class WatchConfinementTests: HostileJobTestCase {
    /// A real clip outside the inbox: dir/outside.mov (and dir/box/outside.mov, so that relative
    /// escapes hit a real clip whether resolved from the job folder or from its claim).
    private func confinementLayout(_ dir: URL) throws -> URL {
        try copyFixture("l_tiny", to: dir.appendingPathComponent("outside.mov"))
        try copyFixture("l_tiny", to: dir.appendingPathComponent("box/outside.mov"))
        try copyFixture("l_tiny", to: dir.appendingPathComponent("clips/outside.mov"))
        let inbox = dir.appendingPathComponent("box/in")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        return inbox
    }

    private func confinedWatch(_ dir: URL, _ extra: [String] = []) throws -> Run {
        try vmerge(["watch", "box/in", "--out", "out", "--once", "--min-duration", "0"] + extra, in: dir, timeout: 30)
    }

    /// Each of `jobs` failed into .failed, saying `reason`, and nothing was published for it.
    private func assertJobsConfined(
        _ run: Run, inbox: URL, outbox: URL, jobs: [String], saying reason: String, file: StaticString = #filePath,
        line: UInt = #line
    ) {
        XCTAssertFalse(run.timedOut || run.signalled, run.log, file: file, line: line)
        XCTAssertEqual(run.status, 1, run.log, file: file, line: line)
        for job in jobs {
            XCTAssertFalse(
                failedEntries(inbox, job: job).isEmpty, "\(job) is in .failed: \(run.log)", file: file, line: line)
            XCTAssertFalse(
                listing(outbox).contains { $0.hasPrefix(job) }, "nothing published for \(job)", file: file, line: line)
            XCTAssertTrue(
                run.lines.contains { $0.hasPrefix("vmerge: watch: failed \(job): ") && $0.contains(reason) },
                "says why \(job) failed: \(run.log)", file: file, line: line)
        }
    }

    /// Job.json inputs climbing out of the job folder with "..".
    func testInputsClimbingOutOfTheJobFolderAreRefused() throws {
        let dir = try makeScratchDirectory()
        let inbox = try confinementLayout(dir)
        // From box/in/up2 "../../outside.mov" is box/outside.mov; "../../../" reaches dir/ from
        // the job folder and box/ from its claim in .processing: a real clip either way.
        try makeJob(inbox, "up2", jobJSON: #"{"inputs": ["../../outside.mov"]}"#)
        try makeJob(inbox, "up3", jobJSON: #"{"inputs": ["../../../outside.mov"]}"#)
        let run = try confinedWatch(dir)
        assertJobsConfined(
            run, inbox: inbox, outbox: dir.appendingPathComponent("out"), jobs: ["up2", "up3"],
            saying: "climbs out of its folder with '..'")
    }

    /// Job.json naming an absolute path outside the inbox.
    func testAbsoluteInputsOutsideTheInboxAreRefused() throws {
        let dir = try makeScratchDirectory()
        let inbox = try confinementLayout(dir)
        try makeJob(
            inbox, "abs", jobJSON: #"{"inputs": ["\#(dir.appendingPathComponent("outside.mov").path)"]}"#)
        let run = try confinedWatch(dir)
        assertJobsConfined(
            run, inbox: inbox, outbox: dir.appendingPathComponent("out"), jobs: ["abs"],
            saying: "is outside the job folder")
    }

    /// A job folder holding a symlink to a clip outside the inbox.
    func testASymlinkedClipIsRefused() throws {
        let dir = try makeScratchDirectory()
        let inbox = try confinementLayout(dir)
        let folder = inbox.appendingPathComponent("link")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try symlink(folder.appendingPathComponent("clip.mov"), to: dir.appendingPathComponent("outside.mov"))
        try Data().write(to: folder.appendingPathComponent(".ready"))
        let run = try confinedWatch(dir)
        assertJobsConfined(
            run, inbox: inbox, outbox: dir.appendingPathComponent("out"), jobs: ["link"],
            saying: "link/clip.mov: is a symbolic link")
    }

    /// A job folder with a symlinked subfolder (pointing outside the inbox) whose clip
    /// the job.json names by a path that looks local.
    func testASymlinkedSubfolderIsRefused() throws {
        let dir = try makeScratchDirectory()
        let inbox = try confinementLayout(dir)
        let folder = try makeJob(inbox, "sub", jobJSON: #"{"inputs": ["clip1.mov", "more/outside.mov"]}"#)
        try symlink(folder.appendingPathComponent("more"), to: dir.appendingPathComponent("clips"))
        let run = try confinedWatch(dir)
        assertJobsConfined(
            run, inbox: inbox, outbox: dir.appendingPathComponent("out"), jobs: ["sub"],
            saying: "sub/more/outside.mov: lies under a symbolic link")
    }

    /// --allow-inputs admits absolute inputs under the folder it names.
    func testAllowInputsAdmitsAnAbsoluteInput() throws {
        let dir = try makeScratchDirectory()
        let inbox = try confinementLayout(dir)
        try makeJob(
            inbox, "abs", jobJSON: #"{"inputs": ["\#(dir.appendingPathComponent("clips/outside.mov").path)"]}"#)
        let run = try confinedWatch(dir, ["--allow-inputs", dir.appendingPathComponent("clips").path])
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertEqual(fileType(dir.appendingPathComponent("out/abs.mp4")), S_IFREG, run.log)
        XCTAssertEqual(listing(inbox.appendingPathComponent(".failed")), [])
    }

    /// --allow-inputs may not hold the inbox (jobs could read other producers' files).
    func testAllowInputsHoldingTheInboxIsRefused() throws {
        let dir = try makeScratchDirectory()
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("in/shared"), withIntermediateDirectories: true)
        for allowed in [".", "in", "in/shared"] {
            let run = try vmerge(
                ["watch", "in", "--out", "out", "--once", "--allow-inputs", allowed], in: dir, timeout: 10)
            assertRefused(run, naming: ["--allow-inputs"], saying: "may not hold the inbox")
        }
    }

    /// A linked folder named as an input is not even listed: the error note names the
    /// link, not what lies behind it.
    func testALinkedFolderInputIsNotListed() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("private/secret-name.mov"))
        let job = try makeJob(
            dir.appendingPathComponent("in"), "J", jobJSON: #"{"inputs": ["sub"], "options": {"skip-invalid": true}}"#)
        try symlink(job.appendingPathComponent("sub"), to: dir.appendingPathComponent("private"))
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertFalse(run.result.stderr.contains("secret-name"), run.log)
        let notes = listing(dir.appendingPathComponent("in/.failed")).filter { $0.hasSuffix(".error.json") }
        let note = try String(
            contentsOf: dir.appendingPathComponent("in/.failed/\(notes.first ?? "")"), encoding: .utf8)
        XCTAssertFalse(note.contains("secret-name"), note)
        XCTAssertTrue(note.contains("symbolic link"), note)
    }

    /// OUTBOX inside INBOX is refused at start (a producer could swap it for a link).
    func testAnOutboxInsideTheInboxIsRefused() throws {
        let dir = try makeScratchDirectory()
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("in/out"), withIntermediateDirectories: true)
        for out in ["in/out", "in/.processing"] {
            let run = try vmerge(["watch", "in", "--out", out, "--once"], in: dir, timeout: 10)
            assertRefused(run, naming: [out], saying: "must not be inside the inbox")
        }
    }

    /// A job folder swapped for a link between the scan and the claim is claimed as
    /// the link, which is never followed: the job fails and nothing outside is read.
    func testAJobFolderSwappedForALinkAfterTheScanIsNotFollowed() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "A", fixture: "b_", clips: 12)
        _ = try makeJob(inbox, "B")
        let secret = dir.appendingPathComponent("secret")
        try copyFixture("a_", to: secret.appendingPathComponent("private.mov"))
        let (watcher, err) = try startWatcher(["--once"], in: dir)
        let processing = inbox.appendingPathComponent(".processing")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && !listing(processing).contains(where: { $0.hasPrefix("A@") }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        try FileManager.default.moveItem(
            at: inbox.appendingPathComponent("B"), to: dir.appendingPathComponent("B.real"))
        try symlink(inbox.appendingPathComponent("B"), to: secret)
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watcher.waitUntilExit()
        XCTAssertEqual(watcher.terminationStatus, 1, "B failed: \(log)")
        XCTAssertTrue(log.contains("failed B: B: is a symbolic link or a file, not a job folder; it was not read"), log)
        XCTAssertFalse(listing(dir.appendingPathComponent("out")).contains("B.mp4"), "nothing of the secret folder")
        XCTAssertTrue(listing(inbox.appendingPathComponent(".failed")).contains { $0.hasPrefix("B@") })
        XCTAssertEqual(listing(secret), ["private.mov"])
    }

    /// Renaming .processing away mid-job and planting a link at the claim's old path
    /// changes nothing: the job reads through the claim folder it holds open.
    func testRenamingProcessingMidJobRedirectsNothing() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let job = try makeJob(inbox, "J", fixture: "b_", clips: 6)
        try copyFixture("l_tiny", to: job.appendingPathComponent("clip7.mov"))
        let secret = dir.appendingPathComponent("secret")
        try copyFixture("a_", to: secret.appendingPathComponent("clip7.mov"))  // 3 s instead of 0.1 s
        let watcher = try startWatcher(["--once"], in: dir, capture: false).process
        let outbox = dir.appendingPathComponent("out")
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && !listing(outbox).contains(where: { $0.hasSuffix(".tmp") }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let processing = inbox.appendingPathComponent(".processing")
        let id = try XCTUnwrap(listing(processing).first { $0.hasPrefix("J@") })
        try FileManager.default.moveItem(at: processing, to: inbox.appendingPathComponent(".p2"))
        try FileManager.default.createDirectory(at: processing, withIntermediateDirectories: false)
        try symlink(processing.appendingPathComponent(id), to: secret)
        watcher.waitUntilExit()
        let seconds = try decodedVideoDuration(outbox.appendingPathComponent("J.mp4").path)
        XCTAssertEqual(seconds, 6 * 2.5 + 0.1, accuracy: 0.1, "J's own clips only")
    }
}
