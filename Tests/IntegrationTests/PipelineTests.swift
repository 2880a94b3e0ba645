import Foundation
import TestSupport
import XCTest

/// Reports, progress, input lists, limits and dry runs, through the built binary.
final class PipelineTests: XCTestCase {
    private static let schemaPath = Fixtures.directory.deletingLastPathComponent()
        .appendingPathComponent("schema/report.schema.json").path

    /// Parses a report and checks it against the committed JSON Schema.
    private func report(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        let errors = try JSONSchemaValidator(schemaFile: PipelineTests.schemaPath).validate(object)
        XCTAssertEqual(errors, [], "report does not match schema/report.schema.json", file: file, line: line)
        return try XCTUnwrap(object as? [String: Any], file: file, line: line)
    }

    private func report(at url: URL, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try report(String(decoding: try Data(contentsOf: url), as: UTF8.self), file: file, line: line)
    }

    private func inputs(_ report: [String: Any]) -> [[String: Any]] { report["inputs"] as? [[String: Any]] ?? [] }

    private func fileSize(_ url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? -1
    }

    // MARK: report

    func testReportOfASuccessfulMergeDescribesEveryInputAndTheOutput() throws {
        let dir = try makeScratchDirectory()
        let names = ["a_", "b_", "c_", "f_", "g_", "i_"]
        let run = try VMergeBinary.run(names.map(Fixtures.path) + ["-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "ok")
        XCTAssertEqual(r["exit_code"] as? Int, 0)
        XCTAssertTrue(r["error"] is NSNull)
        let list = inputs(r)
        XCTAssertEqual(list.map { $0["path"] as? String }, names.map(Fixtures.path))
        XCTAssertEqual(list.map { $0["status"] as? String }, ["kept", "kept", "kept", "kept", "kept", "dropped-short"])
        // The dropped clip's reason is the warning printed on stderr.
        let reason = try XCTUnwrap(list[5]["reason"] as? String)
        XCTAssertTrue(run.stderrLines.contains("vmerge: \(Fixtures.path("i_")): \(reason)"), run.stderr)
        let video = { (i: Int, key: String) in (list[i]["video"] as? [String: Any])?[key] }
        XCTAssertEqual(video(1, "rotation") as? Int, 90)
        XCTAssertEqual(video(1, "width") as? Int, 1920)
        XCTAssertEqual(video(2, "rotation") as? Int, 180)
        XCTAssertEqual(video(3, "codec") as? String, "hevc")
        XCTAssertEqual(video(3, "mirrored") as? Bool, true)
        XCTAssertEqual(video(4, "orientation") as? String, "transpose")
        XCTAssertTrue(list[2]["audio"] is NSNull, "c has no audio")
        XCTAssertEqual((list[1]["audio"] as? [String: Any])?["sample_rate"] as? Int, 48000)
        let starts = list.prefix(5).map { ($0["placement"] as? [String: Any])?["start"] as? Double ?? -1 }
        XCTAssertEqual(starts[0], 0)
        XCTAssertEqual(starts[1], 3, accuracy: 1e-6)
        XCTAssertEqual(starts[2], 5.5, accuracy: 1e-6)
        XCTAssertEqual((list[1]["crop"] as? [String: Any])?["width"] as? Int, 810)
        let output = try XCTUnwrap(r["output"] as? [String: Any])
        XCTAssertEqual(output["bytes"] as? Int64, fileSize(dir.appendingPathComponent("out.mp4")))
        XCTAssertEqual(output["faststart"] as? Bool, true)
        XCTAssertEqual(output["truncated"] as? Bool, false)
        let frames = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).videoFrames().times.count
        XCTAssertEqual(output["video_frames"] as? Int, frames)
        XCTAssertEqual(output["duration"] as? Double ?? 0, Double(frames) / 30, accuracy: 1e-5)
        let timings = try XCTUnwrap(r["timings"] as? [String: Any])
        XCTAssertGreaterThan(timings["speed"] as? Double ?? 0, 0)
        // How long each side of the frame queue waited for the other: parts of the wall time.
        let wall = try XCTUnwrap(timings["wall_seconds"] as? Double)
        for side in ["decode_waited_seconds", "encode_waited_seconds"] {
            let waited = try XCTUnwrap(timings[side] as? Double, side)
            XCTAssertTrue(waited >= 0 && waited <= wall, "\(side) \(waited) of \(wall) s")
        }
        // The version the binary itself prints.
        let version = try VMergeBinary.run(["--version"], in: dir).stdout.split(separator: "\n").first ?? ""
        XCTAssertEqual("vmerge " + ((r["versions"] as? [String: Any])?["vmerge"] as? String ?? "?"), String(version))
    }

    func testReportOfAFailedRunNamesTheBadInputAndWhatWasNotReached() throws {
        let dir = try makeScratchDirectory()
        let bad = Fixtures.path("bad_text")
        let run = try VMergeBinary.run(
            [Fixtures.path("a_"), bad, Fixtures.path("c_"), "-o", "out.mp4", "--report", "-"], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
        let r = try report(run.stdout)
        XCTAssertEqual(r["status"] as? String, "failed")
        XCTAssertEqual(r["exit_code"] as? Int, 1)
        let error = try XCTUnwrap(r["error"] as? [String: Any])
        XCTAssertEqual(error["file"] as? String, bad)
        XCTAssertEqual("vmerge: \(error["message"] as? String ?? "")", run.stderrLines.first)
        XCTAssertEqual(inputs(r).map { $0["status"] as? String }, ["probed", "invalid", "not-probed"])
        XCTAssertEqual(
            inputs(r)[1]["reason"] as? String,
            "not a readable video file (unknown format, or a recording cut off before it was finalised)")
        XCTAssertTrue(inputs(r)[0]["placement"] is NSNull, "nothing was merged")
        XCTAssertTrue(r["output"] is NSNull)
        XCTAssertTrue((r["timings"] as? [String: Any])?["media_seconds"] is NSNull)
        XCTAssertEqual(listing(dir), [], "no output")
    }

    func testSkippedInvalidInputIsReportedAndTheRestMerged() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [Fixtures.path("bad_empty"), Fixtures.path("a_"), "--skip-invalid", "-o", "out.mp4", "--report", "r.json"],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(inputs(r).map { $0["status"] as? String }, ["invalid", "kept"])
        XCTAssertTrue((inputs(r)[0]["reason"] as? String ?? "").contains("empty"), "\(inputs(r)[0])")
    }

    /// A report in a folder that is not there is the command's mistake: exit 2, before any work.
    func testAReportInAMissingFolderIsRefusedBeforeAnyWork() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), "-o", "out.mp4", "--report", "no/such/r.json"], in: dir)
        XCTAssertEqual(run.status, 2)
        XCTAssertEqual(
            run.stderrLines,
            ["vmerge: no/such/r.json: folder no/such does not exist (vmerge makes no folder for '--report'; mkdir -p no/such first)"])
        XCTAssertEqual(listing(dir), [])
    }

    func testTheReportNeverOverwritesAVideo() throws {
        let dir = try makeScratchDirectory()
        let input = dir.appendingPathComponent("in.mov")
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: input.path)
        let original = try Data(contentsOf: input)
        let onInput = try VMergeBinary.run(["in.mov", "-o", "out.mp4", "--report", "./in.mov"], in: dir)
        XCTAssertEqual(onInput.status, 2, "known from the command line: a usage error")
        XCTAssertEqual(onInput.stderrLines, ["vmerge: ./in.mov: the report would overwrite an input video"])
        XCTAssertEqual(try Data(contentsOf: input), original)
        let onOutput = try VMergeBinary.run(["in.mov", "-o", "out.mp4", "--report", "out.mp4"], in: dir)
        XCTAssertEqual(onOutput.status, 2)
        XCTAssertEqual(onOutput.stderrLines, ["vmerge: out.mp4: the report would overwrite the output video"])
        XCTAssertEqual(listing(dir), ["in.mov"])
    }

    func testNothingToMergeIsReportedWithExitThree() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("i_"), "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 3)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "nothing-to-merge")
        XCTAssertEqual(r["exit_code"] as? Int, 3)
        XCTAssertEqual(listing(dir), ["r.json"])
    }

    /// SIGINT mid-run: stops within a second, no output or temporary file, report says
    /// cancelled, exit 130. Non-TTY progress (auto = plain) has no carriage returns.
    func testInterruptWritesACancelledReport() throws {
        let dir = try makeScratchDirectory()
        let list = String(repeating: Fixtures.path("b_") + "\n", count: 300)
        try list.write(to: dir.appendingPathComponent("list.txt"), atomically: true, encoding: .utf8)
        var signalledAt: Date?
        let run = try VMergeBinary.run(["--inputs-from", "list.txt", "-o", "out.mp4", "--report", "r.json"], in: dir) {
            process in
            // Past the first plain progress line (every 5 s), then interrupt.
            let deadline = Date().addingTimeInterval(120)
            var sawTemporary: Date?
            while Date() < deadline && process.isRunning {
                // The output's temporary (the report's is made before probing): encoding has begun.
                if sawTemporary == nil && listing(dir).contains(where: { $0.hasPrefix(".out.mp4.") && $0.hasSuffix(".tmp") }) {
                    sawTemporary = Date()
                }
                if let seen = sawTemporary, Date().timeIntervalSince(seen) > 5.5 {
                    kill(process.processIdentifier, SIGINT)
                    signalledAt = Date()
                    process.waitUntilExit()
                    return
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        let stopped = try XCTUnwrap(signalledAt, "the merge finished before it could be interrupted")
        XCTAssertLessThan(Date().timeIntervalSince(stopped), 1.0, "stops within a second")
        XCTAssertEqual(run.status, 130, run.stderr)
        XCTAssertEqual(listing(dir), ["list.txt", "r.json"], "no output, no temporary file")
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "cancelled")
        XCTAssertEqual(r["exit_code"] as? Int, 130)
        XCTAssertTrue(r["output"] is NSNull)
        XCTAssertEqual(inputs(r).count, 300)
        // Plain progress: whole lines, no carriage returns or escape sequences.
        XCTAssertFalse(run.stderr.contains("\r"), run.stderr)
        XCTAssertFalse(run.stderr.contains("\u{1B}"), run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains { $0.hasPrefix("vmerge: ") && $0.contains("% clip ") && $0.contains("/300") },
            run.stderr)
        XCTAssertEqual(run.stderrLines.last, "vmerge: interrupted (SIGINT): stopped, no output written")
    }

    // MARK: progress

    func testJSONProgressIsOneObjectPerLineEndingWithEnd() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [Fixtures.path("a_"), Fixtures.path("b_"), "-o", "out.mp4", "--progress", "json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let objects = run.stderrLines.filter { $0.hasPrefix("{") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(objects.count, run.stderrLines.count - 1, "every line but the summary is JSON: \(run.stderr)")
        XCTAssertEqual(objects.first?["phase"] as? String, "probing")
        XCTAssertEqual(objects.last?["progress"] as? String, "end")
        XCTAssertEqual(objects.last?["percent"] as? Double, 100)
        let percents = objects.compactMap { $0["percent"] as? Double }
        XCTAssertEqual(percents, percents.sorted(), "never goes backwards")
        XCTAssertTrue(run.stderrLines.last?.hasPrefix("vmerge: wrote out.mp4") ?? false, run.stderr)
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

    func testQuietPrintsNothingOnSuccess() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), Fixtures.path("i_"), "-q", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.stderr, "")
        XCTAssertEqual(run.stdout, "")
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

    // MARK: inputs

    func testInputsFromTwoThousandEntries() throws {
        let dir = try makeScratchDirectory()
        let tiny = Fixtures.path("l_tiny")
        var list = "# 2,000 segments\n\n"
        for i in 0..<2000 { list += (i % 500 == 0 ? "  \(tiny)  \n# comment\n" : "\(tiny)\n") }
        try list.write(to: dir.appendingPathComponent("segments.txt"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(
            ["--inputs-from", "segments.txt", "--min-duration", "0", "-q", "-o", "out.mp4", "--report", "r.json"],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(inputs(r).count, 2000)
        XCTAssertTrue(inputs(r).allSatisfy { $0["status"] as? String == "kept" })
        // 2,000 x 0.1 s = 200 s at 30 fps.
        let output = try XCTUnwrap(r["output"] as? [String: Any])
        XCTAssertEqual(output["video_frames"] as? Int, 6000)
        let streams = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).streams()
        XCTAssertEqual(streams.video?.width, 320)
    }

    func testInputsFromStdinAddToTheArguments() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [Fixtures.path("a_"), "--inputs-from", "-", "--dry-run", "--report", "-", "-o", "out.mp4"], in: dir,
            input: "\(Fixtures.path("c_"))\n# skip me\n\n\(Fixtures.path("b_"))\n")
        XCTAssertEqual(run.status, 0, run.stderr)
        let r = try report(run.stdout)
        XCTAssertEqual(
            inputs(r).map { $0["path"] as? String }, [Fixtures.path("a_"), Fixtures.path("c_"), Fixtures.path("b_")])
    }

    func testAFolderExpandsInNaturalOrder() throws {
        let dir = try makeScratchDirectory()
        let folder = dir.appendingPathComponent("clips")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, fixture) in [("clip10.MOV", "a_"), ("clip2.mov", "b_"), ("clip1.mov", "c_")] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path(fixture), toPath: folder.appendingPathComponent(name).path)
        }
        try Data("notes".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let run = try VMergeBinary.run(["clips", "-n", "--report", "-", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let names = inputs(try report(run.stdout)).compactMap {
            ($0["path"] as? String).map { ($0 as NSString).lastPathComponent }
        }
        XCTAssertEqual(names, ["clip1.mov", "clip2.mov", "clip10.MOV"])
        let empty = try VMergeBinary.run(["clips/notes.txt", "--skip-invalid", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(empty.status, 3, empty.stderr)
    }

    // MARK: dry run and limits

    func testDryRunWritesNothingAndSaysWhatWouldHappen() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [
                Fixtures.path("a_"), Fixtures.path("b_"), Fixtures.path("i_"), "--dry-run", "-o", "out.mp4", "--report",
                "r.json",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(dir), ["r.json"], "no output file")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, run.stdout)
        XCTAssertTrue(
            lines[0].hasPrefix("keep  \(Fixtures.path("a_"))  3 s, h264 640x480 30 fps, upright, crop 640x480+0+0"),
            lines[0])
        XCTAssertTrue(lines[1].contains("rotate 90, crop 810x1080+555+0"), lines[1])
        XCTAssertTrue(lines[1].hasSuffix("; at 3 s"), lines[1])
        XCTAssertEqual(lines[2], "drop  \(Fixtures.path("i_"))  dropped: video lasts 1.5 s, under the 2 s minimum")
        XCTAssertTrue(lines[3].hasPrefix("output  out.mp4  2 clips, 5.5 s, 320x240 at 30 fps"), lines[3])
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "dry-run")
        XCTAssertEqual((r["output"] as? [String: Any])?["written"] as? Bool, false)
        XCTAssertEqual((r["output"] as? [String: Any])?["duration"] as? Double, 5.5)
    }

    func testMaxDurationEndsWithAPlayableFileOfThatLength() throws {
        let dir = try makeScratchDirectory()
        let clips = ["a_", "b_", "c_", "d_"].map(Fixtures.path)
        let run = try VMergeBinary.run(clips + ["--max-duration", "7", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = MediaInspector(path: dir.appendingPathComponent("out.mp4").path)
        let frames = try out.videoFrames().times
        XCTAssertEqual(frames.count, 210, "7 s at 30 fps")
        XCTAssertEqual(frames.last ?? 0, 209.0 / 30, accuracy: 1e-3)
        let audio = try out.audioSamples()
        // AAC decodes in 1024-sample frames: the last one may run past the edit list's end.
        XCTAssertLessThanOrEqual(audio.samples.count, 7 * 44100 + 1024)
        XCTAssertGreaterThan(audio.samples.count, 7 * 44100 - 1024)
        let list = inputs(try report(at: dir.appendingPathComponent("r.json")))
        XCTAssertEqual(list.map { $0["status"] as? String }, ["kept", "kept", "kept", "beyond-limit"])
        let cut = try XCTUnwrap(list[2]["placement"] as? [String: Any])
        XCTAssertEqual(cut["cut_by"] as? String, "max-duration")
        XCTAssertEqual(cut["cut_at"] as? Double ?? 0, 1.5, accuracy: 1e-6)
        XCTAssertTrue(run.stderr.contains("cut at its --max-duration"), run.stderr)
    }

    func testMaxSizeIsNeverExceededAndTheFileEndsCleanly() throws {
        let dir = try makeScratchDirectory()
        let clips = ["a_", "b_", "c_", "d_", "e_", "f_", "g_", "h_"].map(Fixtures.path)
        for limit in [60 * 1024, 100 * 1024] {
            let run = try VMergeBinary.run(
                clips + ["--max-size", "\(limit / 1024)K", "-y", "-o", "out.mp4", "--report", "r.json"], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
            let url = dir.appendingPathComponent("out.mp4")
            let size = fileSize(url)
            XCTAssertLessThanOrEqual(size, Int64(limit))
            XCTAssertGreaterThan(size, Int64(limit) * 8 / 10, "ends near the limit, not far under it")
            XCTAssertEqual(try topLevelBoxes(url.path).prefix(2), ["ftyp", "moov"])
            let r = try report(at: dir.appendingPathComponent("r.json"))
            let output = try XCTUnwrap(r["output"] as? [String: Any])
            XCTAssertEqual(output["truncated_by"] as? String, "max-size")
            XCTAssertEqual(output["bytes"] as? Int64, size)
            // Every picture up to the end decodes, with none missing.
            let frames = try MediaInspector(path: url.path).videoFrames().times
            XCTAssertEqual(frames.count, output["video_frames"] as? Int)
            for (i, t) in frames.sorted().enumerated() { XCTAssertEqual(t, Double(i) / 30, accuracy: 1e-3) }
            let audio = try MediaInspector(path: url.path).audioSamples()
            XCTAssertEqual(Double(audio.samples.count) / 44100, Double(frames.count) / 30, accuracy: 0.05)
            XCTAssertTrue(
                inputs(r).contains { ($0["placement"] as? [String: Any])?["cut_by"] as? String == "max-size" })
        }
    }

    func testMaxDurationOnAClipBoundaryLeavesTheRestOutUnprobed() throws {
        let dir = try makeScratchDirectory()
        // The truncated recording after the limit is never opened, so it cannot fail the run.
        let run = try VMergeBinary.run(
            [
                Fixtures.path("a_"), Fixtures.path("bad_truncated"), "--max-duration", "3", "-o", "out.mp4", "--report",
                "r.json",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(inputs(r).map { $0["status"] as? String }, ["kept", "beyond-limit"])
        XCTAssertEqual((r["output"] as? [String: Any])?["truncated_by"] as? String, "max-duration")
        XCTAssertEqual((r["output"] as? [String: Any])?["video_frames"] as? Int, 90)
    }

    func testMaxSizeTooSmallForTheFirstPicturesFails() throws {
        let dir = try makeScratchDirectory()
        // Noise: its first picture alone is far over 16K (the fixtures' flat pictures are not).
        let ffmpeg = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "nullsrc=s=640x480:r=30:d=1,geq=random(1)*255:128:128",
                "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "noise.mov",
            ], in: dir)
        XCTAssertEqual(ffmpeg.status, 0, ffmpeg.stderr)
        let run = try VMergeBinary.run(
            [
                "noise.mov", "--width", "640", "--quality", "high", "--min-duration", "0", "--max-size", "16K", "-q",
                "-o", "out.mp4", "--report", "r.json",
            ], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(
            run.stderrLines, ["vmerge: out.mp4: --max-size 16 KiB is too small to hold even the first pictures"])
        XCTAssertEqual(listing(dir), ["noise.mov", "r.json"], "no output")
        XCTAssertEqual(try report(at: dir.appendingPathComponent("r.json"))["status"] as? String, "failed")
    }

    /// A signal while vmerge waits for its input list on stdin cancels cleanly (no crash).
    func testInterruptWhileReadingTheListFromStdin() throws {
        let dir = try makeScratchDirectory()
        let process = Process()
        process.executableURL = VMergeBinary.url
        process.arguments = ["--inputs-from", "-", "-o", "out.mp4", "--report", "r.json"]
        process.currentDirectoryURL = dir
        let stdin = Pipe(), err = Pipe()
        process.standardInput = stdin
        process.standardError = err
        try process.run()
        waitUntilCatching(SIGINT, pid: process.processIdentifier)
        Thread.sleep(forTimeInterval: 0.2)  // then reading the list
        kill(process.processIdentifier, SIGINT)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try? stdin.fileHandleForWriting.close()
        XCTAssertEqual(process.terminationStatus, 130, message)
        XCTAssertEqual(message, "vmerge: interrupted (SIGINT): stopped, no output written\n")
        XCTAssertEqual(try report(at: dir.appendingPathComponent("r.json"))["status"] as? String, "cancelled")
    }

    func testTooLittleFreeSpaceFailsBeforeWriting() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), "--min-free", "1000T", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("vmerge: out.mp4: not enough free space: "), run.stderr)
        XCTAssertTrue(run.stderr.contains("--min-free asks for 1000 TiB"), run.stderr)
        XCTAssertEqual(listing(dir), [])
    }

    // MARK: FFmpeg's log

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
