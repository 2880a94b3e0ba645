import Foundation
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
}
