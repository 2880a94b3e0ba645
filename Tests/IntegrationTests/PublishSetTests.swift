import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// A job's files (poster, report, video) are published as one set (issue 23, point 2): every
/// temporary written first, the video last; a failure on the way leaves the old set, a crash on
/// the way leaves what the next run of the job takes as its own.
final class PublishSetTests: XCTestCase {
    private func copy(_ prefix: String, _ name: String, in dir: URL) throws {
        try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: dir.appendingPathComponent(name).path)
    }

    private func bytes(_ dir: URL, _ name: String) -> Data? { try? Data(contentsOf: dir.appendingPathComponent(name)) }

    /// Killed between publishing the poster and the video: the next run of the same job (a batch
    /// re-run, a merge run again) takes the poster it left as its own and finishes; a poster
    /// nobody's job left is never replaced. Before, every re-run failed "p.jpg: output exists".
    func testAPosterLeftByAKilledRunIsTakenByTheNextRunOfTheSameJob() throws {
        let dir = try makeScratchDirectory()
        try copy("a_", "a.mov", in: dir)
        try copy("e_", "e.mov", in: dir)
        try Data(#"{"inputs": ["a.mov"], "output": "a.mp4"}"#.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let batch = ["batch", "jobs.jsonl", "--poster", "{name}.jpg"]
        let killed = try VMergeBinary.run(batch, in: dir, environment: ["VMERGE_TEST_KILL_AT": "before-video"])
        XCTAssertEqual(killed.status, SIGKILL, killed.stderr)
        XCTAssertTrue(listing(dir).contains("a.jpg"), "\(listing(dir))")
        XCTAssertFalse(listing(dir).contains("a.mp4"))
        let again = try VMergeBinary.run(batch, in: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(listing(dir), ["a.jpg", "a.mov", "a.mp4", "e.mov", "jobs.jsonl"], "no temporary left")
        XCTAssertEqual(bytes(dir, "a.jpg")?.prefix(2), Data([0xFF, 0xD8]))

        // The same for a merge run again, with a report beside it.
        let merge = ["e.mov", "-o", "e.mp4", "--poster", "e.jpg", "--report", "e.json"]
        let killedMerge = try VMergeBinary.run(merge, in: dir, environment: ["VMERGE_TEST_KILL_AT": "before-video"])
        XCTAssertEqual(killedMerge.status, SIGKILL, killedMerge.stderr)
        XCTAssertEqual(listing(dir).filter { $0.hasPrefix("e.") }, ["e.jpg", "e.json", "e.mov"])
        let mergedAgain = try VMergeBinary.run(merge, in: dir)
        XCTAssertEqual(mergedAgain.status, 0, mergedAgain.stderr)
        XCTAssertEqual(try jsonObject(at: dir.appendingPathComponent("e.json"))["status"] as? String, "ok")

        // Another job's poster (other inputs) is somebody's file: refused, kept as it was.
        let other = try VMergeBinary.run(["a.mov", "e.mov", "-o", "ae.mp4", "--poster", "e.jpg"], in: dir)
        XCTAssertEqual(other.status, 1, other.stderr)
        XCTAssertEqual(other.stderrLines.last, "vmerge: e.jpg: output exists (use -y to overwrite)")
        XCTAssertFalse(listing(dir).contains("ae.mp4"))
    }

    /// With -y the old set stays until the new one is complete: when the report cannot be
    /// published (its name became a folder while the video was encoded), the old video and poster
    /// are still there, unchanged. Before, the old video was replaced and then the new one
    /// withdrawn, leaving nothing under the name.
    func testOverwritingKeepsTheOldSetWhenTheNewOneCannotBeCompleted() throws {
        let dir = try makeScratchDirectory()
        try runFFmpeg(
            ["-f", "lavfi", "-i", "testsrc2=s=1280x720:r=30:d=6", "-f", "lavfi", "-i", "sine=d=6", "-c:v", "libx264",
             "-preset", "ultrafast", "-c:a", "aac", "-shortest", "long.mov"], in: dir)
        let arguments = ["long.mov", "-o", "out.mp4", "--poster", "out.jpg", "--report", "r.json", "-y"]
        let first = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(first.status, 0, first.stderr)
        let (oldVideo, oldPoster) = (bytes(dir, "out.mp4"), bytes(dir, "out.jpg"))
        let report = dir.appendingPathComponent("r.json")
        var swapped = false
        let second = try VMergeBinary.run(arguments + ["--crf", "30"], in: dir) { process in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && process.isRunning {
                if listing(dir).contains(where: { $0.hasPrefix(".out.mp4.vmerge-") }) {
                    try? FileManager.default.removeItem(at: report)
                    try? FileManager.default.createDirectory(at: report, withIntermediateDirectories: false)
                    swapped = true
                    return
                }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        XCTAssertTrue(swapped, "the run ended before the report's name could be taken")
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("r.json"), second.stderr)
        XCTAssertEqual(bytes(dir, "out.mp4"), oldVideo, "the old video is still there")
        XCTAssertEqual(bytes(dir, "out.jpg"), oldPoster, "the old poster is back")
        XCTAssertEqual(listing(dir), ["long.mov", "out.jpg", "out.mp4", "r.json"], "no temporary, no stray copy")
    }

    /// The report is always this run's, and says what the name holds: a -y run that fails (an
    /// input it cannot read) keeps the old video and poster, and its report says `failed`,
    /// `output: null`, and names the kept video with its size and the poster beside it
    /// (`kept_output`); a first run that fails has nothing to keep (`kept_output: null`).
    func testAFailedOverwriteReportsTheSetItKept() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try copy("a_", "a.mov", in: dir)
        try FileManager.default.copyItem(atPath: Fixtures.path("bad_text"), toPath: dir.appendingPathComponent("bad.mov").path)
        let arguments = ["-o", "out.mp4", "--poster", "out.jpg", "--report", "r.json", "-y", "--min-duration", "0"]
        let failedFirst = try VMergeBinary.run(["a.mov", "bad.mov"] + arguments, in: dir)
        XCTAssertEqual(failedFirst.status, 1, failedFirst.stderr)
        var report = try jsonObject(at: dir.appendingPathComponent("r.json"))
        XCTAssertTrue(report["kept_output"] is NSNull, "\(report)")
        XCTAssertEqual(listing(dir), ["a.mov", "bad.mov", "r.json"])

        let first = try VMergeBinary.run(["a.mov"] + arguments, in: dir)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(try jsonObject(at: dir.appendingPathComponent("r.json"))["kept_output"] is NSNull)
        let (oldVideo, oldPoster) = (bytes(dir, "out.mp4"), bytes(dir, "out.jpg"))

        let second = try VMergeBinary.run(["a.mov", "bad.mov"] + arguments, in: dir)
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertEqual(bytes(dir, "out.mp4"), oldVideo, "the old video is kept")
        XCTAssertEqual(bytes(dir, "out.jpg"), oldPoster, "the old poster is kept")
        report = try jsonObject(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual(report["status"] as? String, "failed")
        XCTAssertTrue(report["output"] is NSNull)
        let kept = try XCTUnwrap(report["kept_output"] as? [String: Any], "\(report)")
        XCTAssertEqual(kept["path"] as? String, "out.mp4")
        XCTAssertEqual((kept["bytes"] as? NSNumber)?.intValue, oldVideo?.count)
        XCTAssertEqual(kept["poster"] as? String, "out.jpg")
        XCTAssertEqual((kept["job_key"] as? String)?.count, 64, "a merge records its key")
        XCTAssertEqual(listing(dir), ["a.mov", "bad.mov", "out.jpg", "out.mp4", "r.json"])
    }

    /// In watch the poster gets a free name the way the video does: a foreign "trip.jpg" in
    /// OUTBOX sends the job to trip-2.mp4 and trip-2.jpg, and the foreign file stays. Before,
    /// the video took trip.mp4 and the poster failed the job.
    func testAWatchPosterNeverTakesAnotherFilesName() throws {
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("inbox"), outbox = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        try copy("a_", "trip.mov", in: inbox)
        try Data("somebody's photo".utf8).write(to: outbox.appendingPathComponent("trip.jpg"))
        let run = try VMergeBinary.run(
            ["watch", "inbox", "--out", "out", "--once", "--settle", "0", "--poster", "{name}.jpg"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(outbox), ["trip-2.jpg", "trip-2.mp4", "trip-2.mp4.json", "trip.jpg"])
        XCTAssertEqual(bytes(outbox, "trip.jpg"), Data("somebody's photo".utf8))
    }

    /// Another job's -y run killed between its poster and its video leaves its poster beside this
    /// job's video; the next run of this job, finding it done, makes its poster again from the
    /// video (found by a hostile pass: the job counted as done with the other job's poster).
    func testAJobFoundDoneMakesAPosterThatIsNotItsOwnAgain() throws {
        let dir = try makeScratchDirectory()
        try copy("a_", "a.mov", in: dir)
        try copy("t1_", "t.mov", in: dir)
        try Data(#"{"inputs": ["a.mov"], "output": "j1.mp4"}"#.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        try Data(#"{"inputs": ["t.mov"], "output": "j1.mp4"}"#.utf8).write(to: dir.appendingPathComponent("other.jsonl"))
        let poster = dir.appendingPathComponent("j1.jpg").path, video = dir.appendingPathComponent("j1.mp4").path
        XCTAssertEqual(try VMergeBinary.run(["batch", "jobs.jsonl", "--poster", "{name}.jpg"], in: dir).status, 0)
        let key = try XCTUnwrap(Probe.recordedJobKey(at: video))
        XCTAssertEqual(PosterKey.key(of: poster), key)
        let killed = try VMergeBinary.run(
            ["batch", "other.jsonl", "--poster", "{name}.jpg", "-y"], in: dir, environment: ["VMERGE_TEST_KILL_AT": "before-video"])
        XCTAssertEqual(killed.status, SIGKILL, killed.stderr)
        XCTAssertNotEqual(PosterKey.key(of: poster), key, "the other job's poster is in place")
        XCTAssertEqual(Probe.recordedJobKey(at: video), key, "beside this job's video")
        let again = try VMergeBinary.run(["batch", "jobs.jsonl", "--poster", "{name}.jpg"], in: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(
            again.stderrLines.contains("vmerge: batch: [1/1] j1: j1.mp4: its poster was another job's: made again from it"),
            again.stderr)
        XCTAssertEqual(PosterKey.key(of: poster), key)
        XCTAssertEqual(listing(dir), ["a.mov", "j1.jpg", "j1.mp4", "jobs.jsonl", "other.jsonl", "t.mov"], "no temporary left")
    }

    /// The output folder "out" and the folder "elsewhere" a link will lead to, both made; and
    /// "kept", where "out" will be moved.
    private func swapFolders(in dir: URL) throws -> (out: URL, kept: URL, elsewhere: URL) {
        let (out, kept, elsewhere) = (
            dir.appendingPathComponent("out"), dir.appendingPathComponent("kept"),
            dir.appendingPathComponent("elsewhere")
        )
        for folder in [out, elsewhere] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        return (out, kept, elsewhere)
    }

    /// Runs vmerge held at `point` (VMERGE_TEST_PAUSE_AT); while it waits there, `folder` is
    /// moved to `kept` and a link to `elsewhere` takes its name; then it goes on.
    private func runSwapping(
        _ arguments: [String], in dir: URL, at point: String, folder: URL, kept: URL, elsewhere: URL
    ) throws -> RunResult {
        let pause = dir.appendingPathComponent("paused").path
        let swapped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            defer { swapped.signal() }
            let deadline = Date().addingTimeInterval(120)
            while !FileManager.default.fileExists(atPath: pause) && Date() < deadline { usleep(20_000) }
            guard FileManager.default.fileExists(atPath: pause) else { return }
            try? FileManager.default.moveItem(at: folder, to: kept)
            try? FileManager.default.createSymbolicLink(atPath: folder.path, withDestinationPath: elsewhere.path)
            try? FileManager.default.removeItem(atPath: pause)
        }
        let run = try VMergeBinary.run(
            arguments, in: dir, environment: ["VMERGE_TEST_PAUSE_AT": point, "VMERGE_TEST_PAUSE_FILE": pause])
        swapped.wait()
        XCTAssertEqual(
            try? FileManager.default.destinationOfSymbolicLink(atPath: folder.path), elsewhere.path,
            "the swap was made: \(run.stderr)")
        return run
    }

    /// The output folder swapped for a link to another folder between encoding and publishing: the
    /// whole set (video, poster, report) is published in the folder the job started with, through
    /// the descriptor it opened then, and nothing through the link. Before, the video and poster
    /// went to the old folder and the report through the link.
    func testAnOutputFolderSwappedForALinkMidRunNeverSplitsTheSet() throws {
        let dir = try makeScratchDirectory()
        try copy("a_", "a.mov", in: dir)
        let (out, kept, elsewhere) = try swapFolders(in: dir)
        let run = try runSwapping(
            ["a.mov", "-o", "out/a.mp4", "--poster", "a.jpg", "--report", "out/a.json", "--min-duration", "0"],
            in: dir, at: "before-publish", folder: out, kept: kept, elsewhere: elsewhere)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(kept), ["a.jpg", "a.json", "a.mp4"], "the whole set, in the job's first folder")
        XCTAssertEqual(listing(elsewhere), [], "nothing through the link")
    }

    /// An output folder named through a link when the run starts (a folder kept on another disk)
    /// is the folder the link leads to: the set is published there, as before the folder was
    /// held open.
    func testAnOutputFolderNamedThroughALinkAtTheStartIsWhereTheLinkLeads() throws {
        let dir = try makeScratchDirectory()
        try copy("a_", "a.mov", in: dir)
        let real = dir.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = dir.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real")
        let run = try VMergeBinary.run(
            ["a.mov", "-o", "link/a.mp4", "--poster", "a.jpg", "--report", "link/a.json", "--min-duration", "0"],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(real), ["a.jpg", "a.json", "a.mp4"])
    }

    /// watch: OUTBOX swapped for a link once the video is published, before its report is
    /// written: the report goes beside the video, in the folder the job started with.
    func testAWatchReportFollowsItsVideoWhenTheOutboxIsSwappedForALink() throws {
        let dir = try makeScratchDirectory()
        let job = dir.appendingPathComponent("in/trip")
        try FileManager.default.createDirectory(at: job, withIntermediateDirectories: true)
        try copy("a_", "a.mov", in: job)
        try Data().write(to: job.appendingPathComponent(".ready"))
        let (out, kept, elsewhere) = try swapFolders(in: dir)
        let run = try runSwapping(
            ["watch", "in", "--out", "out", "--once", "--settle", "0", "--min-duration", "0"]
                + ["--poster", "{name}.jpg"], in: dir, at: "after-video", folder: out, kept: kept, elsewhere: elsewhere)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(kept), ["trip.jpg", "trip.mp4", "trip.mp4.json"], "the whole set, beside the video")
        XCTAssertEqual(listing(elsewhere), [], "nothing through the link")
    }
}
