import Foundation
import TestSupport
import XCTest

/// What a killed run or a dead worker leaves is taken up safely by the next: a dead worker's
/// claim is recovered through no link planted in it, and as the folder job it was; a killed
/// merge's temporaries are removed (issue 11, findings 1a and 10, and its reviews).
final class CrashRecoveryTests: HostileJobTestCase {
    /// A dead worker's claim, with symlinks to the victim planted under every name a
    /// recovering worker writes (recovery counter, error note, their temporaries, the outputs'
    /// temporaries). The recovery must follow none of them.
    private func plantDeadClaim(_ dir: URL, fixture: String) throws -> (Victim, URL, URL) {
        let victim = try makeVictim(dir)
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        let processing = inbox.appendingPathComponent(".processing")
        let claim = processing.appendingPathComponent("job@deadhost-99999-abc")
        try FileManager.default.createDirectory(at: claim, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        try copyFixture(fixture, to: claim.appendingPathComponent("clip1.mov"))
        try Data().write(to: claim.appendingPathComponent(".ready"))
        try Data().write(to: processing.appendingPathComponent(".job@deadhost-99999-abc.lock"))
        for name in [
            ".vmerge-recoveries", "error.json", ".error.json.vmerge-deadhost-99999-abc.tmp",
            "..vmerge-recoveries.vmerge-deadhost-99999-abc.tmp",
        ] {
            try symlink(claim.appendingPathComponent(name), to: victim.url)
        }
        for name in [".job.mp4.vmerge-deadhost-99999-abc.tmp", ".job.mp4.json.vmerge-deadhost-99999-abc.tmp"] {
            try symlink(outbox.appendingPathComponent(name), to: victim.url)
        }
        return (victim, inbox, outbox)
    }

    /// The recovered job succeeds; nothing written through a planted link.
    func testRecoveringADeadClaimFollowsNoPlantedLink() throws {
        let dir = try makeScratchDirectory()
        let (victim, _, outbox) = try plantDeadClaim(dir, fixture: "l_tiny")
        let run = try watchOnce(dir, timeout: 30)
        assertUntouched(victim)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(
            fileType(outbox.appendingPathComponent("job.mp4")), S_IFREG, "published as a regular file: \(run.log)")
    }

    /// The recovered job fails, so an error note is written into the
    /// claim where error.json and its temporary are links to the victim.
    func testFailingADeadClaimWritesTheErrorNoteThroughNoPlantedLink() throws {
        let dir = try makeScratchDirectory()
        let (victim, inbox, _) = try plantDeadClaim(dir, fixture: "bad_text")
        let run = try watchOnce(dir, timeout: 30)
        assertUntouched(victim)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertFalse(listing(inbox.appendingPathComponent(".failed")).isEmpty, "the job is in .failed: \(run.log)")
    }

    /// A parked folder claim whose marker is gone (removed by its producer, or the
    /// workers restarted with another --marker) is recovered as the folder job it was, never
    /// deleted as an "empty" loose-file claim; the dead worker's temporary goes.
    func testARecoveredClaimWithoutItsMarkerIsNotDeleted() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let processing = inbox.appendingPathComponent(".processing")
        let id = "trip@deadhost-99999-abc"
        for i in 1...2 { try copyFixture("l_tiny", to: processing.appendingPathComponent("\(id)/clip\(i).mov")) }
        try Data("keep\n".utf8).write(to: processing.appendingPathComponent("\(id)/notes.txt"))
        try Data("folder 0".utf8).write(to: processing.appendingPathComponent(".\(id).lock"))
        let outbox = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        try Data([1]).write(to: outbox.appendingPathComponent(".trip.mp4.vmerge-deadhost-99999-abc-x.tmp"))
        let run = try watchOnce(dir, ["--marker", "READY"], timeout: 30)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertEqual(listing(outbox), ["trip.mp4", "trip.mp4.json"])
        let done = listing(inbox.appendingPathComponent(".done/\(id)"))
        XCTAssertEqual(done, ["clip1.mov", "clip2.mov", "notes.txt"], "sources kept, nothing deleted")
    }

    /// A plain merge killed with SIGKILL mid-encode leaves its temporary; the next
    /// run with the same -o removes it.
    func testTheTemporaryOfAKilledMergeIsRemovedByTheNextRun() throws {
        let dir = try makeScratchDirectory()
        let clips = dir.appendingPathComponent("clips"), out = dir.appendingPathComponent("out")
        for i in 1...40 { try copyFixture("b_", to: clips.appendingPathComponent(String(format: "b%02d.mov", i))) }
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = VMergeBinary.url
        process.arguments = ["clips", "-o", "out/out.mp4"]
        process.currentDirectoryURL = dir
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        var started = false
        while Date() < deadline && process.isRunning {
            if listing(out).contains(where: { $0.hasPrefix(".") && $0.hasSuffix(".tmp") }) {
                started = true
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Thread.sleep(forTimeInterval: 0.2)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertTrue(started, "the merge never started: \(listing(out))")
        XCTAssertTrue(listing(out).contains { $0.hasSuffix(".tmp") }, "SIGKILL left the temporary")
        try copyFixture("l_tiny", to: dir.appendingPathComponent("l.mov"))
        let run = try vmerge(["l.mov", "-o", "out/out.mp4", "--min-duration", "0"], in: dir, timeout: 30)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertEqual(fileType(out.appendingPathComponent("out.mp4")), S_IFREG, run.log)
        XCTAssertEqual(listing(out).filter { $0.hasSuffix(".tmp") }, [], "the killed run's temporary is gone")
    }

    /// The report's temporary of a run killed with -9 is removed by the next run.
    func testTheReportTemporaryOfAKilledRunIsRemoved() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let dead = Process()
        dead.executableURL = URL(fileURLWithPath: "/bin/true")
        try dead.run()
        dead.waitUntilExit()
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first ?? ""
        let stale = ".r.json.vmerge-\(host)-\(dead.processIdentifier)-x.tmp"
        try Data("{".utf8).write(to: dir.appendingPathComponent(stale))
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--report", "r.json", "--min-duration", "0"], in: dir)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertEqual(listing(dir), ["a.mov", "out.mp4", "r.json"])
    }
}
