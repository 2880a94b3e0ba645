import Foundation
import TestSupport
import XCTest

/// Degenerate shapes fail clearly and alone, as the built binary says it, dry run included.
final class DegenerateShapeRunTests: XCTestCase {
    private let a = Fixtures.path("a_")

    /// A trim shorter than half an output frame used to give an MP4 with no streams and exit 0.
    func testNothingLeftButAnInstantExitsThreeWithTheReason() throws {
        let dir = try makeScratchDirectory()
        let t1 = Fixtures.path("t1_")
        let run = try VMergeBinary.run([t1, "--trim", "1,1.01", "--min-duration", "0", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 3, run.stderr)
        XCTAssertEqual(
            run.stderrLines,
            [
                "vmerge: \(t1): dropped: the trimmed part lasts 0.01 s, under half an output frame (0.017 s): no frame "
                    + "of the output would show it",
                "vmerge: nothing to merge: its one input clip was dropped",
            ])
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.mp4").path))
        // With another clip, the instant is left out and the rest is merged.
        let mixed = try VMergeBinary.run(
            [t1, "--trim", "1,1.01", a, "--min-duration", "0", "-q", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(mixed.status, 0, mixed.stderr)
        let inputs = try jsonObject(at: dir.appendingPathComponent("r.json"))["inputs"] as? [[String: Any]] ?? []
        XCTAssertEqual(inputs.map { $0["status"] as? String }, ["dropped-short", "kept"])
        XCTAssertEqual(try decodedVideoDuration(dir.appendingPathComponent("out.mp4").path), 3, accuracy: 0.04)
    }

    /// A 1-pixel-wide or -high clip is an invalid input like any other (it made the filters fail
    /// for the whole merge, even with --skip-invalid).
    func testAOnePixelPictureIsAnInvalidInput() throws {
        let dir = try makeScratchDirectory()
        try runFFmpeg(["-f", "lavfi", "-i", "color=red:s=2x240:d=1", "-vf", "format=rgb24,crop=1:240:0:0", "-c:v", "png", "thin.mov"], in: dir)
        try runFFmpeg(["-f", "lavfi", "-i", "color=red:s=320x2:d=1", "-vf", "format=rgb24,crop=320:1:0:0", "-c:v", "png", "flat.mov"], in: dir)
        let strict = try VMergeBinary.run(["thin.mov", a, "-o", "out.mp4"], in: dir)
        XCTAssertEqual(strict.status, 1)
        XCTAssertEqual(
            strict.stderrLines, ["vmerge: thin.mov: picture is 1x240: at least 2x2 pixels are needed to crop and scale it"])
        let skipping = try VMergeBinary.run(["thin.mov", "flat.mov", a, "--skip-invalid", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(skipping.status, 0, skipping.stderr)
        XCTAssertTrue(
            skipping.stderrLines.contains(
                "vmerge: flat.mov: skipped: picture is 320x1: at least 2x2 pixels are needed to crop and scale it"),
            skipping.stderr)
        XCTAssertEqual(try decodedVideoDuration(dir.appendingPathComponent("out.mp4").path), 3, accuracy: 0.04)
    }

    /// Output shapes that cannot be made are usage errors before any work, in the dry run too.
    func testOutputShapesThatCannotBeMadeAreUsageErrors() throws {
        let dir = try makeScratchDirectory()
        for (extra, message) in [
            (["--aspect", "1:10", "--width", "7680"],
             "'--width 7680' with '--aspect 1:10' makes a 7680x76800 picture: each side must be 2 to 16384 pixels"),
            (["--fit", "blur", "--width", "16", "--aspect", "8:1"],
             "'--width 16' with '--aspect 8:1' makes a 16x2 picture: each side must be 4 to 16384 pixels with "
                + "'--fit blur'"),
        ] {
            for dry in [[], ["--dry-run"]] {
                let run = try VMergeBinary.run([a, "-o", "out.mp4"] + extra + dry, in: dir)
                XCTAssertEqual(run.status, 2, run.stderr)
                XCTAssertEqual(run.stderrLines.first, "vmerge: \(message)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.mp4").path))
        // The smallest shapes that can be made are made, in every fit.
        for (fit, aspect) in [("crop", "8:1"), ("pad", "8:1"), ("blur", "4:1")] {
            let run = try VMergeBinary.run(
                [a, "-q", "-y", "--fit", fit, "--width", "16", "--aspect", aspect, "-o", "small.mp4"], in: dir)
            XCTAssertEqual(run.status, 0, "\(fit): \(run.stderr)")
            let (video, _, _) = try MediaInspector(path: dir.appendingPathComponent("small.mp4").path).streams()
            XCTAssertEqual(video?.width, 16, fit)
            XCTAssertEqual(video?.height, aspect == "8:1" ? 2 : 4, fit)
        }
    }

    /// A size that can be made but takes long says so before the work, as the dry run does.
    func testALargeOutputSaysHowLongItWillTake() throws {
        let dir = try makeScratchDirectory()
        // 20 x 3 s at 3840x2880: 1800 frames of 11 Mpixel at 30 Mpixel a second.
        let run = try VMergeBinary.run(
            Array(repeating: a, count: 20) + ["--width", "3840", "--dry-run", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            run.stderrLines,
            [
                "vmerge: a 3840x2880 output takes long to encode: about 11 min for its 60 s (x264 makes about 2.7 "
                    + "such frames a second on 2 cores)"
            ])
        let small = try VMergeBinary.run(Array(repeating: a, count: 20) + ["--dry-run", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(small.stderr, "")
    }
}
