import Foundation
import TestSupport
import XCTest

/// Bad inputs and bad requests: one clear line, the right exit status, and nothing left behind.
final class ErrorHandlingTests: XCTestCase {
    private func assertFailsCleanly(
        _ arguments: [String], status: Int32, mentioning words: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(arguments + ["-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, status, run.stderr, file: file, line: line)
        XCTAssertEqual(run.stderrLines.count, 1, "one line: \(run.stderr)", file: file, line: line)
        let message = run.stderrLines.first ?? ""
        XCTAssertTrue(message.hasPrefix("vmerge: "), message, file: file, line: line)
        for word in words {
            XCTAssertTrue(message.contains(word), "'\(message)' should mention '\(word)'", file: file, line: line)
        }
        XCTAssertFalse(message.contains("Fatal error"), file: file, line: line)
        XCTAssertEqual(listing(dir), [], "no output and no temporary file", file: file, line: line)
        XCTAssertTrue(run.stdout.isEmpty, file: file, line: line)
    }

    /// A dry run that would fail lists what it found, then says why in one line, exiting as the
    /// merge would (3 for nothing to merge, 1 for a bad input); it writes nothing.
    func testADryRunThatWouldFailListsEverythingThenSaysWhy() throws {
        let dir = try makeScratchDirectory()
        let short = Fixtures.path("i_short")
        let run = try VMergeBinary.run([short, "-n", "--min-duration", "2", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 3, run.stderr)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "drop  \(short)  dropped: video lasts 1.5 s, under the 2 s minimum")
        XCTAssertTrue(lines.last?.hasPrefix("output  out.mp4  0 clips, 0 s") ?? false, run.stdout)
        XCTAssertEqual(
            run.stderrLines,
            [
                "vmerge: \(short): dropped: video lasts 1.5 s, under the 2 s minimum",
                "vmerge: nothing to merge: its one input clip was dropped",
            ])
        XCTAssertEqual(listing(dir), [])
        let text = Fixtures.path("bad_text")
        let bad = try VMergeBinary.run([Fixtures.path("a_"), text, "--dry-run", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(bad.status, 1, bad.stderr)
        XCTAssertFalse(bad.stderr.contains("Fatal error"))
        XCTAssertEqual(bad.stderrLines.count, 1, bad.stderr)
        XCTAssertTrue(bad.stderrLines.first?.hasPrefix("vmerge: \(text): ") ?? false, bad.stderr)
        XCTAssertEqual(listing(dir), [])
    }

    func testMissingFile() throws {
        try assertFailsCleanly(
            ["/nonexistent/clip.mov"], status: 1, mentioning: ["/nonexistent/clip.mov: ", "no such file"])
    }

    func testEmptyFile() throws {
        let p = Fixtures.path("bad_empty")
        try assertFailsCleanly([p], status: 1, mentioning: ["\(p): ", "empty"])
    }

    func testTextFileNamedMov() throws {
        let p = Fixtures.path("bad_text")
        try assertFailsCleanly([p], status: 1, mentioning: ["\(p): ", "not a readable video"])
    }

    func testTruncatedFile() throws {
        let p = Fixtures.path("bad_truncated")
        try assertFailsCleanly([p], status: 1, mentioning: ["\(p): recording was interrupted before its index"])
    }

    func testAudioOnlyFile() throws {
        let p = Fixtures.path("bad_audio_only")
        try assertFailsCleanly([p], status: 1, mentioning: ["\(p): ", "no video stream"])
    }

    func testOneBadInputStopsTheRunBeforeAnyOutput() throws {
        let bad = Fixtures.path("bad_text")
        try assertFailsCleanly([Fixtures.path("a_"), bad], status: 1, mentioning: [bad])
    }

    func testSkipInvalidDropsBadInputsWithAWarningAndGoesOn() throws {
        let dir = try makeScratchDirectory()
        let bad = Fixtures.path("bad_empty")
        let run = try VMergeBinary.run([bad, Fixtures.path("a_"), "--skip-invalid", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderrLines.contains { $0.hasPrefix("vmerge: \(bad): ") && $0.contains("empty") }, run.stderr)
        let times = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).videoFrames().times
        XCTAssertEqual(times.count, 90, "only a's 3 s remain")
    }

    func testCorruptPacketsAreConcealedAndCounted() throws {
        // 200 bytes of fixture a's media data overwritten: the clip still merges at full length,
        // with one warning that names it and counts what was skipped.
        let dir = try makeScratchDirectory()
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("a_"))))
        var seed: UInt32 = 12345
        for _ in 0..<200 {
            seed = seed &* 1_103_515_245 &+ 12345
            bytes[2000 + Int(seed >> 8) % 26_000] ^= 0xA5
        }
        let damaged = dir.appendingPathComponent("damaged.mov")
        try Data(bytes).write(to: damaged)
        let run = try VMergeBinary.run([damaged.path, "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let warnings = run.stderrLines.filter { $0.hasPrefix("vmerge: \(damaged.path): skipped ") }
        XCTAssertEqual(warnings.count, 1, run.stderr)
        XCTAssertTrue(warnings.first?.hasSuffix("corrupt packets") ?? false, run.stderr)
        let times = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).videoFrames().times
        XCTAssertEqual(times.count, 90, "the clip keeps its 3 s")
    }

    func testAllClipsTooShortExitsThreeWithoutOutput() throws {
        let dir = try makeScratchDirectory()
        let short = Fixtures.path("i_")
        let run = try VMergeBinary.run([short, short, "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 3, run.stderr)
        XCTAssertEqual(
            run.stderrLines,
            [
                "vmerge: \(short): dropped: video lasts 1.5 s, under the 2 s minimum",
                "vmerge: \(short): dropped: video lasts 1.5 s, under the 2 s minimum",
                "vmerge: nothing to merge: all 2 input clips were dropped",
            ])
        XCTAssertEqual(listing(dir), [])
    }

    func testTruncatedRecordingWithIndexPastTheEndIsRefused() throws {
        // A faststart file (moov first) cut in the middle: the index points past the end.
        let dir = try makeScratchDirectory()
        let source = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("a_")))
        let faststart = dir.appendingPathComponent("full.mov")
        try source.write(to: faststart)
        let remux = Process()
        remux.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        remux.arguments = [
            "ffmpeg", "-v", "error", "-i", faststart.path, "-c", "copy", "-movflags", "+faststart",
            dir.appendingPathComponent("fs.mov").path,
        ]
        try remux.run()
        remux.waitUntilExit()
        try XCTSkipIf(remux.terminationStatus != 0, "ffmpeg CLI not available")
        let whole = try Data(contentsOf: dir.appendingPathComponent("fs.mov"))
        let cut = dir.appendingPathComponent("cut.mov")
        try whole.prefix(whole.count * 6 / 10).write(to: cut)
        let run = try VMergeBinary.run([cut.path, "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("cut.mov: file is truncated"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.mp4").path))
    }
}

/// The output file: never clobbered without -y, never one of the inputs, only there when done.
final class OutputSafetyTests: XCTestCase {
    func testExistingOutputNeedsOverwriteFlag() throws {
        let dir = try makeScratchDirectory()
        let out = dir.appendingPathComponent("out.mp4")
        try Data("keep me".utf8).write(to: out)
        let refused = try VMergeBinary.run([Fixtures.path("a_"), "-o", "out.mp4"], in: dir)
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderrLines, ["vmerge: out.mp4: output exists (use -y to overwrite)"])
        XCTAssertEqual(try Data(contentsOf: out), Data("keep me".utf8))
        XCTAssertEqual(listing(dir), ["out.mp4"])

        let replaced = try VMergeBinary.run([Fixtures.path("a_"), "-y", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertEqual(try topLevelBoxes(out.path).prefix(2), ["ftyp", "moov"])
        XCTAssertEqual(listing(dir), ["out.mp4"])
    }

    func testOutputThatIsAnInputIsRefusedEvenWithOverwrite() throws {
        let dir = try makeScratchDirectory()
        let clip = dir.appendingPathComponent("clip.mov")
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: clip.path)
        let before = try Data(contentsOf: clip)
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("alias.mov").path,
            withDestinationPath: clip.path)
        let run = try VMergeBinary.run(["clip.mov", "-y", "-o", "alias.mov"], in: dir)
        XCTAssertEqual(run.status, 2, "the command's mistake")
        XCTAssertEqual(run.stderrLines, ["vmerge: alias.mov: output is also an input; refusing to overwrite it"])
        XCTAssertEqual(try Data(contentsOf: clip), before, "input untouched")
    }

    func testMissingOutputFolderIsRefusedBeforeWork() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), "-o", "no/such/dir/out.mp4"], in: dir)
        XCTAssertEqual(run.status, 2, "the command's mistake")
        XCTAssertEqual(run.stderrLines.count, 1)
        XCTAssertTrue(run.stderr.contains("does not exist"), run.stderr)
    }

    func testInterruptRemovesTheTemporaryFileAndExits130() throws {
        try assertSignalStopsCleanly(SIGINT, status: 130)
    }

    func testTerminateRemovesTheTemporaryFileAndExits143() throws {
        try assertSignalStopsCleanly(SIGTERM, status: 143)
    }

    private func assertSignalStopsCleanly(_ signal: Int32, status: Int32) throws {
        let dir = try makeScratchDirectory()
        let inputs = Array(repeating: Fixtures.path("b_"), count: 60)
        let (run, signalled) = try runInterrupted(inputs + ["-o", "out.mp4"], in: dir, signal: signal)
        XCTAssertTrue(signalled, "the merge finished before it could be interrupted")
        XCTAssertEqual(run.status, status, run.stderr)
        XCTAssertEqual(listing(dir), [], "no output, no temporary file")
        XCTAssertTrue(run.stderrLines.last?.hasPrefix("vmerge: ") ?? false, run.stderr)
    }
}

/// Argument errors: exit 2, a message naming the problem, nothing written.
final class UsageTests: XCTestCase {
    private func assertUsageError(_ arguments: [String], mentions text: String) throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertTrue(run.stderrLines.first?.hasPrefix("vmerge: ") ?? false, run.stderr)
        XCTAssertTrue(run.stderr.contains(text), "'\(run.stderr)' should contain '\(text)'")
        XCTAssertEqual(listing(dir), [])
    }

    func testNoArguments() throws { try assertUsageError([], mentions: "no input files") }
    func testMissingOutput() throws { try assertUsageError([Fixtures.path("a_")], mentions: "-o <file>") }
    func testUnknownOptionSuggestsTheRightOne() throws {
        try assertUsageError(
            [Fixtures.path("a_"), "--widht", "640", "-o", "x.mp4"], mentions: "Did you mean '--width'?")
    }
    func testOddWidth() throws {
        try assertUsageError([Fixtures.path("a_"), "--width", "321", "-o", "x.mp4"], mentions: "--width")
    }
    func testMissingValue() throws {
        try assertUsageError([Fixtures.path("a_"), "-o", "x.mp4", "--fps"], mentions: "missing value")
    }

    func testHelpGoesToStdoutWithExitZero() throws {
        let run = try VMergeBinary.run(["--help"], in: try makeScratchDirectory())
        XCTAssertEqual(run.status, 0)
        XCTAssertTrue(run.stdout.contains("USAGE: vmerge"))
        XCTAssertTrue(run.stderr.isEmpty)
    }

    func testVersionNamesTheFFmpegLibraries() throws {
        let run = try VMergeBinary.run(["--version"], in: try makeScratchDirectory())
        XCTAssertEqual(run.status, 0)
        XCTAssertTrue(run.stdout.hasPrefix("vmerge "))
        XCTAssertTrue(run.stdout.contains("libavcodec "), run.stdout)
    }

    /// `make test-ffmpeg FFMPEG_VERSION=X` runs the suite against an FFmpeg built into a prefix: the
    /// binary under test (linked with the prefix's run path) must run on that release, not on the
    /// system's, or the whole run would prove nothing about X.
    func testTheBinaryRunsOnTheFFmpegTheSuiteWasAskedToTest() throws {
        guard let expected = ProcessInfo.processInfo.environment["FFMPEG_EXPECTED_VERSION"], !expected.isEmpty else {
            throw XCTSkip("FFMPEG_EXPECTED_VERSION is not set (only make test-ffmpeg sets it)")
        }
        let run = try VMergeBinary.run(["--version"], in: try makeScratchDirectory(), environment: ["LD_LIBRARY_PATH": ""])
        XCTAssertEqual(run.status, 0, run.stderr)
        let line = run.stdout.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
        XCTAssertTrue(line == "FFmpeg \(expected)" || line.hasPrefix("FFmpeg \(expected)-"), run.stdout)
    }
}
