import Foundation
import TestSupport
import XCTest

/// What a merge prints while it runs: the JSON progress stream (on stderr or --progress-fd, and a
/// reader that stops reading), the terminal's bar and colours, -q's silence and -v's FFmpeg lines.
final class ProgressAndMessagesTests: XCTestCase {
    // MARK: progress

    func testJSONProgressIsOneObjectPerLineEndingWithEnd() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [Fixtures.path("a_"), Fixtures.path("b_"), "-o", "out.mp4", "--progress", "json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let objects = run.stderrLines.filter { $0.hasPrefix("{") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(objects.count, run.stderrLines.count, "every line is JSON, the summary too: \(run.stderr)")
        let progress = objects.filter { $0["event"] as? String == "progress" }
        XCTAssertEqual(progress.first?["phase"] as? String, "probing")
        XCTAssertEqual(progress.last?["progress"] as? String, "end")
        XCTAssertEqual(progress.last?["percent"] as? Double, 100)
        let percents = progress.compactMap { $0["percent"] as? Double }
        XCTAssertEqual(percents, percents.sorted(), "never goes backwards")
        XCTAssertTrue((objects.last?["text"] as? String)?.hasPrefix("vmerge: wrote out.mp4") ?? false, run.stderr)
    }

    func testProgressFDSendsTheStreamElsewhere() throws {
        let dir = try makeScratchDirectory()
        let command = "exec \"$0\" \"$@\" 3>progress.jsonl"
        let run = try runProgram(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", command, VMergeBinary.url.path, Fixtures.path("a_"), "-o", "out.mp4", "--progress", "json",
                "--progress-fd", "3",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stderr.contains("{"), run.stderr)
        let lines = try String(contentsOf: dir.appendingPathComponent("progress.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        XCTAssertGreaterThanOrEqual(lines.count, 2)
        XCTAssertTrue(lines.last?.contains(#""progress":"end""#) ?? false)
        let closed = try VMergeBinary.run([Fixtures.path("a_"), "-o", "x.mp4", "--progress-fd", "9"], in: dir)
        XCTAssertEqual(closed.status, 2)
        XCTAssertEqual(closed.stderrLines, ["vmerge: --progress-fd 9: no such open file descriptor"])
    }

    /// A --progress-fd reader that stops reading (its pipe full) must not keep SIGTERM from
    /// stopping the run: vmerge stops within a second, 143, no output. (It used to block in the
    /// write for ever; only SIGKILL ended it.)
    func testAReaderThatStopsReadingDoesNotKeepASignalFromStoppingTheRun() throws {
        let dir = try makeScratchDirectory()
        // fd 3: a FIFO open for reading and writing that nobody reads, filled before vmerge starts.
        let command = "mkfifo p && exec 3<>p && { dd if=/dev/zero of=/dev/fd/3 bs=4096 count=1024 oflag=nonblock 2>/dev/null; "
            + "exec \"$0\" \"$@\"; }"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", command, VMergeBinary.url.path, Fixtures.path("a_"), "-o", "out.mp4", "--progress", "json",
            "--progress-fd", "3",
        ]
        process.currentDirectoryURL = dir
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertTrue(process.isRunning, "the run should be waiting on its full progress pipe")
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return XCTFail("SIGTERM did not stop a run whose progress reader stopped reading")
        }
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 143)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.mp4").path))
    }

    /// On a terminal: a self-updating bar and coloured prefixes, unless NO_COLOR.
    func testTerminalGetsABarAndColourUnlessNoColor() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            throw XCTSkip("python3 is needed to run vmerge on a pseudo-terminal")
        }
        let dir = try makeScratchDirectory()
        let spawn = "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)"
        let args = [
            "-c", spawn, VMergeBinary.url.path, Fixtures.path("a_"), Fixtures.path("i_"), "-o", "out.mp4", "-y",
        ]
        let python = URL(fileURLWithPath: "/usr/bin/python3")
        let coloured = try runProgram(python, args, in: dir, environment: ["NO_COLOR": "", "TERM": "xterm"])
        XCTAssertEqual(coloured.status, 0, coloured.stdout)
        XCTAssertTrue(coloured.stdout.contains("\r"), "a bar redraws its line")
        XCTAssertTrue(coloured.stdout.contains("% ["), coloured.stdout)
        XCTAssertTrue(coloured.stdout.contains("\u{1B}[1;33mvmerge:\u{1B}[0m"), "warning in colour")
        let plain = try runProgram(python, args, in: dir, environment: ["NO_COLOR": "1", "TERM": "xterm"])
        XCTAssertEqual(plain.status, 0, plain.stdout)
        XCTAssertFalse(plain.stdout.contains("\u{1B}[1;3"), "no colour with NO_COLOR")
        XCTAssertTrue(plain.stdout.contains("vmerge: \(Fixtures.path("i_")): dropped"), plain.stdout)
    }

    // MARK: messages

    func testQuietPrintsNothingOnSuccess() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), Fixtures.path("i_"), "-q", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.stderr, "")
        XCTAssertEqual(run.stdout, "")
    }

    func testVerboseTagsFFmpegMessagesWithTheirFile() throws {
        let dir = try makeScratchDirectory()
        // Damaged in the middle of the media data, so the H.264 decoder complains.
        let damaged = dir.appendingPathComponent("damaged.mov")
        try writeDamagedCopy(to: damaged)
        let verbose = try VMergeBinary.run(["damaged.mov", "-v", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(verbose.status, 0, verbose.stderr)
        let tagged = verbose.stderrLines.filter { $0.hasPrefix("vmerge: damaged.mov: h264: ") }
        XCTAssertFalse(tagged.isEmpty, verbose.stderr)
        let normal = try VMergeBinary.run(["damaged.mov", "-y", "-o", "out.mp4"], in: dir)
        XCTAssertFalse(normal.stderr.contains("h264: "), "FFmpeg is silent without -v: \(normal.stderr)")
    }
}
