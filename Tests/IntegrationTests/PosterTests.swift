import Foundation
import TestSupport
import XCTest

/// --poster: a JPEG of the output's own picture at --poster-at (default 1 s, or the middle of a
/// shorter output), its size, written beside the output with it or not at all.
final class PosterTests: XCTestCase {
    /// Where the moving white square is (mean column of its pixels): it crosses fixture a's
    /// picture at about one pixel a frame, so this tells which frame a picture is.
    private func whiteSquareColumn(_ image: RGBImage) -> Double {
        var sum = 0, count = 0
        for y in 100..<140 {
            for x in 0..<image.width {
                let p = image.pixel(x, y)
                if p.r > 200 && p.g > 200 && p.b > 200 {
                    sum += x
                    count += 1
                }
            }
        }
        return count > 0 ? Double(sum) / Double(count) : -1
    }

    private func image(_ path: URL, at time: Double = 0) throws -> RGBImage {
        try MediaInspector(path: path.path).videoFrames(grabTimes: [time]).grabs[0]
    }

    func testThePosterIsTheOutputsPictureAtOneSecond() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [Fixtures.path("a_"), Fixtures.path("b_"), "--poster", "p.jpg", "-o", "out.mp4", "--report", "r.json"],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let posterURL = dir.appendingPathComponent("p.jpg")
        let probe = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", "p.jpg"], in: dir)
        XCTAssertEqual(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "mjpeg,320,240")
        let poster = try image(posterURL)
        XCTAssertEqual(poster.colour(45, 45), "red")
        XCTAssertEqual(poster.colour(275, 45), "green")
        XCTAssertEqual(poster.colour(275, 195), "blue")
        XCTAssertEqual(poster.colour(45, 195), "grey")
        let frame = try image(dir.appendingPathComponent("out.mp4"), at: 1.0)
        XCTAssertEqual(whiteSquareColumn(poster), whiteSquareColumn(frame), accuracy: 1.5, "the frame at 1 s")
        let report = try jsonObject(at: dir.appendingPathComponent("r.json"))
        XCTAssertEqual((report["output"] as? [String: Any])?["poster"] as? String, "p.jpg")
        XCTAssertEqual(listing(dir).sorted(), ["out.mp4", "p.jpg", "r.json"], "no temporaries left")
    }

    /// A batch whose jobs share a folder: one poster name for all is refused before any work;
    /// {name} gives each job its own.
    func testBatchJobsInOneFolderGetOnePosterEach() throws {
        let dir = try makeScratchDirectory()
        for job in ["one", "two"] {
            let folder = dir.appendingPathComponent("jobs/\(job)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: folder.appendingPathComponent("a.mov").path)
        }
        let shared = try VMergeBinary.run(["batch", "jobs", "--out", "out", "--poster", "p.jpg", "-y"], in: dir)
        XCTAssertEqual(shared.status, 1)
        XCTAssertEqual(
            shared.stderrLines,
            ["vmerge: jobs: jobs one and two would both write out/p.jpg; put {name} in the poster's name "
                + "(--poster {name}.jpg) for one poster per job"])
        XCTAssertEqual(listing(dir.appendingPathComponent("out")), [])
        let own = try VMergeBinary.run(["batch", "jobs", "--out", "out", "--poster", "{name}-poster.jpg"], in: dir)
        XCTAssertEqual(own.status, 0, own.stderr)
        XCTAssertEqual(listing(dir.appendingPathComponent("out")), ["one-poster.jpg", "one.mp4", "two-poster.jpg", "two.mp4"])
    }

    func testPosterAtAndTheMiddleOfAShortOutput() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        let at = try VMergeBinary.run([a, "--poster", "at.jpg", "--poster-at", "2.5", "-o", "at.mp4"], in: dir)
        XCTAssertEqual(at.status, 0, at.stderr)
        XCTAssertEqual(
            whiteSquareColumn(try image(dir.appendingPathComponent("at.jpg"))),
            whiteSquareColumn(try image(dir.appendingPathComponent("at.mp4"), at: 2.5)), accuracy: 1.5)
        // 1.2 s long: the poster is its middle, 0.6 s.
        let short = try VMergeBinary.run([a, "--poster", "s.jpg", "--max-duration", "1.2", "-o", "s.mp4"], in: dir)
        XCTAssertEqual(short.status, 0, short.stderr)
        XCTAssertEqual(
            whiteSquareColumn(try image(dir.appendingPathComponent("s.jpg"))),
            whiteSquareColumn(try image(dir.appendingPathComponent("s.mp4"), at: 0.6)), accuracy: 1.5)
    }

    /// --poster-at alone makes nothing, and says so; past the output's end it is the last picture, said.
    func testPosterAtIsSaidWhenItCannotBeWhatItAsks() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        let alone = try VMergeBinary.run([a, "--poster-at", "2", "-o", "alone.mp4"], in: dir)
        XCTAssertEqual(alone.status, 0, alone.stderr)
        XCTAssertEqual(alone.stderrLines.first, "vmerge: --poster-at is given without --poster: no poster is made")
        XCTAssertEqual(listing(dir), ["alone.mp4"])
        let late = try VMergeBinary.run([a, "--poster", "late.jpg", "--poster-at", "1:30", "-o", "late.mp4"], in: dir)
        XCTAssertEqual(late.status, 0, late.stderr)
        XCTAssertTrue(
            late.stderrLines.contains("vmerge: --poster-at 90 s is past the output's end (3 s): the poster is its last picture"),
            late.stderr)
        XCTAssertEqual(
            whiteSquareColumn(try image(dir.appendingPathComponent("late.jpg"))),
            whiteSquareColumn(try image(dir.appendingPathComponent("late.mp4"), at: 2.96)), accuracy: 1.5)
    }

    func testThePosterIsWrittenWithTheOutputOrNotAtAll() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        for (name, expected) in [
            ("../p.jpg", "invalid value '../p.jpg' for '--poster'"), ("p.png", "invalid value 'p.png' for '--poster'"),
        ] {
            let run = try VMergeBinary.run([a, "--poster", name, "-o", "out.mp4"], in: dir)
            XCTAssertEqual(run.status, 2, run.stderr)
            XCTAssertTrue(run.stderr.contains(expected), run.stderr)
        }
        // An existing file is kept (no -y), and nothing is written at all.
        try Data("mine".utf8).write(to: dir.appendingPathComponent("p.jpg"))
        let kept = try VMergeBinary.run([a, "--poster", "p.jpg", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(kept.status, 1, kept.stderr)
        XCTAssertEqual(try String(contentsOf: dir.appendingPathComponent("p.jpg"), encoding: .utf8), "mine")
        XCTAssertEqual(listing(dir), ["p.jpg"])
        // Never through a link, even with -y.
        try FileManager.default.removeItem(at: dir.appendingPathComponent("p.jpg"))
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("p.jpg").path, withDestinationPath: "/etc/passwd")
        let linked = try VMergeBinary.run([a, "--poster", "p.jpg", "-y", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(linked.status, 1, linked.stderr)
        XCTAssertEqual(listing(dir), ["p.jpg"])
        try FileManager.default.removeItem(at: dir.appendingPathComponent("p.jpg"))
        // A merge that fails leaves no poster either.
        let failed = try VMergeBinary.run([a, Fixtures.path("bad_truncated"), "--poster", "p.jpg", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertEqual(listing(dir), [])
    }

    /// --max-size ending the output before the planned poster picture: the poster is the output's
    /// own picture at the middle of what it holds (before, it showed a frame encoded past the end,
    /// which the output does not have).
    func testThePosterIsAPictureTheOutputHoldsWhenMaxSizeEndsItEarly() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        let run = try VMergeBinary.run(
            [a, a, "--poster", "p.jpg", "--max-size", "17k", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let output = try jsonObject(at: dir.appendingPathComponent("r.json"))["output"] as? [String: Any] ?? [:]
        let seconds = output["duration"] as? Double ?? 0
        XCTAssertGreaterThan(seconds, 0.2, "\(output)")
        XCTAssertLessThan(seconds, 1.0, "the size limit must end it before the planned poster, at 1 s: \(output)")
        let column = whiteSquareColumn(try image(dir.appendingPathComponent("p.jpg")))
        let frames = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).videoFrames().times
        let middle = frames[frames.count / 2]
        XCTAssertEqual(column, whiteSquareColumn(try image(dir.appendingPathComponent("out.mp4"), at: middle)), accuracy: 3)
    }
}
