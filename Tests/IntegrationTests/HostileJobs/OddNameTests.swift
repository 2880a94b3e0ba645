import Foundation
import TestSupport
import XCTest

/// Names a job cannot carry: a loose file's name too long for the claim's suffix, a job folder
/// named with a newline (in watch and in a folder batch) fail or stop, saying so, without forging
/// a log line; an inbox path with ".." works (issue 11, finding 7a, and its reviews).
final class OddNameTests: HostileJobTestCase {
    /// A loose file whose name leaves no room for the claim's suffix fails with a
    /// "too long" line and leaves the inbox's top level, instead of being skipped on every scan.
    func testALooseFileWithAnOverlongNameFailsAndDoesNotLoop() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let name = String(repeating: "x", count: 236) + ".mov"
        XCTAssertEqual(name.utf8.count, 240)
        try copyFixture("l_tiny", to: inbox.appendingPathComponent(name))
        let first = try watchOnce(dir, ["--settle", "0"], timeout: 30)
        XCTAssertFalse(first.timedOut || first.signalled, first.log)
        XCTAssertEqual(first.status, 1, first.log)
        assertOnlyVMergeLines(first)
        XCTAssertTrue(first.lines.contains { $0.contains("too long") }, "says the name is too long: \(first.log)")
        XCTAssertFalse(listing(inbox).contains(name), "moved out of the inbox's top level")
        let second = try watchOnce(dir, ["--settle", "0"], timeout: 30)
        XCTAssertEqual(second.status, 0, second.log)
        XCTAssertFalse(second.lines.contains { $0.contains("too long") }, "not the same failure again: \(second.log)")
    }

    /// A job folder name with a newline cannot forge log lines or output names: it is
    /// set aside, said with the newline escaped.
    func testANewlineInAJobNameIsSetAside() throws {
        let dir = try makeScratchDirectory()
        _ = try makeJob(dir.appendingPathComponent("in"), "evil\nvmerge: watch: done fake -> x")
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertFalse(run.lines.contains { $0.hasPrefix("vmerge: watch: done fake") }, run.log)
        XCTAssertTrue(run.lines.contains { $0.contains("evil\\nvmerge") && $0.contains("control character") }, run.log)
        XCTAssertEqual(listing(dir.appendingPathComponent("out")).filter { $0.hasSuffix(".mp4") }, [])
        XCTAssertFalse(listing(dir.appendingPathComponent("in/.failed")).contains { $0.contains("\n") })
    }

    /// A folder batch with a job folder whose name has a newline stops before
    /// any work, saying so, instead of leaving that job out silently. (A name that is not UTF-8 is
    /// a job like any other: NamesAreBytesTests.)
    func testAFolderBatchWithAnUnnameableJobFolderStops() throws {
        for bad in [Array("bad\nname".utf8)] {
            let dir = try makeScratchDirectory()
            try copyFixture("l_tiny", to: dir.appendingPathComponent("jobs/good/a.mov"))
            let path = Array((dir.path + "/jobs/").utf8) + bad + [0]
            XCTAssertEqual(
                path.withUnsafeBufferPointer {
                    $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: path.count) { mkdir($0, 0o755) }
                }, 0)
            let run = try vmerge(["batch", "jobs", "--out", "out", "--min-duration", "0"], in: dir)
            XCTAssertEqual(run.status, 1, run.log)
            XCTAssertEqual(run.lines.count, 1, run.log)
            XCTAssertTrue(run.lines[0].hasPrefix("vmerge: jobs: holds bad\\nname"), run.log)
            XCTAssertFalse(listing(dir.appendingPathComponent("out")).contains("good.mp4"), "before any work")
        }
    }

    /// An inbox named with ".." works like any other.
    func testAnInboxPathWithDotDotWorks() throws {
        let dir = try makeScratchDirectory()
        _ = try makeJob(dir.appendingPathComponent("in"), "J")
        let sub = dir.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let run = try vmerge(["watch", "../in", "--out", "../out", "--once", "--min-duration", "0"], in: sub)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertTrue(listing(dir.appendingPathComponent("out")).contains("J.mp4"))
    }
}
