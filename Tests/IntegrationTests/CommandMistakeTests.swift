import Foundation
import TestSupport
import XCTest

/// A mistake in the command is exit 2, which a pipeline fails fast on, not 1, which it retries:
/// said as the user typed it, with what to type instead; nothing is written.
final class CommandMistakeTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try makeScratchDirectory()
        for (name, prefix) in [("a.mov", "a_"), ("b.mov", "e_")] {
            try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: dir.appendingPathComponent(name).path)
        }
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    private func vmerge(_ arguments: [String]) throws -> RunResult { try VMergeBinary.run(arguments, in: dir) }

    /// The listing of the scratch folder: a refused command leaves it as it was.
    private func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() }

    func testAnOutputTheCommandNamesWronglyIsAUsageError() throws {
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("existing"), withIntermediateDirectories: false)
        try Data("x".utf8).write(to: dir.appendingPathComponent("plain"))
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("alias.mov").path, withDestinationPath: "a.mov")
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("linked").path, withDestinationPath: "existing")
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("dangling").path, withDestinationPath: "nowhere")
        let before = try files()
        let cases: [([String], String)] = [
            (["-o", "nodir/out.mp4"], "vmerge: nodir/out.mp4: folder nodir does not exist (vmerge makes no folder for '-o'; mkdir -p nodir first)"),
            (["-o", "a.mov"], "vmerge: a.mov: output is also an input; refusing to overwrite it"),
            (["-o", "./b.mov", "-y"], "vmerge: ./b.mov: output is also an input; refusing to overwrite it"),
            (["-o", "alias.mov", "-y"], "vmerge: alias.mov: output is also an input; refusing to overwrite it"),
            (["-o", "existing"], "vmerge: '-o existing' names a folder; give a file name, such as existing/merged.mp4"),
            (["-o", "existing/"], "vmerge: '-o existing/' names a folder; give a file name, such as existing/merged.mp4"),
            (["-o", "linked"], "vmerge: '-o linked' names a folder; give a file name, such as linked/merged.mp4"),
            (["-o", "plain/out.mp4"], "vmerge: plain/out.mp4: plain is a file, not a folder"),
            (["-o", "dangling/out.mp4"], "vmerge: dangling/out.mp4: dangling is a symbolic link, not a folder"),
            (["-o", "ok.mp4", "--report", "existing"], "vmerge: '--report existing' names a folder; give a file name"),
            (["-o", "ok.mp4", "--report", "no/r.json"], "vmerge: no/r.json: folder no does not exist"),
        ]
        for (output, message) in cases {
            let run = try vmerge(["a.mov", "b.mov"] + output + (output.contains("--report") ? [] : ["--report", "r.json"]))
            XCTAssertEqual(run.status, 2, "\(output): \(run.stderr)")
            XCTAssertTrue(run.stderr.hasPrefix(message), "\(output): \(run.stderr)")
        }
        XCTAssertEqual(try files(), before, "a refused command writes nothing, not even its report")
    }

    /// Found only once a folder is listed, the same mistake is still the command's: exit 2, and
    /// the report (which a run writes once it has started) says so.
    func testAnOutputAmongAFoldersClipsIsAUsageError() throws {
        let clips = dir.appendingPathComponent("clips")
        try FileManager.default.createDirectory(at: clips, withIntermediateDirectories: false)
        try FileManager.default.copyItem(at: dir.appendingPathComponent("a.mov"), to: clips.appendingPathComponent("a.mov"))
        try FileManager.default.copyItem(at: dir.appendingPathComponent("b.mov"), to: clips.appendingPathComponent("b.mov"))
        let run = try vmerge(["clips", "-o", "clips/b.mov", "-y", "--report", "r.json"])
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertTrue(run.stderr.contains("clips/b.mov: output is also an input"), run.stderr)
        let report = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json"))) as? [String: Any])
        XCTAssertEqual(report["exit_code"] as? Int, 2)
        XCTAssertEqual(report["status"] as? String, "failed")
        XCTAssertEqual(try Data(contentsOf: clips.appendingPathComponent("b.mov")), try Data(contentsOf: dir.appendingPathComponent("b.mov")))
    }

    /// ffmpeg's habits: the hint is the user's own command, mended, and it runs.
    func testTheSuggestedCommandRuns() throws {
        let typed = try vmerge(["-i", "a.mov", "-i", "b.mov", "merged.mp4"])
        XCTAssertEqual(typed.status, 2)
        let suggestion = try XCTUnwrap(typed.stderr.components(separatedBy: "inputs are plain arguments: vmerge ").dropFirst().first)
            .components(separatedBy: "\n")[0]
        XCTAssertEqual(suggestion, "a.mov b.mov -o merged.mp4")
        // Pasted into a shell as printed, names that need quoting too.
        try FileManager.default.copyItem(at: dir.appendingPathComponent("a.mov"), to: dir.appendingPathComponent("it's a.mov"))
        let awkward = try vmerge(["-i", "it's a.mov", "-i", "b.mov", "-q", "out 2.mp4"])
        let printed = try XCTUnwrap(awkward.stderr.components(separatedBy: "inputs are plain arguments: ").dropFirst().first)
            .components(separatedBy: "\n")[0]
        XCTAssertEqual(printed, #"vmerge 'it'\''s a.mov' b.mov -q -o 'out 2.mp4'"#)
        for command in ["vmerge " + suggestion, printed] {
            let run = try runProgram(
                URL(fileURLWithPath: "/bin/bash"), ["-c", command], in: dir,
                environment: ["PATH": VMergeBinary.url.deletingLastPathComponent().path + ":/usr/bin:/bin"])
            XCTAssertEqual(run.status, 0, "\(command): \(run.stderr)")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("merged.mp4").path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out 2.mp4").path))
        let last = try vmerge(["a.mov", "b.mov", "out2.mp4"])
        XCTAssertEqual(last.status, 2)
        XCTAssertTrue(last.stderr.contains("To write out2.mp4, say so with -o: vmerge a.mov b.mov -o out2.mp4\n"), last.stderr)
    }

    /// A forgotten -o whose last operand is there but holds no video (what a failed run leaves)
    /// is hinted, with -y, and the hint runs; a video that is there is an input like the others.
    func testAForgottenOutputThatHoldsNoVideoIsHinted() throws {
        try Data().write(to: dir.appendingPathComponent("out.mp4"))
        let empty = try vmerge(["a.mov", "b.mov", "out.mp4"])
        XCTAssertEqual(empty.status, 2)
        XCTAssertEqual(
            empty.stderrLines.first,
            "vmerge: missing '-o <file>': where should the merged video go? out.mp4 is there but holds no video; to "
                + "write it, say so with -o, and -y to replace it: vmerge a.mov b.mov -o out.mp4 -y")
        let run = try runProgram(
            URL(fileURLWithPath: "/bin/bash"), ["-c", "vmerge a.mov b.mov -o out.mp4 -y"], in: dir,
            environment: ["PATH": VMergeBinary.url.deletingLastPathComponent().path + ":/usr/bin:/bin"])
        XCTAssertEqual(run.status, 0, run.stderr)
        // Now out.mp4 is a video: named last without -o it is an input, and no hint takes it for the output.
        let video = try vmerge(["a.mov", "b.mov", "out.mp4"])
        XCTAssertEqual(video.status, 2)
        XCTAssertEqual(video.stderrLines.first, "vmerge: missing '-o <file>': where should the merged video go?")
    }

    /// A batch over a folder of loose clips is no batch: said, with the merge that was meant; an
    /// empty folder is still an empty batch (a scheduled run over a folder not yet filled).
    func testABatchOverLooseClipsSaysWhatBatchMeans() throws {
        let recordings = dir.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: false)
        let empty = try vmerge(["batch", "recordings/", "--out", "merged/"])
        XCTAssertEqual(empty.status, 0, empty.stderr)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("merged"))
        for name in ["a.mov", "b.mov"] {
            try FileManager.default.copyItem(at: dir.appendingPathComponent(name), to: recordings.appendingPathComponent(name))
        }
        let loose = try vmerge(["batch", "recordings/", "--out", "merged/"])
        XCTAssertEqual(loose.status, 2, loose.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("merged").path), "no --out made")
        XCTAssertTrue(
            loose.stderr.hasPrefix(
                "vmerge: batch: recordings/ holds 2 clips and no subfolder; batch makes one job per subfolder. "
                    + "To merge these clips into one video: mkdir -p merged/ && vmerge recordings/ -o merged/recordings.mp4\n"),
            loose.stderr)
        XCTAssertEqual(try vmerge(["recordings/", "-o", "merged/recordings.mp4", "-q"]).status, 2, "merged/ is not there yet")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("merged"), withIntermediateDirectories: false)
        XCTAssertEqual(try vmerge(["recordings/", "-o", "merged/recordings.mp4", "-q"]).status, 0)
        // Beside a subfolder they are warned about, and the job's output is named without "//".
        let trip = recordings.appendingPathComponent("trip")
        try FileManager.default.createDirectory(at: trip, withIntermediateDirectories: false)
        try FileManager.default.copyItem(at: dir.appendingPathComponent("a.mov"), to: trip.appendingPathComponent("1.mov"))
        let mixed = try vmerge(["batch", "recordings/", "--out", "merged/"])
        XCTAssertEqual(mixed.status, 0, mixed.stderr)
        XCTAssertTrue(mixed.stderr.contains("vmerge: recordings/: 2 clips beside its subfolders are in no job"), mixed.stderr)
        XCTAssertTrue(mixed.stderr.contains("trip: done -> merged/trip.mp4 ("), mixed.stderr)
    }

    /// The other commands' files the same way: batch's --out and --report, watch's --status-file.
    func testTheOtherCommandsFilesAreTheCommandsToo() throws {
        try Data("x".utf8).write(to: dir.appendingPathComponent("plain"))
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("jobs/trip"), withIntermediateDirectories: true)
        let cases: [([String], String)] = [
            (["batch", "jobs", "--out", "plain"], "vmerge: plain: '--out' is a file, not a folder"),
            (["batch", "jobs", "--out", "o", "--report", "no/r.json"], "vmerge: no/r.json: folder no does not exist"),
            (["watch", "jobs", "--out", "o", "--status-file", "no/s.json"], "vmerge: no/s.json: folder no does not exist"),
        ]
        for (arguments, message) in cases {
            let run = try vmerge(arguments)
            XCTAssertEqual(run.status, 2, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix(message), "\(arguments): \(run.stderr)")
        }
        // queue add over loose clips, refused before connecting to any database.
        let loose = dir.appendingPathComponent("loose")
        try FileManager.default.createDirectory(at: loose, withIntermediateDirectories: false)
        try FileManager.default.copyItem(at: dir.appendingPathComponent("a.mov"), to: loose.appendingPathComponent("a.mov"))
        let queueOut = dir.appendingPathComponent("queued").path
        let queue = try vmerge(["queue", "add", "loose", "--out", queueOut, "--db", "host=/nowhere"])
        XCTAssertEqual(queue.status, 2, queue.stderr)
        XCTAssertTrue(
            queue.stderr.hasPrefix(
                "vmerge: queue add: loose holds 1 clip and no subfolder; queue add makes one job per subfolder. "
                    + "To merge these clips into one video: mkdir -p \(queueOut) && vmerge loose -o \(queueOut)/loose.mp4\n"),
            queue.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: queueOut), "no --out made")
    }

    /// --bad-jobs-ok: what a retry meets again is for good (a corrupt file, an output name that
    /// is a folder), said in the summary; an output folder that is not there may come (a mount)
    /// and keeps exit 1. Paths join without "//" however many slashes --out has.
    func testBadJobsAreForGoodAndSaidSo() throws {
        let list = [
            #"{"inputs": ["a.mov"], "output": "good.mp4"}"#, #"{"inputs": ["bad.mov"], "output": "bad.mp4"}"#,
            #"{"inputs": ["b.mov"], "output": "taken.mp4"}"#,
        ]
        try Data(list.joined(separator: "\n").utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        try Data(repeating: 0x41, count: 2000).write(to: dir.appendingPathComponent("bad.mov"))
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("out/taken.mp4"), withIntermediateDirectories: true)
        let run = try vmerge(["batch", "jobs.jsonl", "--out", "out//", "--bad-jobs-ok", "--report", "r.json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("[1/3] good: done -> out/good.mp4 ("), run.stderr)
        XCTAssertTrue(run.stderr.contains("[3/3] taken: failed: out/taken.mp4: is a folder"), run.stderr)
        XCTAssertTrue(
            run.stderr.contains("1 done, 0 skipped, 2 failed of 3 jobs in "), run.stderr)
        XCTAssertTrue(
            run.stderr.contains("; every failure is for good, a retry would fail the same: exit 0 (--bad-jobs-ok)\n"), run.stderr)
        let report = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json"))) as? [String: Any])
        let jobs = try XCTUnwrap(report["jobs"] as? [[String: Any]])
        XCTAssertEqual(jobs.map { $0["failed_for_good"] as? Bool }, [false, true, true])
        XCTAssertEqual(jobs.map { $0["output"] as? String }, ["out/good.mp4", "out/bad.mp4", "out/taken.mp4"])
        // A job whose output folder is missing: output side, a retry may find it mounted.
        try Data(#"{"inputs": ["a.mov"], "output": "gone/x.mp4"}"#.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let missing = try vmerge(["batch", "jobs.jsonl", "--out", "out", "--bad-jobs-ok"])
        XCTAssertEqual(missing.status, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("out/gone/x.mp4: folder out/gone does not exist"), missing.stderr)
    }
}
