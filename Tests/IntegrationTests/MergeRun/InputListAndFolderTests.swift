import Foundation
import TestSupport
import XCTest

/// Where a merge's inputs come from besides its arguments: --inputs-from a file or stdin (and a
/// signal while it reads), and a folder, expanded in natural order.
final class InputListAndFolderTests: MergeRunTestCase {
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

    /// A signal while vmerge waits for its input list on stdin cancels cleanly (no crash).
    /// A list from a pipe: the shell's process substitution (`<(...)`, a /dev/fd name) and a
    /// named pipe whose writer comes later are lists as much as a file is.
    func testInputsFromAPipe() throws {
        let dir = try makeScratchDirectory()
        let vmerge = VMergeBinary.url.path
        let substituted = try runTool(
            "bash",
            ["-c", "\"$0\" --inputs-from <(printf '%s\\n' \"$1\" \"$2\") -n -o out.mp4", vmerge, Fixtures.path("a_"), Fixtures.path("e_")],
            in: dir)
        XCTAssertEqual(substituted.status, 0, substituted.stderr)
        XCTAssertEqual(substituted.stdout.split(separator: "\n").filter { $0.hasPrefix("keep") }.count, 2, substituted.stdout)
        let fifo = dir.appendingPathComponent("list").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let later = try runTool(
            "bash", ["-c", "(sleep 0.5; timeout 10 sh -c 'printf \"%s\\\\n\" \"$1\" > \"$0\"' \"$1\" \"$2\") >/dev/null 2>&1 & \"$0\" --inputs-from \"$1\" -n -o out.mp4", vmerge, fifo, Fixtures.path("a_")],
            in: dir)
        XCTAssertEqual(later.status, 0, later.stderr)
        XCTAssertEqual(later.stdout.split(separator: "\n").filter { $0.hasPrefix("keep") }.count, 1, later.stdout)
    }

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
}
