import CFFmpeg
import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// SDR clips of any matrix and range, and HDR clips (HLG, PQ), come out as BT.709 SDR with the
/// colour fixtures' patches where the SDR pattern puts them (fixtures/README.md, "colour").
final class ColourTests: XCTestCase {
    /// Output picture 320x240: stripe centres on row 60, ramp centres on row 180.
    private static let patches: [(name: String, x: Int, y: Int)] = [
        ("white75", 40, 60), ("red75", 120, 60), ("green75", 200, 60), ("blue75", 280, 60),
        ("grey25", 40, 180), ("grey50", 120, 180), ("grey75", 200, 180), ("white100", 280, 180),
    ]
    /// The SDR pattern in BT.709 limited range: Y of each patch.
    private static let expectedY = [180, 51, 133, 28, 71, 126, 181, 235]

    private struct Patch {
        var y: Int
        var rgb: (r: Int, g: Int, b: Int)
    }

    /// Merges `fixtures` (--min-duration 0) and reads the patches of the frame at `time`.
    private func patches(_ fixtures: [String], at time: Double = 0.5, extra: [String] = []) throws -> [Patch] {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            fixtures.map(Fixtures.path) + ["--min-duration", "0", "-q", "-o", "out.mp4"] + extra, in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        return try readPatches(dir.appendingPathComponent("out.mp4").path, at: time)
    }

    private func readPatches(_ path: String, at time: Double) throws -> [Patch] {
        let (video, _, _) = try MediaInspector(path: path).streams()
        XCTAssertEqual(video?.colorSpace, "bt709")
        XCTAssertEqual(video?.colorPrimaries, "bt709")
        XCTAssertEqual(video?.colorTransfer, "bt709")
        let frame = try MediaInspector(path: path).lumaAndRGB(at: time)
        return ColourTests.patches.map { p in
            Patch(y: Int(frame.luma[p.y * frame.width + p.x]), rgb: frame.rgb.pixel(p.x, p.y))
        }
    }

    private func assertHues(_ patches: [Patch], file: StaticString = #filePath, line: UInt = #line) {
        let (red, green, blue) = (patches[1].rgb, patches[2].rgb, patches[3].rgb)
        XCTAssertTrue(red.r > 150 && red.g < 40 && red.b < 40, "red: \(red)", file: file, line: line)
        XCTAssertTrue(green.g > 150 && green.r < 40 && green.b < 40, "green: \(green)", file: file, line: line)
        XCTAssertTrue(blue.b > 150 && blue.r < 40 && blue.g < 40, "blue: \(blue)", file: file, line: line)
        for grey in patches[4...6] {
            XCTAssertLessThanOrEqual(
                max(abs(grey.rgb.r - grey.rgb.g), abs(grey.rgb.g - grey.rgb.b)), 4, "grey stays grey: \(grey.rgb)",
                file: file, line: line)
        }
    }

    func testBT709LimitedIsUntouched() throws {
        let p = try patches(["m_colour"])
        for (patch, expected) in zip(p, ColourTests.expectedY) {
            XCTAssertEqual(Double(patch.y), Double(expected), accuracy: 2)
        }
        assertHues(p)
    }

    /// BT.601 full range (yuvj420p): range and matrix converted, so it matches the BT.709 clip.
    func testBT601FullRangeMatchesBT709() throws {
        let p = try patches(["n_colour"]), reference = try patches(["m_colour"])
        for (a, b) in zip(p, reference) {
            XCTAssertEqual(Double(a.y), Double(b.y), accuracy: 2)
            XCTAssertEqual(Double(a.rgb.r), Double(b.rgb.r), accuracy: 4)
            XCTAssertEqual(Double(a.rgb.g), Double(b.rgb.g), accuracy: 4)
            XCTAssertEqual(Double(a.rgb.b), Double(b.rgb.b), accuracy: 4)
        }
    }

    /// HLG and PQ 10-bit HEVC: tone-mapped so SDR-range content lands on its SDR values.
    func testHDRIsToneMappedToSDR() throws {
        for fixture in ["o_colour", "p_colour"] {
            let p = try patches([fixture])
            XCTAssertEqual(Double(p[0].y), 180, accuracy: 8, "\(fixture): 75% white")
            for i in 4...6 {
                XCTAssertEqual(Double(p[i].y), Double(ColourTests.expectedY[i]), accuracy: 8, "\(fixture): grey \(i)")
            }
            // Above the knee, light rolls off instead of clipping, but stays the brightest.
            XCTAssertGreaterThan(p[7].y, p[6].y + 15, "\(fixture): 100% white")
            assertHues(p)
        }
    }

    /// An iPhone's default recording: portrait HDR (10-bit HLG HEVC coded 1920x1080, turned 90
    /// degrees, Dolby Vision 8.4), whose 4:3 window starts at coded column 555. It shows the same
    /// patches as the landscape HLG clip; FFmpeg's crop filter at that odd offset turned its
    /// chroma to noise (blue buildings, red windows, green sky).
    func testPortraitHDRRecordingHasTheLandscapeOnesColours() throws {
        let (clip, diagnostics) = try Probe.clip(at: Fixtures.path("q_hlg"))
        XCTAssertEqual(clip.video.orientation, .rotate90)
        XCTAssertEqual(clip.video.colour.dolbyVision?.profile, 8)
        XCTAssertEqual(clip.video.colour.dolbyVision?.compatibility, 4)
        XCTAssertEqual(clip.video.colour.dynamicRange, .hlg)
        XCTAssertTrue(diagnostics.isEmpty, "\(diagnostics)")
        var options = MergeOptions()
        options.minDuration = 0
        XCTAssertEqual(
            MergePlan(clips: [clip], options: options).clips.first?.crop, CropRect(x: 555, y: 0, width: 810, height: 1080))

        let portrait = try patches(["q_hlg"], at: 0.25), landscape = try patches(["o_colour"], at: 0.25)
        assertHues(portrait)
        for (i, (a, b)) in zip(portrait, landscape).enumerated() {
            XCTAssertEqual(Double(a.y), Double(b.y), accuracy: 3, "patch \(i) luma")
            XCTAssertEqual(Double(a.rgb.r), Double(b.rgb.r), accuracy: 6, "patch \(i) red")
            XCTAssertEqual(Double(a.rgb.g), Double(b.rgb.g), accuracy: 6, "patch \(i) green")
            XCTAssertEqual(Double(a.rgb.b), Double(b.rgb.b), accuracy: 6, "patch \(i) blue")
        }
    }

    func testSDRThenHLGHaveMatchingMeanLuma() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [Fixtures.path("m_colour"), Fixtures.path("o_colour"), "--min-duration", "0", "-q", "-o", "out.mp4"],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let path = dir.appendingPathComponent("out.mp4").path
        let sdr = try MediaInspector(path: path).lumaAndRGB(at: 0.5).meanLuma
        let hlg = try MediaInspector(path: path).lumaAndRGB(at: 1.5).meanLuma
        XCTAssertEqual(hlg / sdr, 1, accuracy: 0.10, "SDR \(sdr), HLG \(hlg)")
    }

    func testTonemapChoiceIsReportedAndApplied() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [
                Fixtures.path("o_colour"), Fixtures.path("n_colour"), "--min-duration", "0", "--tonemap", "hable",
                "-o", "out.mp4", "--report", "r.json",
            ], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json")))
        let inputs = (report as? [String: Any])?["inputs"] as? [[String: Any]] ?? []
        let colour = inputs.map { ($0["video"] as? [String: Any])?["colour"] as? [String: Any] ?? [:] }
        XCTAssertEqual(colour[0]["dynamic_range"] as? String, "hlg")
        XCTAssertEqual(colour[0]["tonemap"] as? String, "hable")
        XCTAssertEqual(colour[0]["conversion"] as? String, "tone-mapped arib-std-b67 -> bt709 (hable)")
        XCTAssertEqual(colour[0]["bit_depth"] as? Int, 10)
        XCTAssertEqual(colour[1]["range"] as? String, "pc")
        XCTAssertEqual(colour[1]["conversion"] as? String, "matrix smpte170m -> bt709")
        XCTAssertTrue(colour[1]["tonemap"] is NSNull)
        // hable is darker than the default: the choice reaches the picture.
        let hable = try readPatches(dir.appendingPathComponent("out.mp4").path, at: 0.5)
        XCTAssertLessThan(hable[0].y, 160, "hable darkens 75% white (mobius keeps it at 180)")
    }

    /// A build without zscale (no libzimg) still merges HDR clips, with a warning naming what is
    /// missing, and at least converts the matrix.
    func testWithoutZscaleHDRStillMergesWithAWarning() throws {
        let dir = try makeScratchDirectory()
        let clip = Fixtures.path("o_colour")
        let run = try VMergeBinary.run(
            [clip, "--min-duration", "0", "-o", "out.mp4"], in: dir, environment: ["VMERGE_TEST_HIDE_FILTERS": "zscale"]
        )
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(
            run.stderrLines.contains(
                "vmerge: \(clip): HLG video, but this FFmpeg build lacks zscale to tone-map it: colours will look washed out"
            ),
            run.stderr)
        let frame = try MediaInspector(path: dir.appendingPathComponent("out.mp4").path).lumaAndRGB(at: 0.5)
        let red = frame.rgb.pixel(120, 60)
        XCTAssertTrue(red.r > red.g && red.r > red.b, "still red: \(red)")
    }

    /// A BT.601 picture becomes BT.709 as exactly as the scaler's geometry allows: vmerge's own
    /// video chain (FilterGraphs, run by libavfilter through the ffmpeg CLI) against the same
    /// scaling with the matrix done in floating point at full chroma resolution (zimg). The
    /// picture has a different chroma value at every chroma sample, where a conversion on 4:2:0
    /// (each 2x2 block's luma corrected with one shared chroma value) was 27 dB off in luma.
    func testMatrixConversionMatchesAnExactOneOnFineChromaDetail() throws {
        let dir = try makeScratchDirectory()
        let width = 640, height = 480
        var state: UInt32 = 12345
        func next(_ range: ClosedRange<Int>) -> UInt8 {
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(range.lowerBound + Int(state >> 16) % (range.count))
        }
        var picture = [UInt8]()
        for y in 0..<height {
            for x in 0..<width {
                let ramp = 16 + 219 * (x * 5 / width + y * 3 / height) / 10
                picture.append(UInt8(clamping: ramp + Int(next(0...40)) - 20))
            }
        }
        for _ in 0..<(width * height / 2) { picture.append(next(40...216)) }
        try Data(picture).write(to: dir.appendingPathComponent("in.yuv"))

        let chain = FilterGraphs.video(
            crop: CropRect(x: 0, y: 0, width: width, height: height), orientation: .identity,
            inputRate: Rational(30, 1), colour: .matrix(from: "smpte170m"), options: MergeOptions())
        let exact =
            "scale=w=320:h=240:flags=bicubic:out_range=tv,format=yuv444p16,"
            + "zscale=min=170m:m=709:rin=limited:r=limited:d=none,format=yuv444p16,scale=flags=bicubic,format=yuv420p"
        for (name, graph) in [("vmerge.yuv", chain), ("exact.yuv", exact)] {
            let run = try runProgram(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(width)x\(height)",
                 "-framerate", "30", "-i", "in.yuv", "-vf", graph, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt",
                 "yuv420p", name], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
        }
        let ours = [UInt8](try Data(contentsOf: dir.appendingPathComponent("vmerge.yuv")))
        let reference = [UInt8](try Data(contentsOf: dir.appendingPathComponent("exact.yuv")))
        XCTAssertEqual(ours.count, 320 * 240 * 3 / 2)
        XCTAssertEqual(reference.count, ours.count)
        func psnr(_ range: Range<Int>) -> Double {
            let mse = range.reduce(0.0) { sum, i in
                let d = Double(ours[i]) - Double(reference[i])
                return sum + d * d
            } / Double(range.count)
            return 10 * log10(255 * 255 / max(mse, 1e-12))
        }
        let luma = psnr(0..<(320 * 240)), chroma = psnr((320 * 240)..<ours.count)
        XCTAssertGreaterThan(luma, 48, "luma \(luma) dB from the exact conversion")
        XCTAssertGreaterThan(chroma, 48, "chroma \(chroma) dB from the exact conversion")
    }
}
