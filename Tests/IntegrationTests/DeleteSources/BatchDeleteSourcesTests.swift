import Foundation
import TestSupport
import XCTest

/// --delete-sources on a batch: only the sources of the jobs that succeeded, a file several jobs
/// name only once all of them merged it whole, a file swapped in meanwhile by its own uses, and on
/// a re-run only what the finished output vouches for; no job writes over another's input.
final class BatchDeleteSourcesTests: DeleteSourcesTestCase {
    func testABatchDeletesTheSourcesOfTheJobsThatSucceeded() throws {
        let dir = try makeScratchDirectory()
        _ = try copies([("a_", "a.mov"), ("c_", "c.mov"), ("bad_text", "bad.mov"), ("e_", "e.mov")], in: dir)
        let list = [
            #"{"inputs": ["a.mov", "c.mov"], "output": "ac.mp4"}"#,
            #"{"inputs": ["e.mov", "bad.mov"], "output": "eb.mp4"}"#,
        ].joined(separator: "\n")
        try Data(list.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "--delete-sources", "--report", "b.json"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(
            listing(dir), ["ac.mp4", "b.json", "bad.mov", "e.mov", "jobs.jsonl"], "the failed job's sources stay")
        let jobs = try jsonObject(at: dir.appendingPathComponent("b.json"))["jobs"] as? [[String: Any]] ?? []
        let deleted = jobs.map { ($0["report"] as? [String: Any])?["deleted_sources"] as? [String] ?? ["?"] }
        XCTAssertEqual(deleted.count, 2)
        XCTAssertEqual(deleted[0].map { ($0 as NSString).lastPathComponent }, ["a.mov", "c.mov"])
        XCTAssertEqual(deleted[1], [])
    }

    /// A file other jobs of the batch name goes only once every one of them has merged all of
    /// it, deleted by the last; one job that merges only part of it keeps it for all. Before the
    /// ledger, -j 1 deleted it with the first job (the second failed: no such file) and -j 2
    /// deleted it although the trimming job's output holds only part of it.
    func testABatchDeletesAFileOtherJobsNameOnlyOnceAllOfThemMergedItWhole() throws {
        for parallel in ["1", "2"] {
            let dir = try makeScratchDirectory()
            _ = try copies([("a_", "a.mov"), ("c_", "c.mov"), ("e_", "e.mov"), ("t1_", "t.mov")], in: dir)
            let list = [
                #"{"inputs": ["a.mov", "c.mov"], "output": "ac.mp4"}"#,
                #"{"inputs": ["e.mov", "a.mov"], "output": "ea.mp4"}"#,
                #"{"inputs": ["t.mov", "c.mov"], "output": "tc.mp4"}"#,
                #"{"inputs": [{"path": "t.mov", "start": 1, "end": 3.5}], "output": "t.mp4"}"#,
            ].joined(separator: "\n")
            try Data(list.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
            let run = try VMergeBinary.run(
                ["batch", "jobs.jsonl", "-j", parallel, "--delete-sources", "--report", "b.json"], in: dir)
            XCTAssertEqual(run.status, 0, "-j \(parallel): \(run.stderr)")
            // a: whole in jobs 1 and 2; c: whole in 1 and 3; e: whole in 2; t: whole in 3, a part in 4.
            XCTAssertEqual(
                listing(dir), ["ac.mp4", "b.json", "ea.mp4", "jobs.jsonl", "t.mov", "t.mp4", "tc.mp4"], "-j \(parallel)"
            )
            // Said by whichever of jobs 3 and 4 ends last (naming job 4 when job 3 does), tagged with
            // that job, as every message of a batch's job is.
            XCTAssertTrue(
                run.stderrLines.contains {
                    $0.hasPrefix("vmerge: batch: [")
                        && $0.contains(": t.mov: kept: only a part of it was merged (--trim)")
                }, run.stderr)
            for name in ["a.mov", "c.mov", "e.mov"] {
                XCTAssertEqual(
                    run.stderrLines.filter {
                        $0.hasPrefix("vmerge: batch: [")
                            && $0.hasSuffix(": \(name): deleted (--delete-sources: the output holds all of it)")
                    }.count, 1, "-j \(parallel), \(name): \(run.stderr)")
            }
            if parallel == "1" {
                // By the last job naming each: a with job 2, c with job 3, e with job 2.
                for (name, tag) in [("a.mov", "[2/4] ea"), ("c.mov", "[3/4] tc"), ("e.mov", "[2/4] ea")] {
                    XCTAssertTrue(
                        run.stderrLines.contains(
                            "vmerge: batch: \(tag): \(name): deleted (--delete-sources: the output holds all of it)"),
                        run.stderr)
                }
            }
            let jobs = try jsonObject(at: dir.appendingPathComponent("b.json"))["jobs"] as? [[String: Any]] ?? []
            let deleted = jobs.flatMap { ($0["report"] as? [String: Any])?["deleted_sources"] as? [String] ?? [] }
            XCTAssertEqual(
                deleted.sorted(), ["a.mov", "c.mov", "e.mov"], "-j \(parallel): each once, by the last job naming it")
            if parallel == "1" {
                // In job order: a goes with job 2, c with job 3 (the last naming each), e with job 2.
                XCTAssertEqual(
                    jobs.map { ($0["report"] as? [String: Any])?["deleted_sources"] as? [String] ?? ["?"] },
                    [[], ["a.mov", "e.mov"], ["c.mov"], []])
            }
        }
    }

    /// In a batch, a file put in a name's place while an earlier job ran is judged by its own
    /// uses: dropped as too short, it is kept. Before, the batch passed over it (no job had named
    /// that file when the run began) and deleted it (found by a hostile pass).
    func testABatchKeepsAFileSwappedInWhileAnEarlierJobRan() throws {
        let dir = try makeScratchDirectory()
        try runFFmpeg(
            [
                "-f", "lavfi", "-i", "testsrc2=s=1280x720:r=30:d=8", "-f", "lavfi", "-i", "sine=d=8", "-c:v", "libx264",
                "-preset", "ultrafast", "-c:a", "aac", "-shortest", "long.mov",
            ], in: dir)
        _ = try copies([("a_", "x.mov"), ("e_", "e.mov"), ("i_", "short.mov")], in: dir)
        let list = [
            #"{"inputs": ["long.mov"], "output": "j1.mp4"}"#, #"{"inputs": ["x.mov", "e.mov"], "output": "j2.mp4"}"#,
        ]
        try Data(list.joined(separator: "\n").utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        var swapped = false
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "-j", "1", "--delete-sources"], in: dir) { process in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && process.isRunning {
                if listing(dir).contains(where: { $0.hasPrefix(".j1.mp4.vmerge-") }) {
                    swapped =
                        rename(dir.appendingPathComponent("x.mov").path, dir.appendingPathComponent("saved.mov").path)
                        == 0
                        && rename(
                            dir.appendingPathComponent("short.mov").path, dir.appendingPathComponent("x.mov").path) == 0
                    return
                }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        XCTAssertTrue(swapped, run.stderr)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains {
                $0.hasPrefix("vmerge: batch: [") && $0.contains(": x.mov: kept: a use of it is in no output")
            }, run.stderr)
        XCTAssertEqual(listing(dir), ["j1.mp4", "j2.mp4", "jobs.jsonl", "saved.mov", "x.mov"])
    }

    /// No job's output or poster may be another job's input, -y or not; nor the batch report a
    /// job's poster. Before, with -y, job 1's output replaced job 2's input (found by a hostile pass).
    func testABatchNeverWritesOverAnotherJobsInput() throws {
        let dir = try makeScratchDirectory()
        _ = try copies([("a_", "a.mov"), ("e_", "e.mov"), ("c_", "v.jpg")], in: dir)
        let cases: [([String], String)] = [
            (
                [#"{"inputs": ["a.mov"], "output": "e.mov"}"#, #"{"inputs": ["e.mov"], "output": "x.mp4"}"#],
                "job e's output e.mov is an input of job x"
            ),
            (
                [#"{"inputs": ["a.mov"], "output": "v.mp4"}"#, #"{"inputs": ["v.jpg"], "output": "y.mp4"}"#],
                "job v's poster v.jpg is an input of job y"
            ),
        ]
        for (lines, reason) in cases {
            try Data(lines.joined(separator: "\n").utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
            let run = try VMergeBinary.run(["batch", "jobs.jsonl", "-y", "--poster", "{name}.jpg"], in: dir)
            XCTAssertEqual(run.status, 1, run.stderr)
            XCTAssertEqual(run.stderrLines.first, "vmerge: jobs.jsonl: \(reason)")
            XCTAssertEqual(listing(dir), ["a.mov", "e.mov", "jobs.jsonl", "v.jpg"])
        }
        try Data(#"{"inputs": ["a.mov"], "output": "j1.mp4"}"#.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let report = try VMergeBinary.run(
            ["batch", "jobs.jsonl", "-y", "--poster", "{name}.jpg", "--report", "j1.jpg"], in: dir)
        XCTAssertEqual(report.status, 2, report.stderr)
        XCTAssertEqual(report.stderrLines.first, "vmerge: j1.jpg: the report would overwrite a job's poster")
    }

    /// A batch job found done (a re-run) deletes only what its output's tag vouches for: the very
    /// file each input was, none with concealed damage. Before, a re-run deleted a clip whose
    /// corrupt packets the output concealed, and another recording put in its place with the same
    /// size and time (found by a hostile pass). And a job whose sources are gone since counts as
    /// done, even with -y: it is never redone from what is left.
    func testABatchReRunDeletesOnlyWhatTheOutputVouchesFor() throws {
        let dir = try makeScratchDirectory()
        try writeDamagedCopy(to: dir.appendingPathComponent("damaged.mov"))
        _ = try copies([("a_", "a.mov"), ("e_", "e.mov"), ("c_", "c.mov")], in: dir)
        let list = [
            #"{"inputs": ["damaged.mov"], "output": "d.mp4"}"#, #"{"inputs": ["a.mov"], "output": "a.mp4"}"#,
            #"{"inputs": ["e.mov", "c.mov"], "output": "ec.mp4"}"#,
        ]
        try Data(list.joined(separator: "\n").utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let first = try VMergeBinary.run(["batch", "jobs.jsonl", "-q"], in: dir)
        XCTAssertEqual(first.status, 0, first.stderr)
        // Another recording in a.mov's place, with its size and modification time.
        let a = dir.appendingPathComponent("a.mov").path
        var info = stat()
        XCTAssertEqual(stat(a, &info), 0)
        var other = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("e_"))))
        other += [UInt8](repeating: 0, count: max(0, Int(info.st_size) - other.count))
        XCTAssertEqual(unlink(a), 0)
        try Data(other.prefix(Int(info.st_size))).write(to: URL(fileURLWithPath: a))
        var times = [info.st_atim, info.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, a, &times, 0), 0)
        let again = try VMergeBinary.run(["batch", "jobs.jsonl", "--delete-sources"], in: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(
            again.stderrLines.contains {
                $0.hasPrefix("vmerge: batch: [")
                    && $0.hasSuffix(": damaged.mov: kept: corrupt packets of it were concealed in the output")
            }, again.stderr)
        XCTAssertTrue(
            again.stderrLines.contains {
                $0.hasPrefix("vmerge: batch: [")
                    && $0.hasSuffix(": a.mov: kept: the output was made from another version of it")
            }, again.stderr)
        XCTAssertEqual(
            listing(dir), ["a.mov", "a.mp4", "d.mp4", "damaged.mov", "ec.mp4", "jobs.jsonl"], "e and c went")
        // e and c are gone now: the job is done, -y or not; its output is not redone from nothing.
        let ec = try Data(contentsOf: dir.appendingPathComponent("ec.mp4"))
        let third = try VMergeBinary.run(["batch", "jobs.jsonl", "--delete-sources", "-y", "--skip-invalid"], in: dir)
        XCTAssertEqual(third.status, 0, third.stderr)
        XCTAssertTrue(
            third.stderrLines.contains(
                "vmerge: batch: [3/3] ec: skipped, ec.mp4 is kept: made earlier from inputs that are not all there now"),
            third.stderr)
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("ec.mp4")), ec)
    }

    /// A folder job whose output holds files deleted since is done: a re-run, even with -y and
    /// options that would keep more, never makes it again from what is left (found by a hostile
    /// pass: trip.mp4 became the 1.5 s clip alone and that went too). An output cut short is never
    /// taken for done.
    func testAFolderJobIsNeverMadeAgainFromWhatIsLeft() throws {
        let dir = try makeScratchDirectory()
        let trip = dir.appendingPathComponent("rec/trip")
        try FileManager.default.createDirectory(at: trip, withIntermediateDirectories: true)
        _ = try copies([("a_", "a.mov"), ("e_", "e.mov"), ("i_", "s.mov")], in: trip)
        let first = try VMergeBinary.run(["batch", "rec", "--out", "merged", "--delete-sources"], in: dir)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(listing(trip), ["s.mov"], "the one dropped as too short stays")
        let output = dir.appendingPathComponent("merged/trip.mp4")
        let made = try Data(contentsOf: output)
        let again = try VMergeBinary.run(
            ["batch", "rec", "--out", "merged", "--delete-sources", "--min-duration", "0", "-y"], in: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(
            again.stderr.contains("made earlier from these inputs, some of which are gone since"), again.stderr)
        XCTAssertEqual(try Data(contentsOf: output), made)
        XCTAssertEqual(listing(trip), ["s.mov"])
        // Cut short (a copy that stopped): not done, so not skipped; without -y it is refused.
        let list = dir.appendingPathComponent("jobs.jsonl")
        _ = try copies([("a_", "x.mov")], in: dir)
        try Data(#"{"inputs": ["x.mov"], "output": "x.mp4"}"#.utf8).write(to: list)
        XCTAssertEqual(try VMergeBinary.run(["batch", "jobs.jsonl", "-q"], in: dir).status, 0)
        XCTAssertEqual(truncate(dir.appendingPathComponent("x.mp4").path, 20_000), 0)
        let cut = try VMergeBinary.run(["batch", "jobs.jsonl", "--delete-sources"], in: dir)
        XCTAssertEqual(cut.status, 1, cut.stderr)
        XCTAssertFalse(cut.stderr.contains("up to date"), cut.stderr)
        XCTAssertTrue(listing(dir).contains("x.mov"))
    }
}
