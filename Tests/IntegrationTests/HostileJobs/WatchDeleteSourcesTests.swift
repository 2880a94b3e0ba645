import Foundation
import TestSupport
import XCTest

/// A watch job's --delete-sources deletes only what its output holds whole, and never for an
/// output that is not its own (issue 11's reviews).
final class WatchDeleteSourcesTests: HostileJobTestCase {
    /// An output another producer's job made with the same names, sizes and times does
    /// not make this job "done" (its sources would be deleted for a video that is not theirs).
    func testAForgedJobKeyDoesNotCountAsDone() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let victim = inbox.appendingPathComponent("IMG_1.MOV")
        try copyFixture("a_", to: victim)
        // The attacker's file: another clip padded (a trailing free box) to the victim's size.
        var forged = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("l_tiny")))
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: victim.path)[.size] as? Int)
        let padding = size - forged.count
        XCTAssertGreaterThan(padding, 8)
        forged += [
            UInt8(padding >> 24 & 0xFF), UInt8(padding >> 16 & 0xFF), UInt8(padding >> 8 & 0xFF), UInt8(padding & 0xFF),
        ]
        forged += Array("free".utf8) + [UInt8](repeating: 0, count: padding - 8)
        let attack = inbox.appendingPathComponent("IMG_1")
        try FileManager.default.createDirectory(at: attack, withIntermediateDirectories: true)
        try forged.write(to: attack.appendingPathComponent("IMG_1.MOV"))
        let old = Date(timeIntervalSinceNow: -120)
        for url in [victim, attack.appendingPathComponent("IMG_1.MOV")] {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: url.path)
        }
        try Data().write(to: attack.appendingPathComponent(".ready"))
        let run = try watchOnce(dir, ["--delete-sources"], timeout: 60)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertFalse(run.log.contains("already there"), run.log)
        let outputs = listing(dir.appendingPathComponent("out")).filter { $0.hasSuffix(".mp4") }
        XCTAssertEqual(outputs.count, 2, "\(outputs)")
        let durations = try outputs.map { try decodedVideoDuration(dir.appendingPathComponent("out/\($0)").path) }
        XCTAssertTrue(durations.contains { abs($0 - 3) < 0.1 }, "the victim's own video is there: \(durations)")
    }

    /// --delete-sources deletes only what the job consumed: a file the producer adds to the job
    /// folder after the claim (never merged) is kept in .done, and so is a clip past
    /// --max-duration.
    func testDeleteSourcesNeverDeletesWhatWasNotMerged() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "J", fixture: "b_", clips: 8)
        let watcher = try startWatcher(["--once", "--delete-sources", "--max-duration", "15"], in: dir, capture: false)
            .process
        let processing = inbox.appendingPathComponent(".processing")
        let deadline = Date().addingTimeInterval(30)
        var claim: String?
        while Date() < deadline && claim == nil {
            claim = listing(processing).first { $0.hasPrefix("J@") }
            if claim == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        let id = try XCTUnwrap(claim)
        try copyFixture("l_tiny", to: processing.appendingPathComponent("\(id)/late.mov"))
        watcher.waitUntilExit()
        XCTAssertEqual(watcher.terminationStatus, 0)
        XCTAssertTrue(listing(dir.appendingPathComponent("out")).contains("J.mp4"))
        // 8 clips of 2.5 s, cut at 15 s: clips 1-6 merged and deleted, 7 and 8 left out and kept;
        // late.mov is kept whether it came too late for the job or sorted past the limit.
        let kept = listing(inbox.appendingPathComponent(".done/\(id)"))
        XCTAssertEqual(kept, ["clip7.mov", "clip8.mov", "late.mov"])
    }

    /// --delete-sources keeps a clip the output holds only part of: cut at 14 s, clip 6 (12.5 to
    /// 15 s) is in the output only to 14 s, so it stays in .done with the two after it.
    func testDeleteSourcesKeepsAClipTheOutputHoldsOnlyPartOf() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "J", fixture: "b_", clips: 8)
        let run = try watchOnce(dir, ["--delete-sources", "--max-duration", "14"], timeout: 60)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertTrue(listing(dir.appendingPathComponent("out")).contains("J.mp4"))
        let done = listing(inbox.appendingPathComponent(".done"))
        XCTAssertEqual(done.count, 1, "\(done)")
        let kept = listing(inbox.appendingPathComponent(".done/\(done.first ?? "")"))
        XCTAssertEqual(kept, ["clip6.mov", "clip7.mov", "clip8.mov"])
    }
}
