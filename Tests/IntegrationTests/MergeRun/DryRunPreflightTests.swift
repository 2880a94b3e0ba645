import Foundation
import TestSupport
import XCTest

/// A dry run as a CI step's preflight: it lists every input with its fate, says what is under the
/// output's name (this job's output by its key, or another file), gives the size estimate, puts
/// all of it in its report, and exits as the merge would: 0 when it would work or find its output
/// made, 1 when it would fail, after listing everything.
final class DryRunPreflightTests: MergeRunTestCase {
    private func copyClips(_ names: [(String, String)], to dir: URL) throws {
        for (prefix, name) in names {
            try FileManager.default.copyItem(at: Fixtures.url(prefix), to: dir.appendingPathComponent(name))
        }
    }

    private func outputObject(_ report: [String: Any]) -> [String: Any] { report["output"] as? [String: Any] ?? [:] }

    /// Plan, then merge, twice: the second plan sees the output is this job's and passes, and the
    /// second merge skips it.
    func testASecondDryRunPassesAndSaysTheOutputIsThisJobs() throws {
        let dir = try makeScratchDirectory()
        try copyClips([("a_", "a.mov"), ("b_", "b.mov")], to: dir)
        let plan = ["a.mov", "b.mov", "-o", "out.mp4", "--dry-run", "--report", "plan.json"]
        let first = try VMergeBinary.run(plan, in: dir)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(
            first.stdout.split(separator: "\n").last.map(String.init),
            "output  out.mp4  2 clips, 5.5 s, 320x240 at 30 fps, at most about 250 KiB; new; not written (--dry-run)")
        let planned = try report(at: dir.appendingPathComponent("plan.json"))
        XCTAssertEqual(outputObject(planned)["estimated_bytes"] as? Int, 256_080)
        XCTAssertTrue(outputObject(planned)["existing"] is NSNull)
        XCTAssertEqual((planned["problems"] as? [Any])?.count, 0)

        XCTAssertEqual(try VMergeBinary.run(["a.mov", "b.mov", "-o", "out.mp4", "-q"], in: dir).status, 0)
        let made = try Data(contentsOf: dir.appendingPathComponent("out.mp4"))
        let second = try VMergeBinary.run(plan, in: dir)
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(second.stderr, "")
        XCTAssertTrue(
            second.stdout.contains("; exists: this job's output, the merge would skip it; not written (--dry-run)\n"),
            second.stdout)
        let replanned = try report(at: dir.appendingPathComponent("plan.json"))
        XCTAssertEqual(outputObject(replanned)["existing"] as? String, "this-job")
        XCTAssertEqual(replanned["exit_code"] as? Int, 0)
        let merged = try VMergeBinary.run(["a.mov", "b.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(merged.status, 0, merged.stderr)
        XCTAssertEqual(merged.stderrLines, ["vmerge: skipped, out.mp4 is up to date"])
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("out.mp4")), made)
    }

    /// With -y the merge makes this job's output again, so a dry run with -y checks what that
    /// would meet (here too little free space) instead of passing as a skip would.
    func testWithOverwriteThisJobsOutputIsNoPassToSkipTheChecks() throws {
        let dir = try makeScratchDirectory()
        try copyClips([("a_", "a.mov"), ("b_", "b.mov")], to: dir)
        XCTAssertEqual(try VMergeBinary.run(["a.mov", "b.mov", "-o", "out.mp4", "-q"], in: dir).status, 0)
        let plan = ["a.mov", "b.mov", "-o", "out.mp4", "--dry-run", "--min-free", "999T"]
        let skipping = try VMergeBinary.run(plan, in: dir)
        XCTAssertEqual(skipping.status, 0, skipping.stderr)
        let remaking = try VMergeBinary.run(plan + ["-y"], in: dir)
        XCTAssertEqual(remaking.status, 1, remaking.stdout)
        XCTAssertTrue(remaking.stdout.contains("; exists: this job's output, -y makes it again;"), remaking.stdout)
        XCTAssertTrue(remaking.stderr.hasPrefix("vmerge: out.mp4: "), remaking.stderr)
    }

    /// Without --skip-invalid a bad input does not hide the rest: every input is listed, the bad
    /// one with its reason, and the exit is the merge's (1), with the reason on stderr.
    func testABadInputAmongGoodOnesIsListedWithItsReasonAndTheExitIsOne() throws {
        let dir = try makeScratchDirectory()
        try copyClips([("a_", "a.mov"), ("bad_text", "bad.mov"), ("b_", "b.mov")], to: dir)
        let run = try VMergeBinary.run(
            ["a.mov", "bad.mov", "b.mov", "-n", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        let reason = "not a readable video file (unknown format, or a recording cut off before it was finalised)"
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, run.stdout)
        XCTAssertTrue(lines[0].hasPrefix("keep  a.mov  3 s"), lines[0])
        XCTAssertEqual(lines[1], "fail  bad.mov  \(reason) (--skip-invalid would drop it)")
        XCTAssertTrue(lines[2].hasPrefix("keep  b.mov  2.5 s"), lines[2])
        XCTAssertTrue(lines[3].hasPrefix("output  out.mp4  2 clips, 5.5 s"), lines[3])
        XCTAssertEqual(run.stderrLines, ["vmerge: bad.mov: \(reason)"])
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(r["status"] as? String, "dry-run")
        XCTAssertEqual(r["exit_code"] as? Int, 1)
        XCTAssertEqual(inputs(r).map { $0["status"] as? String }, ["kept", "invalid", "kept"])
        XCTAssertEqual(inputs(r)[1]["reason"] as? String, reason)
        let problems = try XCTUnwrap(r["problems"] as? [[String: Any]])
        XCTAssertEqual(problems.map { $0["file"] as? String }, ["bad.mov"])
        XCTAssertEqual(problems.map { $0["message"] as? String }, ["bad.mov: \(reason)"])
        XCTAssertEqual((r["error"] as? [String: Any])?["message"] as? String, "bad.mov: \(reason)")

        // With --skip-invalid the merge would drop it and work: exit 0.
        let skipping = try VMergeBinary.run(
            ["a.mov", "bad.mov", "b.mov", "-n", "--skip-invalid", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(skipping.status, 0, skipping.stderr)
        XCTAssertTrue(skipping.stdout.contains("drop  bad.mov  skipped: \(reason)\n"), skipping.stdout)
    }

    /// A file under the output's name that is not this job's is named for what it is, and the
    /// exit says the merge would refuse it (-y would replace it: exit 0).
    func testAnOutputThatIsAnotherFileOrAnotherUsersIsNamedAsSuch() throws {
        let dir = try makeScratchDirectory()
        try copyClips([("a_", "a.mov")], to: dir)
        let output = dir.appendingPathComponent("out.mp4")
        try Data("mine".utf8).write(to: output)
        let mine = try VMergeBinary.run(["a.mov", "-n", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(mine.status, 1, mine.stderr)
        XCTAssertTrue(mine.stdout.contains("; exists: another file, kept without -y; not written"), mine.stdout)
        XCTAssertEqual(mine.stderrLines, ["vmerge: out.mp4: output exists (use -y to overwrite)"])
        XCTAssertEqual(
            outputObject(try report(at: dir.appendingPathComponent("r.json")))["existing"] as? String, "another-file")
        let replacing = try VMergeBinary.run(["a.mov", "-n", "-y", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(replacing.status, 0, replacing.stderr)
        XCTAssertTrue(
            replacing.stdout.contains("; exists: another file, -y replaces it; not written"), replacing.stdout)

        guard geteuid() == 0 else { throw XCTSkip("needs root, to give the output to another user") }
        XCTAssertEqual(chown(output.path, 65534, 65534), 0)
        let theirs = try VMergeBinary.run(["a.mov", "-n", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(theirs.status, 1, theirs.stderr)
        XCTAssertTrue(
            theirs.stdout.contains("; exists: another user's file, kept without -y; not written"), theirs.stdout)
        XCTAssertEqual(
            theirs.stderrLines, ["vmerge: out.mp4: output exists, not written by this user (owner uid 65534)"])
        let r = try report(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(outputObject(r)["existing"] as? String, "another-users-file")
        XCTAssertEqual(try Data(contentsOf: output), Data("mine".utf8), "a dry run writes nothing")
    }
}
