import Foundation
import TestSupport
import XCTest

@testable import VMergeCore
@testable import VMergeJobs

/// The parts of the watch folder, driven without processes or sleeping.
final class WatchPartsTests: XCTestCase {
    /// A loose file is ready once it held still for --settle on the injected clock; a folder
    /// once it has its marker; hidden and partial names never.
    func testSettlingOnAnInjectedClock() {
        nonisolated(unsafe) var now = 100.0
        var scanner = InboxScanner(settle: 5, once: false, now: { now })
        var clip = InboxEntry(name: "clip.mov", kind: .regular, size: 10, mtime: 1)
        let entries = [
            clip,
            InboxEntry(name: "job", kind: .directory, isReadyFolder: true),
            InboxEntry(name: "notyet", kind: .directory),
            InboxEntry(name: ".hidden.mov", kind: .regular, size: 1, mtime: 1),
            InboxEntry(name: "down.mov.part", kind: .regular, size: 1, mtime: 1),
            InboxEntry(name: "link.mov", kind: .symlink),
        ]
        var scan = scanner.scan(entries)
        XCTAssertEqual(scan.ready, [InboxJob(name: "job", kind: .folder)])
        XCTAssertEqual(scan.nextSettle, 5)
        now += 4.9
        XCTAssertEqual(scanner.scan(entries).ready.count, 1)
        now += 0.1
        scan = scanner.scan(entries)
        XCTAssertEqual(scan.ready, [InboxJob(name: "clip.mov", kind: .file), InboxJob(name: "job", kind: .folder)])
        XCTAssertTrue(scanner.isStillSettled(clip))
        clip.size = 11  // still growing: back to waiting
        XCTAssertFalse(scanner.isStillSettled(clip))
        scan = scanner.scan([clip])
        XCTAssertEqual(scan.ready, [])
        XCTAssertEqual(scan.nextSettle, 5)
    }

    func testWithOnceAFileIsJudgedByItsOwnTime() {
        var scanner = InboxScanner(settle: 5, once: true, now: { 0 })
        scanner.wallClock = { 1000 }
        let old = InboxEntry(name: "old.mov", kind: .regular, size: 1, mtime: 994_000_000_000)
        let fresh = InboxEntry(name: "new.mov", kind: .regular, size: 1, mtime: 999_000_000_000)
        XCTAssertEqual(scanner.scan([old, fresh]).ready, [InboxJob(name: "old.mov", kind: .file)])
    }

    /// The worker's folders must be its own: a planted link or somebody else's writable folder
    /// stops the worker at start instead of being written through.
    func testTheWorkersFoldersMustBeItsOwn() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in").path
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: inbox + "/.failed", withDestinationPath: dir.path)
        XCTAssertThrowsError(try WatchFolders(inbox: inbox)) { error in
            XCTAssertTrue("\(error)".contains(".failed: is a symbolic link"), "\(error)")
        }
        try FileManager.default.removeItem(atPath: inbox + "/.failed")
        try FileManager.default.createDirectory(atPath: inbox + "/.failed", withIntermediateDirectories: false)
        chmod(inbox + "/.failed", 0o777)
        XCTAssertThrowsError(try WatchFolders(inbox: inbox)) { error in
            XCTAssertTrue("\(error)".contains("writable by others"), "\(error)")
        }
        chmod(inbox + "/.failed", 0o755)
        let folders = try WatchFolders(inbox: inbox)
        XCTAssertTrue(folders.inboxIsCurrent)
        try FileManager.default.removeItem(atPath: inbox)
        XCTAssertFalse(folders.inboxIsCurrent, "a removed inbox is noticed")
    }

    /// A claim's recoveries are counted in its lock file (the worker's), not in the job folder
    /// (the producer's), and the lock excludes a second holder.
    func testClaimLocksCountRecoveriesAndExcludeEachOther() throws {
        let dir = try makeScratchDirectory()
        let folder = FileDescriptor(open(dir.path, O_RDONLY | O_DIRECTORY))
        let lock = try XCTUnwrap(ClaimLock(".job@x.lock", in: folder))
        XCTAssertNil(ClaimLock(".job@x.lock", in: folder), "held")
        XCTAssertEqual(lock.recoveries, 0)
        lock.setRecoveries(3)
        XCTAssertEqual(lock.recoveries, 3)
        lock.release()
        XCTAssertEqual(listing(dir), [])
    }

    func testNamesTooLongForTheDerivedNamesAreKnown() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in").path
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let store = ClaimStore(folders: try WatchFolders(inbox: inbox), marker: ".ready", log: .silent)
        let longest = String(repeating: "x", count: store.maxNameBytes)
        let id = longest + "@" + store.newToken()
        XCTAssertLessThanOrEqual(("." + id + ".lock").utf8.count, 255)
        XCTAssertLessThanOrEqual((id + ".error.json").utf8.count, 255)
    }

    /// No space puts a job back with a doubling wait (30 s to 10 min); an output-side error is
    /// retried after 2, 4, 8... s up to --retries; a bad input, or retries used up, fails it.
    func testTheRetryPolicy() {
        let policy = RetryPolicy(retries: 2)
        let output = "/out/trip.mp4"
        let noSpace = VMergeError.noSpace(file: "/out", message: "needs 10 MiB free, has 1 MiB")
        XCTAssertEqual(policy.decide(noSpace, attempt: 0, output: output, inputs: [], lastDelay: nil), .backToInbox(delay: 30))
        XCTAssertEqual(policy.decide(noSpace, attempt: 5, output: output, inputs: [], lastDelay: 30), .backToInbox(delay: 60))
        XCTAssertEqual(policy.decide(noSpace, attempt: 0, output: output, inputs: [], lastDelay: 600), .backToInbox(delay: 600))
        let written = VMergeError.io(file: output, message: "cannot write: Input/output error")
        XCTAssertEqual(policy.decide(written, attempt: 0, output: output, inputs: [], lastDelay: nil), .retry(delay: 2))
        XCTAssertEqual(policy.decide(written, attempt: 1, output: output, inputs: [], lastDelay: nil), .retry(delay: 4))
        XCTAssertEqual(policy.decide(written, attempt: 2, output: output, inputs: [], lastDelay: nil), .fail)
        XCTAssertEqual(
            RetryPolicy(retries: 9).decide(written, attempt: 8, output: output, inputs: [], lastDelay: nil), .retry(delay: 60))
        XCTAssertEqual(policy.decide(.outputExists(file: output), attempt: 0, output: output, inputs: [], lastDelay: nil), .retry(delay: 2))
        let badInput = VMergeError.invalidInput(file: "/in/trip/a.mov", reason: "no video stream")
        XCTAssertEqual(policy.decide(badInput, attempt: 0, output: output, inputs: ["/in/trip/a.mov"], lastDelay: nil), .fail)
        // An FFmpeg error on an input that sits in the output's folder is still the input's.
        let besideOutput = VMergeError.io(file: "/out/a.mov", message: "Invalid data found when processing input")
        XCTAssertEqual(policy.decide(besideOutput, attempt: 0, output: output, inputs: ["/out/a.mov"], lastDelay: nil), .fail)
    }
}
