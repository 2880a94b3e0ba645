import Foundation
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
        let before = try files()
        let cases: [([String], String)] = [
            (["-o", "nodir/out.mp4"], "vmerge: nodir/out.mp4: folder nodir does not exist (vmerge makes no folder for '-o'; mkdir -p nodir first)"),
            (["-o", "plain/out.mp4"], "vmerge: plain/out.mp4: folder plain is not a folder"),
            (["-o", "a.mov"], "vmerge: a.mov: output is also an input; refusing to overwrite it"),
            (["-o", "./b.mov", "-y"], "vmerge: ./b.mov: output is also an input; refusing to overwrite it"),
            (["-o", "alias.mov", "-y"], "vmerge: alias.mov: output is also an input; refusing to overwrite it"),
            (["-o", "existing"], "vmerge: '-o existing' names a folder; give a file name, such as existing/merged.mp4"),
            (["-o", "existing/"], "vmerge: '-o existing/' names a folder; give a file name, such as existing/merged.mp4"),
        ]
        for (output, message) in cases {
            let run = try vmerge(["a.mov", "b.mov"] + output + ["--report", "r.json"])
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
        let run = try vmerge(suggestion.components(separatedBy: " ") + ["-q"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("merged.mp4").path))
        let last = try vmerge(["a.mov", "b.mov", "out2.mp4"])
        XCTAssertEqual(last.status, 2)
        XCTAssertTrue(last.stderr.contains("To write out2.mp4, say so with -o: vmerge a.mov b.mov -o out2.mp4\n"), last.stderr)
    }

    /// A batch over a folder of loose clips is no batch: said, with the merge that was meant; an
    /// empty folder is still an empty batch (a scheduled run over a folder not yet filled).
    func testABatchOverLooseClipsSaysWhatBatchMeans() throws {
        let recordings = dir.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: false)
        let empty = try vmerge(["batch", "recordings/", "--out", "merged/"])
        XCTAssertEqual(empty.status, 0, empty.stderr)
        for name in ["a.mov", "b.mov"] {
            try FileManager.default.copyItem(at: dir.appendingPathComponent(name), to: recordings.appendingPathComponent(name))
        }
        let loose = try vmerge(["batch", "recordings/", "--out", "merged/"])
        XCTAssertEqual(loose.status, 2, loose.stderr)
        XCTAssertTrue(
            loose.stderr.hasPrefix(
                "vmerge: batch: recordings/ holds 2 clips and no subfolder; batch makes one job per subfolder. "
                    + "To merge these clips into one video: vmerge recordings/ -o merged/recordings.mp4\n"), loose.stderr)
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
}
