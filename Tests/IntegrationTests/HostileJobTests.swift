import Foundation
import TestSupport
import XCTest

/// Issue 11: hostile job folders, job lists and targets. Each test runs the built `vmerge` binary
/// against a planted situation (links, FIFOs, devices, odd names, odd job.json files) and checks
/// the file system, the exit status and the shape of stderr, never the exact wording.
///
/// "Refused" below means: exit status 1 or 2 (no crash signal, no watchdog kill), every stderr
/// line starts with "vmerge: ", one of them names the path in question, and no target changed.
/// Tests run as root in CI, so no safety check here relies on a permission denial.
final class HostileJobTests: XCTestCase {
    // MARK: - helpers

    /// One finished run of the binary.
    private struct Run {
        var result: RunResult
        var signalled: Bool
        var timedOut: Bool
        var seconds: Double
        var status: Int32 { result.status }
        var lines: [String] { result.stderrLines }
        var log: String {
            "exit \(status)\(signalled ? " (killed by a signal)" : "")\(timedOut ? " (killed by the watchdog)" : "")"
                + String(format: " after %.1f s", seconds) + "; stderr:\n"
                + (result.stderr.count > 1200 ? String(result.stderr.prefix(1200)) + "..." : result.stderr)
        }
    }

    /// Kills a child with SIGKILL if it is still running after its time.
    private final class Watchdog: @unchecked Sendable {
        private let lock = NSLock()
        private var pid: pid_t = 0
        private var finished = false
        private var fired = false

        func arm(_ pid: pid_t, after seconds: Double) {
            lock.withLock { self.pid = pid }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                lock.withLock {
                    if !finished && self.pid > 0 {
                        fired = true
                        kill(self.pid, SIGKILL)
                    }
                }
            }
        }

        func finish() { lock.withLock { finished = true } }
        var didFire: Bool { lock.withLock { fired } }
    }

    private var scratch: [URL] = []

    override func tearDown() {
        for dir in scratch { try? FileManager.default.removeItem(at: dir) }
        scratch = []
        super.tearDown()
    }

    private func scratchDirectory() throws -> URL {
        let dir = try makeScratchDirectory()
        scratch.append(dir)
        return dir
    }

    /// Runs vmerge in `dir`, killed (and reported as timed out) after `timeout` seconds.
    private func vmerge(_ arguments: [String], in dir: URL, timeout: Double = 60) throws -> Run {
        let dog = Watchdog()
        var process: Process?
        let started = Date()
        let result = try VMergeBinary.run(arguments, in: dir) { p in
            process = p
            dog.arm(p.processIdentifier, after: timeout)
        }
        dog.finish()
        return Run(
            result: result, signalled: process?.terminationReason == .uncaughtSignal, timedOut: dog.didFire,
            seconds: Date().timeIntervalSince(started))
    }

    /// A `vmerge watch in --out out --min-duration 0 ...` process running in `dir`; its stderr is
    /// piped when `capture` (read it to the end before waiting), else discarded.
    private func startWatcher(_ extra: [String], in dir: URL, capture: Bool = true) throws -> (
        process: Process, stderr: Pipe
    ) {
        let process = Process()
        process.executableURL = VMergeBinary.url
        process.arguments = ["watch", "in", "--out", "out", "--min-duration", "0"] + extra
        process.currentDirectoryURL = dir
        let err = Pipe()
        process.standardError = capture ? err : FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return (process, err)
    }

    /// Polls `condition` for up to `seconds`; whether it came true.
    @discardableResult
    private func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && !condition() { Thread.sleep(forTimeInterval: 0.01) }
        return condition()
    }

    /// `vmerge a.mov -o out.mp4 --min-duration 0 <extra>` on a copy of the 0.1 s fixture.
    private func mergeTinyClip(_ extra: [String], in dir: URL) throws -> Run {
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        return try vmerge(["a.mov", "-o", "out.mp4", "--min-duration", "0"] + extra, in: dir, timeout: 20)
    }

    private func watchOnce(_ dir: URL, _ extra: [String] = [], timeout: Double = 60) throws -> Run {
        try vmerge(["watch", "in", "--out", "out", "--once", "--min-duration", "0"] + extra, in: dir, timeout: timeout)
    }

    /// lstat's file type (S_IFREG, S_IFLNK, S_IFIFO...), nil if nothing is there.
    private func fileType(_ url: URL) -> mode_t? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    private func inode(_ url: URL) -> UInt64? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    private func copyFixture(_ prefix: String, to url: URL) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: url.path)
    }

    private func symlink(_ url: URL, to target: URL) throws {
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: target.path)
    }

    private func makeFIFO(_ url: URL) throws {
        XCTAssertEqual(mkfifo(url.path, 0o644), 0, "mkfifo \(url.path)")
    }

    /// A file whose content and inode must survive the test.
    private struct Victim {
        static let content = "precious\n"
        let url: URL
        let inode: UInt64
    }

    private func makeVictim(_ dir: URL) throws -> Victim {
        let url = dir.appendingPathComponent("victim.txt")
        try Victim.content.write(to: url, atomically: false, encoding: .utf8)
        return Victim(url: url, inode: try XCTUnwrap(inode(url)))
    }

    private func assertUntouched(_ victim: Victim, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(fileType(victim.url), S_IFREG, "the victim is still a regular file", file: file, line: line)
        XCTAssertEqual(inode(victim.url), victim.inode, "the victim is the same file (inode)", file: file, line: line)
        let content = (try? String(contentsOf: victim.url, encoding: .utf8)) ?? "<unreadable>"
        XCTAssertEqual(content, Victim.content, "the victim's content is unchanged", file: file, line: line)
    }

    /// Every stderr line is a vmerge message (no stack traces, no multi-line errors). A usage
    /// error (exit 2) may end with today's "Usage: vmerge ..." hint line: the hint is not part of
    /// the error message (VMergeCLITests pin it as the last line).
    private func assertOnlyVMergeLines(_ run: Run, file: StaticString = #filePath, line: UInt = #line) {
        let stray = run.lines.enumerated().filter { index, text in
            let hint = run.status == 2 && index == run.lines.count - 1 && text.hasPrefix("Usage: vmerge")
            return !text.hasPrefix("vmerge: ") && !hint
        }.map(\.element)
        XCTAssertTrue(
            stray.isEmpty, "\(stray.count) stderr line(s) not starting with 'vmerge: ', first: \(stray.first ?? "")",
            file: file, line: line)
    }

    /// Exit 1 or 2, by itself (no signal, no watchdog), vmerge lines only, one naming `path`
    /// (any of `names`).
    private func assertRefused(
        _ run: Run, naming names: [String], file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertFalse(run.timedOut, "hung: \(run.log)", file: file, line: line)
        XCTAssertFalse(run.signalled, "crashed: \(run.log)", file: file, line: line)
        XCTAssertTrue([1, 2].contains(run.status), "refused with exit 1 or 2: \(run.log)", file: file, line: line)
        assertOnlyVMergeLines(run, file: file, line: line)
        XCTAssertTrue(
            run.lines.contains { text in text.hasPrefix("vmerge: ") && names.contains { text.contains($0) } },
            "a 'vmerge: ' line names \(names): \(run.log)", file: file, line: line)
    }

    /// A usage error: exit 2, exactly one error line (a vmerge line; the "Usage:" hint aside).
    private func assertUsageError(_ run: Run, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(run.timedOut || run.signalled, run.log, file: file, line: line)
        XCTAssertEqual(run.status, 2, run.log, file: file, line: line)
        XCTAssertEqual(
            run.lines.filter { !$0.hasPrefix("Usage: vmerge") }.count, 1, "one error line: \(run.log)", file: file,
            line: line)
        assertOnlyVMergeLines(run, file: file, line: line)
    }

    /// An inbox job folder: `clips` copies of a fixture, the .ready marker, and a job.json if given.
    @discardableResult
    private func makeJob(
        _ inbox: URL, _ name: String, fixture: String = "l_tiny", clips: Int = 1, jobJSON: String? = nil
    ) throws -> URL {
        let folder = inbox.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for i in 0..<clips {
            try copyFixture(fixture, to: folder.appendingPathComponent("clip\(i + 1).mov"))
        }
        if let jobJSON {
            try jobJSON.write(to: folder.appendingPathComponent("job.json"), atomically: false, encoding: .utf8)
        }
        try Data().write(to: folder.appendingPathComponent(".ready"))
        return folder
    }

    private func failedEntries(_ inbox: URL, job: String) -> [String] {
        listing(inbox.appendingPathComponent(".failed")).filter { $0.hasPrefix(job) }
    }

    private func writeLines(_ lines: [String], to url: URL) throws {
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: false, encoding: .utf8)
    }

    // MARK: - finding 1: planted links

    /// Finding 1a: a dead worker's claim, with symlinks to the victim planted under every name a
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

    /// Finding 1a: the recovered job succeeds; nothing written through a planted link.
    func testF1aRecoveringADeadClaimFollowsNoPlantedLink() throws {
        let dir = try scratchDirectory()
        let (victim, _, outbox) = try plantDeadClaim(dir, fixture: "l_tiny")
        let run = try watchOnce(dir, timeout: 30)
        assertUntouched(victim)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(
            fileType(outbox.appendingPathComponent("job.mp4")), S_IFREG, "published as a regular file: \(run.log)")
    }

    /// Finding 1a (poison variant): the recovered job fails, so an error note is written into the
    /// claim where error.json and its temporary are links to the victim.
    func testF1aFailingADeadClaimWritesTheErrorNoteThroughNoPlantedLink() throws {
        let dir = try scratchDirectory()
        let (victim, inbox, _) = try plantDeadClaim(dir, fixture: "bad_text")
        let run = try watchOnce(dir, timeout: 30)
        assertUntouched(victim)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertFalse(listing(inbox.appendingPathComponent(".failed")).isEmpty, "the job is in .failed: \(run.log)")
    }

    /// Finding 1b: --report naming a symlink to the victim is refused before any work.
    func testF1bReportThatIsASymlinkIsRefused() throws {
        let dir = try scratchDirectory()
        let victim = try makeVictim(dir)
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let report = dir.appendingPathComponent("r.json")
        try symlink(report, to: victim.url)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--report", "r.json", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["r.json"])
        assertUntouched(victim)
        XCTAssertEqual(fileType(report), S_IFLNK, "the link is still a link")
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind")
    }

    /// Finding 1c: -o naming a symlink to the victim is refused (without -y).
    func testF1cOutputThatIsASymlinkIsRefused() throws {
        let dir = try scratchDirectory()
        let victim = try makeVictim(dir)
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let out = dir.appendingPathComponent("out.mp4")
        try symlink(out, to: victim.url)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["out.mp4"])
        assertUntouched(victim)
        XCTAssertEqual(fileType(out), S_IFLNK, "the link is still a link")
    }

    /// Finding 1c: -o naming a symlink to the victim is refused even with -y.
    func testF1cOutputThatIsASymlinkIsRefusedEvenWithOverwrite() throws {
        let dir = try scratchDirectory()
        let victim = try makeVictim(dir)
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let out = dir.appendingPathComponent("out.mp4")
        try symlink(out, to: victim.url)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "-y", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["out.mp4"])
        assertUntouched(victim)
        XCTAssertEqual(fileType(out), S_IFLNK, "the link is still a link")
    }

    // MARK: - finding 2: rationals

    /// Finding 2: a rate whose terms are large but whose value is 30 works.
    func testF2LargeTermsOfAnOrdinaryFrameRateWork() throws {
        let dir = try scratchDirectory()
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

    /// Finding 2: terms at Int.max (whose products overflow) are reduced (this one is 1 fps);
    /// a fraction whose reduced terms are still huge is a usage error. Never a crash. (A 3 s
    /// clip: at 1 fps the 0.1 s one would take no frame, and is dropped.)
    func testF2FrameRateWithOverflowingTermsIsReducedOrRefused() throws {
        let dir = try scratchDirectory()
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
        assertUsageError(run)
        XCTAssertEqual(listing(dir), ["a.mov", "one.mp4"])
    }

    /// Finding 2: the same large-term rate as a job list option; the next job runs too.
    func testF2LargeTermsOfAFrameRateInAJobList() throws {
        let dir = try scratchDirectory()
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

    /// Finding 2: an aspect with an Int.max term is a usage error.
    func testF2AspectWithAHugeTermIsAUsageError() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let run = try vmerge(
            ["a.mov", "-o", "out.mp4", "--aspect", "9223372036854775807:1", "--min-duration", "0"], in: dir)
        assertUsageError(run)
        XCTAssertEqual(listing(dir), ["a.mov"])
    }

    // MARK: - finding 3: the report never lands on a video or a job list

    /// Finding 3: a report path spelled differently from -o but naming the same (not yet
    /// existing) file.
    private func assertReportOnTheOutputIsRefused(_ report: (URL) -> String) throws {
        let dir = try scratchDirectory()
        let input = dir.appendingPathComponent("a.mov")
        try copyFixture("l_tiny", to: input)
        let before = try Data(contentsOf: input)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--report", report(dir), "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["out.mp4"])
        if let written = FileManager.default.contents(atPath: dir.appendingPathComponent("out.mp4").path) {
            XCTAssertNotEqual(written.first, UInt8(ascii: "{"), "out.mp4 is not the JSON report")
        }
        XCTAssertEqual(try Data(contentsOf: input), before, "the input is untouched")
    }

    /// Finding 3: --report ./out.mp4 with -o out.mp4.
    func testF3ReportSpelledDotSlashOutputIsRefused() throws {
        try assertReportOnTheOutputIsRefused { _ in "./out.mp4" }
    }

    /// Finding 3: --report $PWD/out.mp4 with -o out.mp4.
    func testF3ReportAsTheAbsoluteOutputPathIsRefused() throws {
        try assertReportOnTheOutputIsRefused { $0.appendingPathComponent("out.mp4").path }
    }

    /// Finding 3: --report naming an input.
    func testF3ReportOnAnInputIsRefused() throws {
        let dir = try scratchDirectory()
        let input = dir.appendingPathComponent("a.mov")
        try copyFixture("l_tiny", to: input)
        let before = try Data(contentsOf: input)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--report", "a.mov", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["a.mov"])
        XCTAssertEqual(try Data(contentsOf: input), before, "the input is untouched")
        if let written = FileManager.default.contents(atPath: dir.appendingPathComponent("out.mp4").path) {
            XCTAssertNotEqual(written.first, UInt8(ascii: "{"), "out.mp4 is not the JSON report")
        }
    }

    /// Finding 3: a batch report naming the job list itself.
    func testF3BatchReportOnTheJobListIsRefused() throws {
        let dir = try scratchDirectory()
        let input = dir.appendingPathComponent("a.mov")
        try copyFixture("l_tiny", to: input)
        let list = dir.appendingPathComponent("jobs.jsonl")
        try writeLines([#"{"inputs":["a.mov"],"output":"x.mp4"}"#], to: list)
        let (listBefore, inputBefore) = (try Data(contentsOf: list), try Data(contentsOf: input))
        let run = try vmerge(["batch", "jobs.jsonl", "--report", "jobs.jsonl", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["jobs.jsonl"])
        XCTAssertEqual(try Data(contentsOf: list), listBefore, "the job list is untouched")
        XCTAssertEqual(try Data(contentsOf: input), inputBefore, "the input is untouched")
    }

    /// Finding 3: a batch report naming an input of one of its jobs.
    func testF3BatchReportOnAJobsInputIsRefused() throws {
        let dir = try scratchDirectory()
        let input = dir.appendingPathComponent("a.mov")
        try copyFixture("l_tiny", to: input)
        let list = dir.appendingPathComponent("jobs.jsonl")
        try writeLines([#"{"inputs":["a.mov"],"output":"x.mp4"}"#], to: list)
        let (listBefore, inputBefore) = (try Data(contentsOf: list), try Data(contentsOf: input))
        let run = try vmerge(["batch", "jobs.jsonl", "--report", "a.mov", "--min-duration", "0"], in: dir)
        assertRefused(run, naming: ["a.mov"])
        XCTAssertEqual(try Data(contentsOf: list), listBefore, "the job list is untouched")
        XCTAssertEqual(try Data(contentsOf: input), inputBefore, "the input is untouched")
    }

    // MARK: - finding 4: another job's output

    private func twoBatchesOneOutput(_ dir: URL) throws -> Data {
        try copyFixture("a_", to: dir.appendingPathComponent("a.mov"))
        try copyFixture("l_tiny", to: dir.appendingPathComponent("b.mov"))
        try writeLines([#"{"inputs":["a.mov"],"output":"same.mp4"}"#], to: dir.appendingPathComponent("jobsA.jsonl"))
        try writeLines([#"{"inputs":["b.mov"],"output":"same.mp4"}"#], to: dir.appendingPathComponent("jobsB.jsonl"))
        let a = try vmerge(["batch", "jobsA.jsonl", "--min-duration", "0"], in: dir)
        XCTAssertEqual(a.status, 0, a.log)
        return try Data(contentsOf: dir.appendingPathComponent("same.mp4"))
    }

    /// Finding 4: batch B (a different job list) does not replace batch A's output without -y.
    func testF4ABatchDoesNotReplaceAnotherJobsOutput() throws {
        let dir = try scratchDirectory()
        let first = try twoBatchesOneOutput(dir)
        let b = try vmerge(["batch", "jobsB.jsonl", "--min-duration", "0"], in: dir)
        XCTAssertFalse(b.timedOut || b.signalled, b.log)
        XCTAssertEqual(b.status, 1, "B's job failed: \(b.log)")
        assertOnlyVMergeLines(b)
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("same.mp4")), first, "A's result kept")
    }

    /// Finding 4: with -y, batch B does replace it.
    func testF4ABatchReplacesAnotherJobsOutputWithOverwrite() throws {
        let dir = try scratchDirectory()
        let first = try twoBatchesOneOutput(dir)
        let b = try vmerge(["batch", "jobsB.jsonl", "-y", "--min-duration", "0"], in: dir)
        XCTAssertEqual(b.status, 0, b.log)
        XCTAssertNotEqual(try Data(contentsOf: dir.appendingPathComponent("same.mp4")), first, "B's result")
    }

    // MARK: - finding 5: non-regular targets

    /// Finding 5: -o naming a FIFO is refused at once (no open that blocks), FIFO kept.
    func testF5OutputThatIsAFIFOIsRefusedWithoutHanging() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let fifo = dir.appendingPathComponent("out.mp4")
        try makeFIFO(fifo)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--min-duration", "0"], in: dir, timeout: 20)
        assertRefused(run, naming: ["out.mp4"])
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
    }

    /// Finding 5: -y does not make a FIFO a replaceable output either.
    func testF5OutputThatIsAFIFOIsRefusedEvenWithOverwrite() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let fifo = dir.appendingPathComponent("out.mp4")
        try makeFIFO(fifo)
        let run = try vmerge(["a.mov", "-o", "out.mp4", "-y", "--min-duration", "0"], in: dir, timeout: 20)
        assertRefused(run, naming: ["out.mp4"])
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
    }

    /// Finding 5: --report naming a FIFO is refused before any work, without hanging.
    func testF5ReportThatIsAFIFOIsRefusedWithoutHanging() throws {
        let dir = try scratchDirectory()
        let fifo = dir.appendingPathComponent("r.json")
        try makeFIFO(fifo)
        let run = try mergeTinyClip(["--report", "r.json"], in: dir)
        assertRefused(run, naming: ["r.json"])
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind")
    }

    /// Finding 5: a report that cannot be written as a regular file (a directory) fails the run
    /// before an output is published.
    func testF5ReportThatIsADirectoryLeavesNoOutput() throws {
        let dir = try scratchDirectory()
        let folder = dir.appendingPathComponent("rdir")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let run = try mergeTinyClip(["--report", "rdir"], in: dir)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertNotEqual(run.status, 0, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind: \(run.log)")
        XCTAssertEqual(fileType(folder), S_IFDIR)
        XCTAssertEqual(listing(folder), [])
    }

    /// Finding 5: --report /dev/fd/3 (not a regular file, and fd 3 is not open in the child)
    /// fails the run before an output is published.
    func testF5ReportOnADeviceFileDescriptorPathLeavesNoOutput() throws {
        let dir = try scratchDirectory()
        let run = try mergeTinyClip(["--report", "/dev/fd/3"], in: dir)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertNotEqual(run.status, 0, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind: \(run.log)")
    }

    /// Finding 5: --report naming a character device (a private copy of /dev/null, made with
    /// mknod; root only) is refused, and the device stays a device.
    func testF5ReportThatIsACharacterDeviceIsRefused() throws {
        try XCTSkipIf(getuid() != 0, "mknod needs root")
        let dir = try scratchDirectory()
        let device = dir.appendingPathComponent("null")
        let made = try runProgram(URL(fileURLWithPath: "/usr/bin/mknod"), [device.path, "c", "1", "3"], in: dir)
        try XCTSkipIf(made.status != 0, "mknod not allowed here: \(made.stderr)")
        let run = try mergeTinyClip(["--report", "null"], in: dir)
        assertRefused(run, naming: ["null"])
        XCTAssertEqual(fileType(device), S_IFCHR, "still a character device")
        XCTAssertNil(fileType(dir.appendingPathComponent("out.mp4")), "no output left behind")
    }

    // MARK: - finding 6: FIFOs where outputs and job files go

    /// Finding 6: a job list whose output is an existing FIFO: that job fails, the batch ends.
    func testF6BatchWithAFIFOAsOutputFinishes() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let fifo = dir.appendingPathComponent("x.mp4")
        try makeFIFO(fifo)
        try writeLines([#"{"inputs":["a.mov"],"output":"x.mp4"}"#], to: dir.appendingPathComponent("jobs.jsonl"))
        let run = try vmerge(["batch", "jobs.jsonl", "--min-duration", "0"], in: dir, timeout: 20)
        XCTAssertFalse(run.timedOut, "hung: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertEqual(run.status, 1, "the job failed: \(run.log)")
        assertOnlyVMergeLines(run)
        XCTAssertEqual(fileType(fifo), S_IFIFO, "still a FIFO")
    }

    /// Finding 6: OUTBOX/job.mp4 is a FIFO: the worker neither hangs nor loses the job.
    func testF6WatchWithAFIFOInTheOutboxFinishes() throws {
        let dir = try scratchDirectory()
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

    /// Finding 6: a ready job folder whose job.json is a FIFO: the job fails, the worker goes on.
    func testF6JobJSONThatIsAFIFOFailsTheJob() throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let folder = try makeJob(inbox, "job")
        try makeFIFO(folder.appendingPathComponent("job.json"))
        let run = try watchOnce(dir, timeout: 20)
        XCTAssertFalse(run.timedOut, "hung: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertFalse(failedEntries(inbox, job: "job").isEmpty, "the job is in .failed: \(run.log)")
        XCTAssertFalse(listing(dir.appendingPathComponent("out")).contains { $0.hasPrefix("job") }, "nothing published")
    }

    // MARK: - finding 7: stalls

    /// Finding 7a: a loose file whose name leaves no room for the claim's suffix fails with a
    /// "too long" line and leaves the inbox's top level, instead of being skipped on every scan.
    func testF7aALooseFileWithAnOverlongNameFailsAndDoesNotLoop() throws {
        let dir = try scratchDirectory()
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

    /// Finding 7b: a job put back for lack of space (its job.json asks for more than is free, but
    /// less than the file system holds) is not done: --once exits 1, and the job is back in the
    /// inbox, whole. (Asking for more than the file system holds fails the job at once: F9.)
    func testF7bAJobPutBackUnderOnceIsReported() throws {
        let dir = try scratchDirectory()
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

    /// Review: a job put back for space is not claimed again at once (it used to be claimed
    /// thousands of times a minute, starving the rest); the other jobs are done meanwhile.
    func testAJobPutBackForSpaceWaitsAndOthersGoOn() throws {
        let dir = try scratchDirectory()
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

    /// Finding 7c: a read-only inbox (the claim fails) is an error under --once, not a silent
    /// exit 0. As root, permissions do not stop a write, so the inbox is made a read-only bind
    /// mount (skipped where mounting is not allowed).
    func testF7cAReadOnlyInboxIsReported() throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "job")
        for sub in [".processing", ".done", ".failed"] {
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
            if mounted && readOnly.status != 0 { _ = try runProgram(URL(fileURLWithPath: "/bin/umount"), [inbox.path], in: dir) }
            try XCTSkipIf(readOnly.status != 0, "finding 7c: cannot make a read-only bind mount here")
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

    /// Finding 7: an inbox removed and made anew (a redeploy, a cleanup script) is taken up again:
    /// the worker re-creates its folders and does the job that arrives in the new inbox.
    func testF7AnInboxRemovedAndMadeAnewIsWatchedAgain() throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let (process, err) = try startWatcher(["--poll"], in: dir)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let outbox = dir.appendingPathComponent("out")
        func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline && !condition() { Thread.sleep(forTimeInterval: 0.05) }
            return condition()
        }
        // Up and running: its three folders made (.failed is the last).
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: inbox.appendingPathComponent(".failed").path) })
        Thread.sleep(forTimeInterval: 0.5)
        try FileManager.default.removeItem(at: inbox)
        Thread.sleep(forTimeInterval: 2.5)  // at least one look at the missing inbox
        _ = try makeJob(inbox, "again")
        XCTAssertTrue(
            waitFor(30) { listing(outbox).contains("again.mp4") }, "the job in the new inbox was never done")
        kill(process.processIdentifier, SIGTERM)
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, log)
        XCTAssertTrue(log.contains("disappeared"), log)
        XCTAssertEqual(listing(inbox).filter { $0.hasPrefix(".") }, [".done", ".failed", ".processing"])
    }

    /// Finding 7d: a status file whose folder does not exist stops the watcher at start (not a
    /// watcher that runs for ever without the status it was asked to keep); the command's mistake,
    /// so exit 2.
    func testF7dAStatusFileInAMissingFolderFailsAtStart() throws {
        let dir = try scratchDirectory()
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("in"), withIntermediateDirectories: true)
        let run = try vmerge(
            ["watch", "in", "--out", "out", "--status-file", "missing/dir/status.json"], in: dir, timeout: 10)
        XCTAssertFalse(run.timedOut, "still running after 10 s: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertEqual(run.status, 2, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertTrue(run.lines.contains { $0.contains("status.json") }, "names the status file: \(run.log)")
    }

    // MARK: - finding 8: confinement of a watch job's inputs

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

    private func assertJobsConfined(
        _ run: Run, inbox: URL, outbox: URL, jobs: [String], file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertFalse(run.timedOut || run.signalled, run.log, file: file, line: line)
        XCTAssertEqual(run.status, 1, run.log, file: file, line: line)
        for job in jobs {
            XCTAssertFalse(
                failedEntries(inbox, job: job).isEmpty, "\(job) is in .failed: \(run.log)", file: file, line: line)
            XCTAssertFalse(
                listing(outbox).contains { $0.hasPrefix(job) }, "nothing published for \(job)", file: file, line: line)
        }
    }

    /// Finding 8: job.json inputs climbing out of the job folder with "..".
    func testF8ParentRelativeInputsAreRefused() throws {
        let dir = try scratchDirectory()
        let inbox = try confinementLayout(dir)
        // From box/in/up2 "../../outside.mov" is box/outside.mov; "../../../" reaches dir/ from
        // the job folder and box/ from its claim in .processing: a real clip either way.
        try makeJob(inbox, "up2", jobJSON: #"{"inputs": ["../../outside.mov"]}"#)
        try makeJob(inbox, "up3", jobJSON: #"{"inputs": ["../../../outside.mov"]}"#)
        let run = try confinedWatch(dir)
        assertJobsConfined(run, inbox: inbox, outbox: dir.appendingPathComponent("out"), jobs: ["up2", "up3"])
    }

    /// Finding 8: job.json naming an absolute path outside the inbox.
    func testF8AbsoluteInputsAreRefused() throws {
        let dir = try scratchDirectory()
        let inbox = try confinementLayout(dir)
        try makeJob(
            inbox, "abs", jobJSON: #"{"inputs": ["\#(dir.appendingPathComponent("outside.mov").path)"]}"#)
        let run = try confinedWatch(dir)
        assertJobsConfined(run, inbox: inbox, outbox: dir.appendingPathComponent("out"), jobs: ["abs"])
    }

    /// Finding 8: a job folder holding a symlink to a clip outside the inbox.
    func testF8ASymlinkedClipIsRefused() throws {
        let dir = try scratchDirectory()
        let inbox = try confinementLayout(dir)
        let folder = inbox.appendingPathComponent("link")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try symlink(folder.appendingPathComponent("clip.mov"), to: dir.appendingPathComponent("outside.mov"))
        try Data().write(to: folder.appendingPathComponent(".ready"))
        let run = try confinedWatch(dir)
        assertJobsConfined(run, inbox: inbox, outbox: dir.appendingPathComponent("out"), jobs: ["link"])
    }

    /// Finding 8: a job folder with a symlinked subfolder (pointing outside the inbox) whose clip
    /// the job.json names by a path that looks local.
    func testF8ASymlinkedSubfolderIsRefused() throws {
        let dir = try scratchDirectory()
        let inbox = try confinementLayout(dir)
        let folder = try makeJob(inbox, "sub", jobJSON: #"{"inputs": ["clip1.mov", "more/outside.mov"]}"#)
        try symlink(folder.appendingPathComponent("more"), to: dir.appendingPathComponent("clips"))
        let run = try confinedWatch(dir)
        assertJobsConfined(run, inbox: inbox, outbox: dir.appendingPathComponent("out"), jobs: ["sub"])
    }

    /// Finding 8: --allow-inputs admits absolute inputs under the folder it names.
    func testF8AllowInputsAdmitsAnAbsoluteInput() throws {
        let dir = try scratchDirectory()
        let inbox = try confinementLayout(dir)
        try makeJob(
            inbox, "abs", jobJSON: #"{"inputs": ["\#(dir.appendingPathComponent("clips/outside.mov").path)"]}"#)
        let run = try confinedWatch(dir, ["--allow-inputs", dir.appendingPathComponent("clips").path])
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertEqual(fileType(dir.appendingPathComponent("out/abs.mp4")), S_IFREG, run.log)
        XCTAssertEqual(listing(inbox.appendingPathComponent(".failed")), [])
    }

    // MARK: - finding 9: job.json strictness

    /// Finding 9: a job folder ("bad", one valid clip) with this job.json (or a folder named
    /// job.json) fails into .failed with nothing published; the valid job beside it is done.
    private func assertBadJobJSONFailsOnlyItsJob(
        _ jobJSON: String?, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        let bad = try makeJob(inbox, "bad", jobJSON: jobJSON)
        if jobJSON == nil {
            try FileManager.default.createDirectory(
                at: bad.appendingPathComponent("job.json"), withIntermediateDirectories: true)
        }
        try makeJob(inbox, "good")
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertFalse(run.timedOut || run.signalled, run.log, file: file, line: line)
        XCTAssertEqual(run.status, 1, run.log, file: file, line: line)
        assertOnlyVMergeLines(run, file: file, line: line)
        XCTAssertFalse(
            failedEntries(inbox, job: "bad").isEmpty, "bad is in .failed: \(run.log)", file: file, line: line)
        XCTAssertTrue(
            listing(outbox).allSatisfy { $0.hasPrefix("good") }, "nothing published for bad: \(listing(outbox))",
            file: file, line: line)
        XCTAssertTrue(listing(outbox).contains("good.mp4"), "the valid job is done: \(run.log)", file: file, line: line)
    }

    /// Finding 9: an unknown top-level field.
    func testF9UnknownTopLevelFieldFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"inputz": ["clip1.mov"]}"#)
    }

    /// Finding 9: "inputs" of the wrong type.
    func testF9InputsOfTheWrongTypeFailTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"inputs": "clip1.mov"}"#)
    }

    /// Finding 9: an empty "inputs" list.
    func testF9EmptyInputsFailTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"inputs": []}"#)
    }

    /// Finding 9: an option value of the wrong type.
    func testF9OptionOfTheWrongTypeFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"options": {"width": "wide"}}"#)
    }

    /// Finding 9: an unknown option.
    func testF9UnknownOptionFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"options": {"widht": 320}}"#)
    }

    /// Finding 9: an output name with a newline in it.
    func testF9OutputWithANewlineFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(#"{"output": "a\nb.mp4"}"#)
    }

    /// Finding 9: job.json that is a directory.
    func testF9JobJSONThatIsADirectoryFailsTheJob() throws {
        try assertBadJobJSONFailsOnlyItsJob(nil)
    }

    /// Finding 9: a job's own --min-free is honoured: the job does not run.
    func testF9AJobsMinFreeIsHonoured() throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in"), outbox = dir.appendingPathComponent("out")
        try makeJob(inbox, "big", jobJSON: #"{"options": {"min-free": "100T"}}"#)
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertFalse(run.timedOut || run.signalled, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertTrue(run.lines.contains { $0.contains("not enough free space") && $0.contains("big") }, run.log)
        XCTAssertFalse(listing(outbox).contains { $0.hasSuffix(".mp4") }, "no output: \(listing(outbox))")
        XCTAssertTrue(
            !failedEntries(inbox, job: "big").isEmpty || listing(inbox).contains("big"),
            "failed or put back: \(run.log)")
    }

    // MARK: - finding 10: smaller ones

    /// Finding 10: -o "" is a usage error at once, and nothing is created.
    func testF10AnEmptyOutputNameIsAUsageError() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let run = try vmerge(["a.mov", "-o", "", "--min-duration", "0"], in: dir, timeout: 10)
        assertUsageError(run)
        XCTAssertLessThan(run.seconds, 5, run.log)
        XCTAssertEqual(listing(dir), ["a.mov"])
    }

    /// Finding 10: -o naming a folder that does not exist ("newdir/") fails before 40 clips are
    /// probed and encoded, and leaves nothing.
    func testF10AnOutputInAMissingFolderFailsBeforeAnyWork() throws {
        let dir = try scratchDirectory()
        let names = (1...40).map { String(format: "clip%02d.mov", $0) }
        for name in names { try copyFixture("a_", to: dir.appendingPathComponent(name)) }
        let run = try vmerge(names + ["-o", "newdir/"], in: dir, timeout: 5)
        XCTAssertFalse(run.timedOut, "still working after 5 s: \(run.log)")
        XCTAssertFalse(run.signalled, run.log)
        XCTAssertTrue([1, 2].contains(run.status), run.log)
        assertOnlyVMergeLines(run)
        XCTAssertEqual(listing(dir), names, "no files left")
    }

    /// Finding 10: an endless input list on stdin (/dev/zero) is refused within 20 s. The child
    /// runs under `ulimit -v` (4 GiB) so that a version reading it all cannot exhaust the
    /// machine's memory; it then dies of a signal instead of exiting 1. (Not under
    /// AddressSanitizer, whose shadow memory alone is larger: `make test-asan` sets LSAN_OPTIONS.)
    func testF10AnEndlessInputListOnStandardInputIsRefused() throws {
        let dir = try scratchDirectory()
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
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("vmerge: ") }, run.log)
        assertOnlyVMergeLines(run)
        XCTAssertEqual(listing(dir), [])
    }

    /// Finding 10: a 7 MB job.json fails its job quickly. `padding` builds the oversized but
    /// otherwise valid object from a padding length.
    private func assertHugeJobJSONFailsTheJob(
        _ padding: (Int) -> String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let json = padding(7 << 20)
        XCTAssertGreaterThan(json.utf8.count, 7_000_000)
        XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(json.utf8)), "valid JSON", file: file, line: line)
        try makeJob(inbox, "huge", jobJSON: json)
        let run = try watchOnce(dir, timeout: 10)
        XCTAssertFalse(run.timedOut, "still working after 10 s: \(run.log)", file: file, line: line)
        XCTAssertFalse(run.signalled, run.log, file: file, line: line)
        XCTAssertEqual(run.status, 1, run.log, file: file, line: line)
        XCTAssertFalse(
            failedEntries(inbox, job: "huge").isEmpty, "huge is in .failed: \(run.log)", file: file, line: line)
        XCTAssertFalse(
            listing(dir.appendingPathComponent("out")).contains { $0.hasPrefix("huge") }, "nothing published",
            file: file, line: line)
    }

    /// Finding 10: 7 MB job.json, padded with a long string field.
    func testF10AHugeJobJSONWithALongStringFailsTheJob() throws {
        try assertHugeJobJSONFailsTheJob { pad in
            #"{"inputs": ["clip1.mov"], "note": ""# + String(repeating: "x", count: pad) + #""}"#
        }
    }

    /// Finding 10: 7 MB job.json whose only oddity is its size (known fields, whitespace
    /// padding), so that only a size limit can fail it.
    func testF10AHugeJobJSONPaddedWithWhitespaceFailsTheJob() throws {
        try assertHugeJobJSONFailsTheJob { pad in
            #"{"inputs": ["clip1.mov"]"# + String(repeating: " ", count: pad) + "}"
        }
    }

    /// Finding 10: a plain merge killed with SIGKILL mid-encode leaves its temporary; the next
    /// run with the same -o removes it.
    func testF10TheTemporaryOfAKilledMergeIsRemovedByTheNextRun() throws {
        let dir = try scratchDirectory()
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

    // MARK: - found in review

    /// Review 1: a job folder swapped for a link between the scan and the claim is claimed as
    /// the link, which is never followed: the job fails and nothing outside is read.
    func testAJobFolderSwappedForALinkAfterTheScanIsNotFollowed() throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "A", fixture: "b_", clips: 12)
        _ = try makeJob(inbox, "B")
        let secret = dir.appendingPathComponent("secret")
        try copyFixture("a_", to: secret.appendingPathComponent("private.mov"))
        let watcher = try startWatcher(["--once"], in: dir, capture: false).process
        let processing = inbox.appendingPathComponent(".processing")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && !listing(processing).contains(where: { $0.hasPrefix("A@") }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        try FileManager.default.moveItem(at: inbox.appendingPathComponent("B"), to: dir.appendingPathComponent("B.real"))
        try symlink(inbox.appendingPathComponent("B"), to: secret)
        watcher.waitUntilExit()
        XCTAssertEqual(watcher.terminationStatus, 1, "B failed")
        XCTAssertFalse(listing(dir.appendingPathComponent("out")).contains("B.mp4"), "nothing of the secret folder")
        XCTAssertTrue(listing(inbox.appendingPathComponent(".failed")).contains { $0.hasPrefix("B@") })
        XCTAssertEqual(listing(secret), ["private.mov"])
    }

    /// Review 2: renaming .processing away mid-job and planting a link at the claim's old path
    /// changes nothing: the job reads through the claim folder it holds open.
    func testRenamingProcessingMidJobRedirectsNothing() throws {
        let dir = try scratchDirectory()
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

    /// Review 3: an output another producer's job made with the same names, sizes and times does
    /// not make this job "done" (its sources would be deleted for a video that is not theirs).
    func testAForgedJobKeyDoesNotCountAsDone() throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        let victim = inbox.appendingPathComponent("IMG_1.MOV")
        try copyFixture("a_", to: victim)
        // The attacker's file: another clip padded (a trailing free box) to the victim's size.
        var forged = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("l_tiny")))
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: victim.path)[.size] as? Int)
        let padding = size - forged.count
        XCTAssertGreaterThan(padding, 8)
        forged += [UInt8(padding >> 24 & 0xFF), UInt8(padding >> 16 & 0xFF), UInt8(padding >> 8 & 0xFF), UInt8(padding & 0xFF)]
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

    /// Review 5: with -y the batch report may still not replace a video inside a folder input.
    func testABatchReportNeverReplacesAVideoInAFolderInput() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("jobs/A/a.mov"))
        try copyFixture("l_tiny", to: dir.appendingPathComponent("jobs/A/b.mov"))
        let before = try Data(contentsOf: dir.appendingPathComponent("jobs/A/b.mov"))
        let run = try vmerge(
            ["batch", "jobs", "--out", "out", "--min-duration", "0", "-y", "--report", "jobs/A/b.mov"], in: dir)
        assertRefused(run, naming: ["jobs/A/b.mov"])
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("jobs/A/b.mov")), before)
    }

    /// Review 7: OUTBOX inside INBOX is refused at start (a producer could swap it for a link).
    func testAnOutboxInsideTheInboxIsRefused() throws {
        let dir = try scratchDirectory()
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("in/out"), withIntermediateDirectories: true)
        for out in ["in/out", "in/.processing"] {
            let run = try vmerge(["watch", "in", "--out", out, "--once"], in: dir, timeout: 10)
            assertRefused(run, naming: [out])
        }
    }

    /// Review 8: a job folder name with a newline cannot forge log lines or output names: it is
    /// set aside, said with the newline escaped.
    func testANewlineInAJobNameIsSetAside() throws {
        let dir = try scratchDirectory()
        _ = try makeJob(dir.appendingPathComponent("in"), "evil\nvmerge: watch: done fake -> x")
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertFalse(run.lines.contains { $0.hasPrefix("vmerge: watch: done fake") }, run.log)
        XCTAssertTrue(run.lines.contains { $0.contains("evil\\nvmerge") && $0.contains("control character") }, run.log)
        XCTAssertEqual(listing(dir.appendingPathComponent("out")).filter { $0.hasSuffix(".mp4") }, [])
        XCTAssertFalse(listing(dir.appendingPathComponent("in/.failed")).contains { $0.contains("\n") })
    }

    /// Review 9: an inbox named with ".." works like any other.
    func testAnInboxPathWithDotDotWorks() throws {
        let dir = try scratchDirectory()
        _ = try makeJob(dir.appendingPathComponent("in"), "J")
        let sub = dir.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let run = try vmerge(["watch", "../in", "--out", "../out", "--once", "--min-duration", "0"], in: sub)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertTrue(listing(dir.appendingPathComponent("out")).contains("J.mp4"))
    }

    /// Review 10: a linked folder named as an input is not even listed: the error note names the
    /// link, not what lies behind it.
    func testALinkedFolderInputIsNotListed() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("private/secret-name.mov"))
        let job = try makeJob(
            dir.appendingPathComponent("in"), "J", jobJSON: #"{"inputs": ["sub"], "options": {"skip-invalid": true}}"#)
        try symlink(job.appendingPathComponent("sub"), to: dir.appendingPathComponent("private"))
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertFalse(run.result.stderr.contains("secret-name"), run.log)
        let notes = listing(dir.appendingPathComponent("in/.failed")).filter { $0.hasSuffix(".error.json") }
        let note = try String(contentsOf: dir.appendingPathComponent("in/.failed/\(notes.first ?? "")"), encoding: .utf8)
        XCTAssertFalse(note.contains("secret-name"), note)
        XCTAssertTrue(note.contains("symbolic link"), note)
    }

    /// Review: the report's temporary of a run killed with -9 is removed by the next run.
    func testTheReportTemporaryOfAKilledRunIsRemoved() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        let dead = Process()
        dead.executableURL = URL(fileURLWithPath: "/bin/true")
        try dead.run()
        dead.waitUntilExit()
        let stale = ".r.json.vmerge-\(ProcessInfo.processInfo.hostName.split(separator: ".").first ?? "")-\(dead.processIdentifier)-x.tmp"
        try Data("{".utf8).write(to: dir.appendingPathComponent(stale))
        let run = try vmerge(["a.mov", "-o", "out.mp4", "--report", "r.json", "--min-duration", "0"], in: dir)
        XCTAssertEqual(run.status, 0, run.log)
        XCTAssertEqual(listing(dir), ["a.mov", "out.mp4", "r.json"])
    }

    /// Review 6 (batch): a folder batch with a job folder whose name has a newline stops before
    /// any work, saying so, instead of leaving that job out silently. (A name that is not UTF-8 is
    /// a job like any other: NamesAreBytesTests.)
    func testAFolderBatchWithAnUnnameableJobFolderStops() throws {
        for bad in [Array("bad\nname".utf8)] {
            let dir = try scratchDirectory()
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

    /// --delete-sources deletes only what the job consumed: a file the producer adds to the job
    /// folder after the claim (never merged) is kept in .done, and so is a clip past
    /// --max-duration.
    func testDeleteSourcesNeverDeletesWhatWasNotMerged() throws {
        let dir = try scratchDirectory()
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
        let dir = try scratchDirectory()
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

    // MARK: - found in the second review

    /// Review 2.1: a parked folder claim whose marker is gone (removed by its producer, or the
    /// workers restarted with another --marker) is recovered as the folder job it was, never
    /// deleted as an "empty" loose-file claim; the dead worker's temporary goes.
    func testARecoveredClaimWithoutItsMarkerIsNotDeleted() throws {
        let dir = try scratchDirectory()
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

    /// Review 2.4: a job.json naming its folder thousands of times fails at once (bounded), instead
    /// of expanding to millions of paths.
    func testAJobNamingItsFolderOverAndOverFailsFast() throws {
        let dir = try scratchDirectory()
        let job = try makeJob(
            dir.appendingPathComponent("in"), "J",
            jobJSON: "{\"inputs\": [" + Array(repeating: "\".\"", count: 5000).joined(separator: ",") + "]}")
        for i in 0..<300 { _ = FileManager.default.createFile(atPath: job.path + "/v\(i).mov", contents: Data([0])) }
        let run = try watchOnce(dir, timeout: 30)
        XCTAssertFalse(run.timedOut, run.log)
        XCTAssertEqual(run.status, 1, run.log)
        XCTAssertLessThan(run.seconds, 20, run.log)
        XCTAssertTrue(run.lines.contains { $0.contains("more than") }, run.log)
    }

    /// Review 2.5: an output name taken while the job ran (another worker, anyone) does not fail
    /// the job or encode it again: the finished file goes to the next free name.
    func testAnOutputNameTakenMidJobGoesToTheNextName() throws {
        let dir = try scratchDirectory()
        let inbox = dir.appendingPathComponent("in")
        _ = try makeJob(inbox, "J", fixture: "b_", clips: 10, jobJSON: #"{"output": "x.mp4"}"#)
        let outbox = dir.appendingPathComponent("out")
        let (watcher, err) = try startWatcher(["--once"], in: dir)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && !listing(outbox).contains(where: { $0.hasSuffix(".tmp") }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        try Data("someone's".utf8).write(to: outbox.appendingPathComponent("x.mp4"))
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watcher.waitUntilExit()
        XCTAssertEqual(watcher.terminationStatus, 0, log)
        XCTAssertFalse(log.contains("retrying"), log)
        XCTAssertEqual(try String(contentsOf: outbox.appendingPathComponent("x.mp4"), encoding: .utf8), "someone's")
        XCTAssertEqual(listing(outbox), ["x-2.mp4", "x-2.mp4.json", "x.mp4"])
        XCTAssertTrue(log.contains("done J -> out/x-2.mp4"), log)
    }

    /// Review 2.6: --allow-inputs may not hold the inbox (jobs could read other producers' files).
    func testAllowInputsHoldingTheInboxIsRefused() throws {
        let dir = try scratchDirectory()
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("in/shared"), withIntermediateDirectories: true)
        for allowed in [".", "in", "in/shared"] {
            let run = try vmerge(["watch", "in", "--out", "out", "--once", "--allow-inputs", allowed], in: dir, timeout: 10)
            assertRefused(run, naming: ["--allow-inputs"])
        }
    }

    /// Review 2.7: with -y the output may still not replace the input list or the job list.
    func testTheOutputNeverReplacesTheInputListOrTheJobList() throws {
        let dir = try scratchDirectory()
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        try "a.mov\n".write(to: dir.appendingPathComponent("list.txt"), atomically: true, encoding: .utf8)
        let merge = try vmerge(["--inputs-from", "list.txt", "-o", "list.txt", "-y", "--min-duration", "0"], in: dir)
        assertRefused(merge, naming: ["list.txt"])
        XCTAssertEqual(try String(contentsOf: dir.appendingPathComponent("list.txt"), encoding: .utf8), "a.mov\n")
        let line = #"{"inputs": ["a.mov"], "output": "jobs.jsonl"}"# + "\n"
        try line.write(to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let batch = try vmerge(["batch", "jobs.jsonl", "-y", "--min-duration", "0"], in: dir)
        assertRefused(batch, naming: ["jobs.jsonl"])
        XCTAssertEqual(try String(contentsOf: dir.appendingPathComponent("jobs.jsonl"), encoding: .utf8), line)
    }
}
