import Foundation
import TestSupport
import XCTest

/// --fit: a portrait clip (b: 1080x1920 upright, yellow above and below its 4:3 middle) in the
/// 320x240 output. Scaled whole it is 136x240, at x 92-227.
final class FitTests: XCTestCase {
    private func frame(fit: String) throws -> (width: Int, luma: [UInt8], rgb: RGBImage) {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("b_"), "--fit", fit, "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let frame = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).lumaAndRGB(at: 1.0)
        return (frame.width, frame.luma, frame.rgb)
    }

    /// Columns left and right of the picture, with a margin for the scaler's soft edge.
    private let sides = Array(0..<88) + Array(232..<320)

    func testPadShowsTheWholePictureBetweenBlackBars() throws {
        let (width, luma, rgb) = try frame(fit: "pad")
        for y in stride(from: 0, to: 240, by: 3) {
            for x in sides { XCTAssertLessThanOrEqual(luma[y * width + x], 20, "black bar at (\(x), \(y))") }
        }
        // All of the picture, upright: its yellow top and bottom (cut off by crop), and the markers.
        XCTAssertEqual(rgb.colour(160, 20), "yellow")
        XCTAssertEqual(rgb.colour(160, 220), "yellow")
        XCTAssertEqual(rgb.colour(160, 120), "grey")
        XCTAssertEqual(rgb.colour(110, 88), "red")
        XCTAssertEqual(rgb.colour(210, 88), "green")
        XCTAssertEqual(rgb.colour(210, 150), "blue")
    }

    func testBlurFillsTheSidesWithASoftDarkCopy() throws {
        let (width, luma, rgb) = try frame(fit: "blur")
        let pad = try frame(fit: "pad")
        var sum = 0, count = 0, steepest = 0
        for y in stride(from: 0, to: 240, by: 3) {
            for x in sides {
                sum += Int(luma[y * width + x])
                count += 1
                if x + 1 < 320, sides.contains(x + 1) {
                    steepest = max(steepest, abs(Int(luma[y * width + x + 1]) - Int(luma[y * width + x])))
                }
            }
        }
        let mean = Double(sum) / Double(count)
        XCTAssertGreaterThan(mean, 30, "not black")
        XCTAssertLessThan(mean, 140, "darkened")
        XCTAssertLessThan(steepest, 12, "blurred: no hard edges beside the picture")
        // The picture itself is the same as with pad.
        var difference = 0
        for y in 0..<240 {
            for x in 100..<220 { difference += abs(Int(luma[y * width + x]) - Int(pad.luma[y * width + x])) }
        }
        XCTAssertLessThan(Double(difference) / Double(240 * 120), 3, "mean luma difference in the picture")
        XCTAssertEqual(rgb.colour(110, 88), "red")
    }

    func testALandscapeClipOfTheOutputsShapeIsTheSameEveryWay() throws {
        // a is 640x480, 4:3 like the output: nothing to crop, pad or blur.
        var lumas: [[UInt8]] = []
        for fit in ["crop", "pad", "blur"] {
            let dir = try makeScratchDirectory()
            let run = try VMergeBinary.run([Fixtures.path("a_"), "--fit", fit, "-o", "out.mp4"], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
            lumas.append(try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).lumaAndRGB(at: 1.0).luma)
        }
        XCTAssertEqual(lumas[1], lumas[0], "pad")
        XCTAssertEqual(lumas[2], lumas[0], "blur")
    }
}
