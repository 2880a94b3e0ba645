import Foundation
import TestSupport
import XCTest

/// A planted output is not "done" (issue 33, item 3): a file under a job's output name that
/// another user owns proves nothing by the job tag it carries (anyone who may write the folder
/// can copy one). Batch fails the job, saying so, and keeps its sources; watch makes the job
/// under a free name; neither makes a poster from it. An output this user wrote is still done.
final class ForeignOutputTests: XCTestCase {
    private let nobody: uid_t = 65534

    private func owner(of url: URL) -> uid_t {
        var info = stat()
        return lstat(url.path, &info) == 0 ? info.st_uid : uid_t.max
    }

    /// A folder with a.mov and a job list merging it into a.mp4 with a poster, run once (a.mp4,
    /// a.jpg); the batch's arguments.
    private func batchJobDone() throws -> (URL, [String]) {
        let dir = try makeScratchDirectory()
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: dir.appendingPathComponent("a.mov").path)
        try Data(#"{"inputs": ["a.mov"], "output": "a.mp4"}"#.utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let arguments = ["batch", "jobs.jsonl", "--poster", "{name}.jpg"]
        XCTAssertEqual(try VMergeBinary.run(arguments + ["-q"], in: dir).status, 0)
        return (dir, arguments)
    }

    func testABatchJobWhoseOutputAnotherUserOwnsFailsAndMakesNoPoster() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root, to give the output to another user") }
        let (dir, arguments) = try batchJobDone()
        // The job's very output with its tag, now another user's, its poster gone.
        let output = dir.appendingPathComponent("a.mp4")
        let planted = try Data(contentsOf: output)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("a.jpg"))
        XCTAssertEqual(chown(output.path, nobody, nobody), 0)
        let run = try VMergeBinary.run(arguments + ["--delete-sources", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains(
                "vmerge: batch: [1/1] a: failed: a.mp4: output exists, not written by this user (owner uid 65534)"),
            run.stderr)
        XCTAssertFalse(run.stderr.contains("up to date"), run.stderr)
        XCTAssertEqual(listing(dir), ["a.mov", "a.mp4", "jobs.jsonl", "r.json"], "no poster, the source kept")
        XCTAssertEqual(try Data(contentsOf: output), planted)
        XCTAssertEqual(owner(of: output), nobody)
        let job = try XCTUnwrap((try jsonObject(at: dir.appendingPathComponent("r.json"))["jobs"] as? [[String: Any]])?.first)
        XCTAssertEqual(job["status"] as? String, "failed")
        // This user's own output is done as before (and its poster made again from it).
        XCTAssertEqual(chown(output.path, 0, 0), 0)
        let again = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderrLines.contains("vmerge: batch: [1/1] a: skipped, a.mp4 is up to date"), again.stderr)
        XCTAssertEqual(listing(dir), ["a.jpg", "a.mov", "a.mp4", "jobs.jsonl", "r.json"])
        XCTAssertEqual(try Data(contentsOf: output), planted)
    }

    /// A poster another user owns is never this job's, whatever key it carries: not replaced as
    /// one a killed run left (the job fails saying the name is taken), not made again as another
    /// job's. This user's own poster with the key is still taken.
    func testAPosterAnotherUserOwnsIsNeverReplaced() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root, to give the poster to another user") }
        let (dir, arguments) = try batchJobDone()
        defer { try? FileManager.default.removeItem(at: dir) }
        // The job's own poster, its video gone (as a run killed between the two leaves it), now
        // another user's.
        let poster = dir.appendingPathComponent("a.jpg")
        let planted = try Data(contentsOf: poster)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("a.mp4"))
        XCTAssertEqual(chown(poster.path, nobody, nobody), 0)
        let run = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("a.jpg: output exists"), run.stderr)
        XCTAssertEqual(try Data(contentsOf: poster), planted)
        XCTAssertEqual(owner(of: poster), nobody)
        XCTAssertEqual(listing(dir), ["a.jpg", "a.mov", "jobs.jsonl"], "no video published without its poster")
        // Given back, it is the job's own again: the run finishes.
        XCTAssertEqual(chown(poster.path, 0, 0), 0)
        XCTAssertEqual(try VMergeBinary.run(arguments, in: dir).status, 0)
        XCTAssertEqual(listing(dir), ["a.jpg", "a.mov", "a.mp4", "jobs.jsonl"])
    }

    /// The one way a watch job's tag can be at its output name: the job's own output, published by
    /// a worker killed before its bookkeeping. Given to another user, it is not taken as done: the
    /// job is made again under the next free name, and no poster is made from the planted file.
    func testAWatchJobWhoseOutputAnotherUserOwnsIsMadeUnderAFreeName() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root, to give the output to another user") }
        let dir = try makeScratchDirectory()
        let inbox = dir.appendingPathComponent("inbox"), outbox = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: inbox.appendingPathComponent("trip"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: inbox.appendingPathComponent("trip/a.mov").path)
        _ = FileManager.default.createFile(atPath: inbox.appendingPathComponent("trip/.ready").path, contents: nil)
        let arguments = ["watch", "inbox", "--out", "out", "--once", "--settle", "0", "--poster", "{name}.jpg"]
        let killed = try VMergeBinary.run(arguments, in: dir, environment: ["VMERGE_TEST_KILL_AT": "after-video"])
        XCTAssertEqual(killed.status, SIGKILL, killed.stderr)
        let output = outbox.appendingPathComponent("trip.mp4")
        let planted = try Data(contentsOf: output)
        try? FileManager.default.removeItem(at: outbox.appendingPathComponent("trip.jpg"))
        XCTAssertEqual(chown(output.path, nobody, nobody), 0)
        let run = try VMergeBinary.run(arguments, in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderrLines.contains { $0.hasPrefix("vmerge: watch: done trip -> out/trip-2.mp4 (") }, run.stderr)
        XCTAssertFalse(run.stderr.contains("already there"), run.stderr)
        XCTAssertEqual(listing(outbox), ["trip-2.jpg", "trip-2.mp4", "trip-2.mp4.json", "trip.mp4"])
        XCTAssertEqual(try Data(contentsOf: output), planted)
        XCTAssertEqual(owner(of: output), nobody)
        let frames = try MediaInspector(path: outbox.appendingPathComponent("trip-2.mp4").path).videoFrames().times
        XCTAssertEqual(frames.count, 90, "the job made in full")
    }

    /// A merge names the owner too, rather than the plain "output exists".
    func testAMergeOntoAnotherUsersFileSaysWhoseItIs() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root, to give a file to another user") }
        let dir = try makeScratchDirectory()
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: dir.appendingPathComponent("a.mov").path)
        try Data("theirs".utf8).write(to: dir.appendingPathComponent("out.mp4"))
        XCTAssertEqual(chown(dir.appendingPathComponent("out.mp4").path, nobody, nobody), 0)
        let run = try VMergeBinary.run(["a.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderrLines.first, "vmerge: out.mp4: output exists, not written by this user (owner uid 65534)")
        XCTAssertEqual(try String(contentsOf: dir.appendingPathComponent("out.mp4"), encoding: .utf8), "theirs")
        // -y replaces it, as any file.
        let replaced = try VMergeBinary.run(["a.mov", "-o", "out.mp4", "-y"], in: dir)
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertEqual(owner(of: dir.appendingPathComponent("out.mp4")), 0)
    }
}
