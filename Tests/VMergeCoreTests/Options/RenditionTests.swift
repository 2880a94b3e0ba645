import Foundation
import XCTest

@testable import VMergeCore

/// `--rendition SPEC[=FILE]` read into a typed rendition (issue 49): presets and WIDTHxHEIGHT,
/// per-rendition settings, a file name that may hold `=` and `:`, the default name beside -o,
/// and one sentence for each value that is not a rendition.
final class RenditionTests: XCTestCase {
    func parsed(_ text: String) -> Rendition? { try? Rendition.parse(text).get() }

    func problem(_ text: String) -> String? {
        if case let .failure(problem) = Rendition.parse(text) { return problem.description }
        return nil
    }

    func testPresetsAreThePostedShapes() {
        let sizes = Rendition.Preset.allCases.map { "\($0.rawValue) \($0.size.width)x\($0.size.height)" }
        XCTAssertEqual(
            sizes,
            ["4x3-240 320x240", "4x3-480 640x480", "16x9-720 1280x720", "9x16-1080 1080x1920", "1x1-720 720x720"])
        XCTAssertEqual(parsed("9x16-1080"), Rendition(name: "9x16-1080", width: 1080, height: 1920))
        XCTAssertEqual(parsed("9x16-1080")?.aspect, Rational(9, 16))
    }

    func testSettingsAndAFileFollowTheShape() {
        XCTAssertEqual(
            parsed("1x1-720:crf=20:fit=blur:preset=fast=square.mp4"),
            Rendition(name: "1x1-720", width: 720, height: 720, fit: .blur, crf: 20, preset: .fast, file: "square.mp4"))
        XCTAssertEqual(parsed("640x360=a=b:c.mp4")?.file, "a=b:c.mp4")
        XCTAssertEqual(parsed("640x360"), Rendition(name: "640x360", width: 640, height: 360))
        XCTAssertEqual(parsed("640x360:crf=18.5")?.crf, 18.5)
    }

    func testTheDefaultFileIsBesideTheOutput() {
        let output = FileName("clips/trip.final.mp4")
        XCTAssertEqual(parsed("9x16-1080")?.fileName(besideOutput: output), FileName("clips/trip.final-9x16-1080.mp4"))
        XCTAssertEqual(parsed("640x360")?.fileName(besideOutput: FileName("trip.mp4")), FileName("trip-640x360.mp4"))
        XCTAssertEqual(parsed("4x3-480=x.mp4")?.fileName(besideOutput: output), FileName("clips/x.mp4"))
        XCTAssertEqual(parsed("4x3-480=x.mp4")?.fileName(besideOutput: FileName("trip.mp4")), FileName("x.mp4"))
        XCTAssertNil(parsed("4x3-480=../x.mp4"))
    }

    func testWhatIsNotARenditionIsSaidInOneSentence() {
        XCTAssertEqual(
            problem("vertical"),
            "'vertical' is neither a preset (4x3-240, 4x3-480, 16x9-720, 9x16-1080, 1x1-720) nor WIDTHxHEIGHT")
        XCTAssertEqual(problem("9x16"), "each side is even (4:2:0 pictures); the preset is 9x16-1080")
        XCTAssertEqual(problem("641x360"), "each side is even (4:2:0 pictures)")
        XCTAssertEqual(problem("0x360"), "each side is 2 to 16384 pixels")
        XCTAssertEqual(problem("16386x2"), "each side is 2 to 16384 pixels")
        XCTAssertEqual(problem("2x2:fit=blur"), "each side is 4 to 16384 pixels")
        XCTAssertEqual(problem("640x360:crf=60"), "crf is a number from 0 to 51")
        XCTAssertEqual(problem("640x360:crf=nan"), "crf is a number from 0 to 51")
        XCTAssertEqual(problem("640x360:fit=stretch"), "fit is crop, pad or blur")
        XCTAssertEqual(problem("640x360:speed=2"), "'speed' is not a rendition's setting (crf, fit, preset)")
        XCTAssertEqual(problem("640x360:crf"), "'crf' is not key=value")
        XCTAssertEqual(problem("640x360="), "'=' is followed by no file name")
        XCTAssertEqual(problem("+640x360")?.hasSuffix("nor WIDTHxHEIGHT"), true)
        XCTAssertEqual(problem("640x-360")?.hasSuffix("nor WIDTHxHEIGHT"), true)
        XCTAssertEqual(problem("６４０x360")?.hasSuffix("nor WIDTHxHEIGHT"), true)
    }

    /// A portrait phone clip (1920x1080 coded, turned 90°) fills a 9:16 rendition whole and is
    /// cut for a 4:3 one; a landscape clip's 9:16 window is the centre of its whole picture.
    func testEachRenditionCropsTheUprightPictureToItsOwnAspect() throws {
        let portrait = (w: 1920, h: 1080, turn: Orientation.rotate90)
        let reel = try XCTUnwrap(parsed("9x16-1080"))
        let web = try XCTUnwrap(parsed("4x3-240"))
        XCTAssertEqual(
            reel.crop(
                codedWidth: portrait.w, codedHeight: portrait.h, sampleAspect: Rational(1, 1),
                orientation: portrait.turn),
            CropRect(x: 0, y: 0, width: 1920, height: 1080))
        // Upright 1080x1920 cut to 4:3: 1080x810, which is 810 of the coded width, centred.
        XCTAssertEqual(
            web.crop(
                codedWidth: portrait.w, codedHeight: portrait.h, sampleAspect: Rational(1, 1),
                orientation: portrait.turn),
            CropRect(x: 555, y: 0, width: 810, height: 1080))
        // Landscape 1920x1080 in 9:16: 608x1080 from the middle (1080 * 9 / 16 = 607.5, made even).
        XCTAssertEqual(
            reel.crop(codedWidth: 1920, codedHeight: 1080, sampleAspect: Rational(1, 1), orientation: .identity),
            CropRect(x: 656, y: 0, width: 608, height: 1080))
    }
}
