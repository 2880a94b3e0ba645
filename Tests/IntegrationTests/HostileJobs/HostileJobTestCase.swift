import Foundation
import TestSupport
import XCTest

/// Issue 11: hostile job folders, job lists and targets. Each test runs the built `vmerge` binary
/// against a planted situation (links, FIFOs, devices, odd names, odd job.json files) and checks
/// the file system, the exit status and what stderr says. The test classes are named by the
/// behaviour they hold (OutputCollisionTests, NonRegularTargetTests, WatchConfinementTests...);
/// this is what they share.
///
/// "Refused" below means: exit status 1 or 2 (no crash signal, no watchdog kill), every stderr
/// line starts with "vmerge: ", one of them names the path in question, and no target changed.
/// Tests run as root in CI, so no safety check here relies on a permission denial.
class HostileJobTestCase: XCTestCase {
    /// One finished run of the binary.
    struct Run {
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
    final class Watchdog: @unchecked Sendable {
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

    /// Runs vmerge in `dir`, killed (and reported as timed out) after `timeout` seconds.
    func vmerge(_ arguments: [String], in dir: URL, timeout: Double = 60) throws -> Run {
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
    func startWatcher(_ extra: [String], in dir: URL, capture: Bool = true) throws -> (
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
    func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && !condition() { Thread.sleep(forTimeInterval: 0.01) }
        return condition()
    }

    /// `vmerge a.mov -o out.mp4 --min-duration 0 <extra>` on a copy of the 0.1 s fixture.
    func mergeTinyClip(_ extra: [String], in dir: URL) throws -> Run {
        try copyFixture("l_tiny", to: dir.appendingPathComponent("a.mov"))
        return try vmerge(["a.mov", "-o", "out.mp4", "--min-duration", "0"] + extra, in: dir, timeout: 20)
    }

    func watchOnce(_ dir: URL, _ extra: [String] = [], timeout: Double = 60) throws -> Run {
        try vmerge(["watch", "in", "--out", "out", "--once", "--min-duration", "0"] + extra, in: dir, timeout: timeout)
    }

    /// lstat's file type (S_IFREG, S_IFLNK, S_IFIFO...), nil if nothing is there.
    func fileType(_ url: URL) -> mode_t? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    func inode(_ url: URL) -> UInt64? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    func copyFixture(_ prefix: String, to url: URL) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: url.path)
    }

    func symlink(_ url: URL, to target: URL) throws {
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: target.path)
    }

    func makeFIFO(_ url: URL) throws {
        XCTAssertEqual(mkfifo(url.path, 0o644), 0, "mkfifo \(url.path)")
    }

    /// A file whose content and inode must survive the test.
    struct Victim {
        static let content = "precious\n"
        let url: URL
        let inode: UInt64
    }

    func makeVictim(_ dir: URL) throws -> Victim {
        let url = dir.appendingPathComponent("victim.txt")
        try Victim.content.write(to: url, atomically: false, encoding: .utf8)
        return Victim(url: url, inode: try XCTUnwrap(inode(url)))
    }

    func assertUntouched(_ victim: Victim, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(fileType(victim.url), S_IFREG, "the victim is still a regular file", file: file, line: line)
        XCTAssertEqual(inode(victim.url), victim.inode, "the victim is the same file (inode)", file: file, line: line)
        let content = (try? String(contentsOf: victim.url, encoding: .utf8)) ?? "<unreadable>"
        XCTAssertEqual(content, Victim.content, "the victim's content is unchanged", file: file, line: line)
    }

    /// Every stderr line is a vmerge message (no stack traces, no multi-line errors). A usage
    /// error (exit 2) may end with today's "Usage: vmerge ..." hint line: the hint is not part of
    /// the error message (VMergeCLITests pin it as the last line).
    func assertOnlyVMergeLines(_ run: Run, file: StaticString = #filePath, line: UInt = #line) {
        let stray = run.lines.enumerated().filter { index, text in
            let hint = run.status == 2 && index == run.lines.count - 1 && text.hasPrefix("Usage: vmerge")
            return !text.hasPrefix("vmerge: ") && !hint
        }.map(\.element)
        XCTAssertTrue(
            stray.isEmpty, "\(stray.count) stderr line(s) not starting with 'vmerge: ', first: \(stray.first ?? "")",
            file: file, line: line)
    }

    /// Exit 1 or 2, by itself (no signal, no watchdog), vmerge lines only, one naming `path`
    /// (any of `names`) and saying `reason`.
    func assertRefused(
        _ run: Run, naming names: [String], saying reason: String? = nil, file: StaticString = #filePath,
        line: UInt = #line
    ) {
        XCTAssertFalse(run.timedOut, "hung: \(run.log)", file: file, line: line)
        XCTAssertFalse(run.signalled, "crashed: \(run.log)", file: file, line: line)
        XCTAssertTrue([1, 2].contains(run.status), "refused with exit 1 or 2: \(run.log)", file: file, line: line)
        assertOnlyVMergeLines(run, file: file, line: line)
        XCTAssertTrue(
            run.lines.contains { text in
                text.hasPrefix("vmerge: ") && names.contains { text.contains($0) }
                    && reason.map { text.contains($0) } ?? true
            }, "a 'vmerge: ' line names \(names), saying \(reason ?? "why"): \(run.log)", file: file, line: line)
    }

    /// A usage error: exit 2, exactly one error line (a vmerge line; the "Usage:" hint aside), and
    /// it says `reason`.
    func assertUsageError(_ run: Run, saying reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(run.timedOut || run.signalled, run.log, file: file, line: line)
        XCTAssertEqual(run.status, 2, run.log, file: file, line: line)
        XCTAssertEqual(
            run.lines.filter { !$0.hasPrefix("Usage: vmerge") }.count, 1, "one error line: \(run.log)", file: file,
            line: line)
        assertOnlyVMergeLines(run, file: file, line: line)
        XCTAssertTrue(
            run.lines.first?.contains(reason) ?? false, "says '\(reason)': \(run.log)", file: file, line: line)
    }

    /// An inbox job folder: `clips` copies of a fixture, the .ready marker, and a job.json if given.
    @discardableResult
    func makeJob(
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

    func failedEntries(_ inbox: URL, job: String) -> [String] {
        listing(inbox.appendingPathComponent(".failed")).filter { $0.hasPrefix(job) }
    }

    func writeLines(_ lines: [String], to url: URL) throws {
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: false, encoding: .utf8)
    }
}
