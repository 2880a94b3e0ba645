import Foundation
import TestSupport
import XCTest

/// Output geometry and rate options change the output as documented.
final class OptionsTests: XCTestCase {
    func testWidthAspectAndFrameRate() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        let run = try VMergeBinary.run(
            [a, "--width", "640", "--aspect", "16:9", "--fps", "25", "-o", "wide.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = dir.appendingPathComponent("wide.mp4").path
        let v = try XCTUnwrap(MediaInspector(path: out).streams().video)
        XCTAssertEqual(v.width, 640)
        XCTAssertEqual(v.height, 360)
        let (times, grabs) = try MediaInspector(path: out).videoFrames(grabTimes: [1.5])
        XCTAssertEqual(times.count, 75, "3 s at 25 fps")
        // 16:9 keeps the middle 640x360 of the 640x480 picture: the grey bottom-left corner
        // area and the blue marker's lower part are still there, the yellow-free edge too.
        XCTAssertEqual(grabs[0].colour(600, 300), "blue")
        XCTAssertEqual(grabs[0].colour(40, 300), "grey")
    }

    func testMinDurationJudgesTheVideoNotTheContainer() throws {
        // j: 2.5 s of video, but its audio runs to 3.75 s, so the container says 3.75 s.
        let dir = try makeScratchDirectory()
        let j = Fixtures.path("j_")
        let dropped = try VMergeBinary.run([j, "--min-duration", "3", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(dropped.status, 3, dropped.stderr)
        XCTAssertTrue(
            dropped.stderr.contains("\(j): dropped: video lasts 2.5 s, under the 3 s minimum"), dropped.stderr)
        let kept = try VMergeBinary.run([j, "--min-duration", "2.4", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(kept.status, 0, kept.stderr)
    }

    func testMinDurationZeroKeepsTheShortClip() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("i_"), "--min-duration", "0", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let times = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).videoFrames().times
        XCTAssertEqual(times.count, 45, "1.5 s at 30 fps")
    }

    /// --crf and --preset reach x264: it writes its settings into the stream (an SEI message),
    /// and a higher CRF makes a smaller file. The report names the values in force.
    func testCrfAndPresetReachTheEncoder() throws {
        let dir = try makeScratchDirectory()
        let a = Fixtures.path("a_")
        let fine = try VMergeBinary.run([a, "--crf", "12.5", "--preset", "veryfast", "-o", "fine.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(fine.status, 0, fine.stderr)
        let coarse = try VMergeBinary.run([a, "--crf", "40", "-o", "coarse.mp4"], in: dir)
        XCTAssertEqual(coarse.status, 0, coarse.stderr)
        func settings(_ name: String) throws -> String {
            let bytes = try Data(contentsOf: dir.appendingPathComponent(name))
            let text = String(decoding: bytes.map { $0 >= 32 && $0 < 127 ? $0 : 10 }, as: UTF8.self)
            return try XCTUnwrap(text.split(separator: "\n").first { $0.contains("x264 - core") }.map(String.init))
        }
        let fineSettings = try settings("fine.mp4"), coarseSettings = try settings("coarse.mp4")
        XCTAssertTrue(fineSettings.contains(" crf=12.5 "), fineSettings)
        // veryfast: 10 frames of lookahead and subme 2; medium (the default): 40 and 7.
        XCTAssertTrue(fineSettings.contains(" rc_lookahead=10 ") && fineSettings.contains(" subme=2 "), fineSettings)
        XCTAssertTrue(coarseSettings.contains(" crf=40.0 ") && coarseSettings.contains(" rc_lookahead=40 "), coarseSettings)
        let size = { (name: String) in
            (try? FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(name).path)[.size] as? Int) ?? 0
        }
        XCTAssertLessThan(size("coarse.mp4"), size("fine.mp4"))
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json")))
        let options = try XCTUnwrap((report as? [String: Any])?["options"] as? [String: Any])
        XCTAssertEqual(options["crf"] as? Double, 12.5)
        XCTAssertEqual(options["preset"] as? String, "veryfast")
    }
}
