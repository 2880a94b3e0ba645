import Foundation
import TestSupport
import XCTest

/// `--skip-deblocking` (issue 36): the decoder may leave pictures without its deblocking filter.
/// Each choice changes exactly the pictures it names, `auto` skips only where the clip shrinks 3x
/// or more, and what is skipped stays close to the full decode.
final class DeblockingTests: XCTestCase {
    /// Merges `fixture` alone with `--skip-deblocking choice`; returns the output's bytes and path.
    /// With --strip-metadata: a merge records its job key, which differs with the choice, and the
    /// bytes compared are to differ only by the pictures.
    private func merge(_ fixture: String, _ choice: String, in dir: URL) throws -> (bytes: Data, path: String) {
        let name = "\(fixture)\(choice).mp4"
        let run = try VMergeBinary.run(
            [
                Fixtures.path(fixture), "-y", "--min-duration", "0", "--skip-deblocking", choice, "--strip-metadata",
                "-o", name, "--report", name + ".json",
            ],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try jsonObject(at: dir.appendingPathComponent(name + ".json"))
        XCTAssertEqual(
            (report["options"] as? [String: Any])?["skip_deblocking"] as? String, choice, "the report says the choice")
        let path = dir.appendingPathComponent(name).path
        return (try Data(contentsOf: URL(fileURLWithPath: path)), path)
    }

    /// b is 1920x1080 (cropped to 1440x1080 and shrunk 4.5x) with 55 B-frames no picture
    /// references: `auto` is `unreferenced` there, and each wider choice changes more.
    func testEachChoiceSkipsWhatItNamesAndAutoSkipsOnlyUnreferencedPicturesOfAShrunkClip() throws {
        let dir = try makeScratchDirectory()
        let out = Dictionary(
            uniqueKeysWithValues: try ["auto", "never", "unreferenced", "always"].map {
                ($0, try merge("b_", $0, in: dir))
            })
        XCTAssertEqual(
            out["auto"]?.bytes, out["unreferenced"]?.bytes, "auto skips the unreferenced pictures of a clip shrunk 4.5x"
        )
        XCTAssertNotEqual(out["never"]?.bytes, out["unreferenced"]?.bytes, "the B-frames were deblocked with never")
        XCTAssertNotEqual(out["unreferenced"]?.bytes, out["always"]?.bytes, "the reference pictures too with always")
        let never = try XCTUnwrap(out["never"]?.path)
        let unreferenced = try ffmpegPSNR(XCTUnwrap(out["unreferenced"]?.path), never, in: dir).y
        let always = try ffmpegPSNR(XCTUnwrap(out["always"]?.path), never, in: dir).y
        XCTAssertGreaterThan(unreferenced, 40, "unreferenced against never: \(unreferenced) dB")
        XCTAssertGreaterThan(always, 35, "always against never: \(always) dB")
        XCTAssertGreaterThan(unreferenced, always, "skipping less stays closer")
    }

    /// a is 640x480, shrunk 2x: `auto` deblocks every picture there, as `never` does.
    func testAutoDeblocksEveryPictureOfAClipShrunkLessThanThreefold() throws {
        let dir = try makeScratchDirectory()
        XCTAssertEqual(try merge("a_", "auto", in: dir).bytes, try merge("a_", "never", in: dir).bytes)
        XCTAssertNotEqual(try merge("a_", "always", in: dir).bytes, try merge("a_", "never", in: dir).bytes)
    }
}
