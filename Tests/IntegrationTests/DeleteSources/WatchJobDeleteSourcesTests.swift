import Foundation
import TestSupport
import XCTest

/// --delete-sources on a watch job: it says what it deleted, a job recovered after a crash
/// deletes only what its output holds and is not made again from what is left, and a job never
/// publishes beside somebody else's report.
final class WatchJobDeleteSourcesTests: DeleteSourcesTestCase {
    /// A scratch folder with an inbox holding the ready job folder `job` (copies of `files`) and
    /// an empty outbox "out".
    private func watchFolders(job: String, with files: [(String, String)]) throws -> (URL, URL, URL) {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("inbox"), outbox = dir.appendingPathComponent("out")
        let folder = inbox.appendingPathComponent(job)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        _ = try copies(files, in: folder)
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent(".ready").path, contents: nil)
        return (dir, inbox, outbox)
    }

    /// Watch says what it deleted, as a merge does, and its report names it.
    func testAWatchJobSaysWhatItDeleted() throws {
        let (dir, inbox, outbox) = try watchFolders(job: "trip", with: [("a_", "1.mov"), ("e_", "2.mov")])
        let run = try VMergeBinary.run(["watch", "inbox", "--out", "out", "--once", "--delete-sources"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderrLines.contains("vmerge: trip/1.mov: deleted (--delete-sources: the output holds all of it)"), run.stderr)
        XCTAssertTrue(run.stderrLines.contains("vmerge: trip/2.mov: deleted (--delete-sources: the output holds all of it)"), run.stderr)
        let deleted = try jsonObject(at: outbox.appendingPathComponent("trip.mp4.json"))["deleted_sources"] as? [String] ?? []
        XCTAssertEqual(deleted.map { ($0 as NSString).lastPathComponent }, ["1.mov", "2.mov"])
        XCTAssertEqual(listing(inbox.appendingPathComponent(".done")), [])
    }

    /// A watch job whose output was published when its worker died (killed before any
    /// bookkeeping) is finished by the next worker with the same ledger as the normal path: the
    /// clip cut by --max-duration and the unreadable one stay in .done, the one merged whole goes.
    /// Before, recovery deleted every input.
    func testAWatchJobRecoveredAfterACrashDeletesOnlyWhatTheOutputHolds() throws {
        let (dir, inbox, outbox) = try watchFolders(job: "trip", with: [("a_", "1.mov"), ("bad_text", "2.mov"), ("e_", "3.mov")])
        let arguments = [
            "watch", "inbox", "--out", "out", "--once", "--settle", "0", "--delete-sources", "--skip-invalid",
            "--max-duration", "4",
        ]
        let killed = try VMergeBinary.run(arguments, in: dir, environment: ["VMERGE_TEST_KILL_AT": "after-video"])
        XCTAssertEqual(killed.status, SIGKILL, "killed right after publishing: \(killed.stderr)")
        XCTAssertEqual(listing(outbox), ["trip.mp4"])
        let recovered = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(recovered.status, 0, recovered.stderr)
        XCTAssertTrue(recovered.stderr.contains("recovered trip@"), recovered.stderr)
        let done = inbox.appendingPathComponent(".done")
        let kept = listing(done).flatMap { listing(done.appendingPathComponent($0)) }
        XCTAssertEqual(kept, ["2.mov", "3.mov"], "the unreadable one and the one --max-duration cut stay")
    }

    /// A watch job recovered after a crash, one of whose files is gone from its claim since, is
    /// done: its output is not made again from what is left under another name (found by a
    /// hostile pass: trip-2.mp4 from the rest, trip.mp4 left without its report).
    func testAWatchJobMissingAFileSinceItsOutputWasPublishedIsDone() throws {
        let (dir, inbox, outbox) = try watchFolders(job: "trip", with: [("a_", "1.mov"), ("e_", "2.mov")])
        let arguments = ["watch", "inbox", "--out", "out", "--once", "--settle", "0"]
        let killed = try VMergeBinary.run(arguments, in: dir, environment: ["VMERGE_TEST_KILL_AT": "after-video"])
        XCTAssertEqual(killed.status, SIGKILL, killed.stderr)
        let processing = inbox.appendingPathComponent(".processing")
        let claim = try XCTUnwrap(listing(processing).first { !$0.hasPrefix(".") })
        XCTAssertEqual(unlink(processing.appendingPathComponent(claim + "/2.mov").path), 0)
        let recovered = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(recovered.status, 0, recovered.stderr)
        XCTAssertEqual(listing(outbox), ["trip.mp4", "trip.mp4.json"])
    }

    /// In watch, a name whose report name holds somebody else's file is not free: the job goes to
    /// "-2" whole, and its report is written (before, the sources were deleted and no report
    /// named them; found by a hostile pass).
    func testAWatchJobNeverPublishesBesideAForeignReport() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("inbox"), outbox = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        _ = try copies([("a_", "b.mov")], in: inbox)
        try Data("mine".utf8).write(to: outbox.appendingPathComponent("b.mp4.json"))
        let run = try VMergeBinary.run(
            ["watch", "inbox", "--out", "out", "--once", "--settle", "0", "--delete-sources"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(outbox), ["b-2.mp4", "b-2.mp4.json", "b.mp4.json"])
        XCTAssertEqual(try String(contentsOf: outbox.appendingPathComponent("b.mp4.json"), encoding: .utf8), "mine")
        let deleted = try jsonObject(at: outbox.appendingPathComponent("b-2.mp4.json"))["deleted_sources"] as? [String] ?? []
        XCTAssertEqual(deleted.count, 1)
    }
}
