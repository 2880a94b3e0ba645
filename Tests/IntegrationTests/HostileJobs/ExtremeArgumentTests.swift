import Foundation
import TestSupport
import XCTest

/// Arguments at the edge of what they can hold: frame rates and aspects with huge terms, an
/// empty output name, an output in a missing folder, an endless input list. Each works or is
/// refused at once, never a crash or a long wait (issue 11, findings 2 and 10).
final class ExtremeArgumentTests: HostileJobTestCase {
    /// A rate whose terms are large but whose value is 30 works.
    func testAFrameRateWithLargeTermsWorks() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let run = try vmerge(
            ["a.mov", "-o", "out.mp4", "--fps", "3000000000/100000000", "--min-duration", "0"], in: dir)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(run.status, 0, run.log)
        // 3000000000/100000000 is 30 fps: 0.1 s of the clip gives 3 frames a 30th of a second apart.
        let times = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).videoFrames().times
        XCTAssertEqual(times.count, 3, "\(times)")
        for (index, time) in times.enumerated() { XCTAssertEqual(time, Double(index) / 30, accuracy: 1e-6) }
    }

    /// Terms at Int.max (whose products overflow) are reduced (this one is 1 fps);
    /// a fraction whose reduced terms are still huge is a usage error. Never a crash. (A 3 s
    /// clip: at 1 fps the 0.1 s one would take no frame, and is dropped.)
    func testAFrameRateWithOverflowingTermsIsReducedOrRefused() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("a_", to: dir.appendingPathComponent("a.mov"))
        let one = try vmerge(
            ["a.mov", "-o", "one.mp4", "--fps", "9223372036854775807/9223372036854775807", "--min-duration", "0"],
            in: dir)
        XCTAssertFalse(one.timedOut || one.signalled, one.log)
        XCTAssertEqual(one.status, 0, one.log)
        // 2^63-1 over 2^62: about 2 fps, but no 32-bit time base can hold it.
        let run = try vmerge(
            ["a.mov", "-o", "out.mp4", "--fps", "9223372036854775807/4611686018427387904", "--min-duration", "0"],
            in: dir)
        assertUsageError(run, saying: "invalid value '9223372036854775807/4611686018427387904' for '--fps'")
        XCTAssertEqual(listing(dir), ["a.mov", "one.mp4"])
    }

    /// The same large-term rate as a job list option; the next job runs too.
    func testAFrameRateWithLargeTermsWorksInAJobList() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        try writeLines(
            [
                #"{"inputs":["a.mov"],"output":"x.mp4","options":{"fps":"3000000000/100000000"}}"#,
                #"{"inputs":["a.mov"],"output":"y.mp4"}"#,
            ], to: dir.appendingPathComponent("jobs.jsonl"))
        let run = try vmerge(["batch", "jobs.jsonl", "--min-duration", "0"], in: dir)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertEqual(fileType(dir.appendingPathComponent("x.mp4")), S_IFREG, run.log)
        XCTAssertEqual(fileType(dir.appendingPathComponent("y.mp4")), S_IFREG, run.log)
    }

    /// An aspect with an Int.max term is a usage error.
    func testAnAspectWithAHugeTermIsAUsageError() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let run = try vmerge(
            ["a.mov", "-o", "out.mp4", "--aspect", "9223372036854775807:1", "--min-duration", "0"], in: dir)
        assertUsageError(run, saying: "invalid value '9223372036854775807:1' for '--aspect'")
        XCTAssertEqual(listing(dir), ["a.mov"])
    }

    /// -o "" is a usage error at once, and nothing is created.
    func testAnEmptyOutputNameIsAUsageError() throws {
        let dir = try makeScratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let run = try vmerge(["a.mov", "-o", "", "--min-duration", "0"], in: dir, timeout: 10)
        assertUsageError(run, saying: "'-o' needs a file name")
        XCTAssertLessThan(run.seconds, 5, run.log)
        XCTAssertEqual(listing(dir), ["a.mov"])
    }

    /// -o naming a folder that does not exist ("newdir/") fails before 40 clips are
    /// probed and encoded, and leaves nothing.
    func testAnOutputInAMissingFolderFailsBeforeAnyWork() throws {
        let dir = try makeScratchDirectory()
        let names = (1...40).map { String(format: "clip%02d.mov", $0) }
        for name in names { try copyFixture("a_", to: dir.appendingPathComponent(name)) }
        let run = try vmerge(names + ["-o", "newdir/"], in: dir, timeout: 5)
        XCTAssertFalse(run.timedOut, "still working after 5 s: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertTrue([1, 2].contains(run.status), run.log)
        assertOnlyVMergeLines(run)
        XCTAssertTrue(run.lines.contains { $0.contains("'-o newdir/' names a folder") }, "says why: \(run.log)")
        XCTAssertEqual(listing(dir), names, "no files left")
    }

    /// An endless input list on stdin (/dev/zero) is refused within 20 s. The child
    /// runs under `ulimit -v` (4 GiB) so that a version reading it all cannot exhaust the
    /// machine's memory; it then dies of a signal instead of exiting 1. (Not under
    /// AddressSanitizer, whose shadow memory alone is larger: `make test-asan` sets LSAN_OPTIONS.)
    func testAnEndlessInputListOnStandardInputIsRefused() throws {
        let dir = try makeScratchDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let limit = ProcessInfo.processInfo.environment["LSAN_OPTIONS"] == nil ? "ulimit -v 4194304; " : ""
        process.arguments = [
            "-c", limit + "exec \"$0\" --inputs-from - -o out.mp4", VMergeBinary.url.path,
        ]
        process.currentDirectoryURL = dir
        process.standardInput = try XCTUnwrap(FileHandle(forReadingAtPath: "/dev/zero"))
        process.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        process.standardError = err
        let started = Date()
        try process.run()
        let dog = Watchdog()
        dog.arm(process.processIdentifier, after: 20)
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        dog.finish()
        let run = Run(
            result: RunResult(status: process.terminationStatus, stdout: "", stderr: text),
            signalled: process.terminationReason == .uncaughtSignal, timedOut: dog.didFire,
            seconds: Date().timeIntervalSince(started))
        XCTAssertFalse(run.timedOut, "still reading after 20 s: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("vmerge: -: the input list on stdin is larger than") }, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertEqual(listing(dir), [])
    }
}
