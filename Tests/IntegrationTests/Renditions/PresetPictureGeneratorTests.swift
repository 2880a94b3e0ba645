import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// Every preset renders every clip right, over seeded random clips: one merge of eleven clips, one
/// in each pixel format of the picture path matrix (4:2:0, 4:2:2, 4:4:4, packed, 10- and 12-bit,
/// HLG and PQ, alpha), every one of the eight display matrices among them, each of a random
/// upright size (odd sides where the format allows, so windows start at odd or even offsets and
/// meet odd slack by chance), makes the job's own 320x240 and a rendition of every other preset
/// at its real size, decoded once. Each file's frames are compared with a reference made per clip
/// and per preset: the clip's window of the preset's aspect (computed here, from the preset sizes
/// written here) cut alone from ffmpeg's decode, turned upright by this file's own table and given
/// the same scaling and colour work (`PicturePathMatrixTests`'s reference: the window, the turn
/// and the crop are judged here; the colour and scaling chains are vmerge's own, so each clip's
/// centre is also checked to be red by its colour, worked out here). VMERGE_PRESET_SEED=S draws
/// another merge (a failure names its seed).
final class PresetPictureGeneratorTests: XCTestCase {
    typealias Matrix = PicturePathMatrixTests

    /// The eight display matrices: the matrix test's six and the two mirrors it leaves out.
    static let turns =
        Matrix.turns + [
            Matrix.Turn(matrix: "vflip", toCoded: "vflip", upright: "vflip"),
            Matrix.Turn(matrix: "antitranspose", toCoded: "transpose=clock_flip", upright: "transpose=clock_flip"),
        ]

    /// Each preset's file and size, as the issue names them: the job's own (-o, 4x3-240) and a
    /// rendition of each of the others. Each window is its aspect's centre, both sides even (the
    /// job's own too: a 170x230 picture's 4:3 window is 170x128, not 170x127).
    struct Output {
        var preset: String
        var file: String
        var width: Int, height: Int
        var aspect: (Int, Int)
    }
    static let outputs = [
        Output(preset: "4x3-240", file: "out.mp4", width: 320, height: 240, aspect: (4, 3)),
        Output(preset: "4x3-480", file: "p480.mp4", width: 640, height: 480, aspect: (4, 3)),
        Output(preset: "16x9-720", file: "p720.mp4", width: 1280, height: 720, aspect: (16, 9)),
        Output(preset: "9x16-1080", file: "p1080.mp4", width: 1080, height: 1920, aspect: (9, 16)),
        Output(preset: "1x1-720", file: "square.mp4", width: 720, height: 720, aspect: (1, 1)),
    ]

    static let frames = 3
    /// Luma as the matrix test's; chroma lower. Measured over seeds 1-20 (1,100 comparisons): luma
    /// 46.5-99 dB, chroma 41.7-99, the lowest where a window is resampled nearly 1:1 (308x232 to
    /// 320x240: the reference's 4:4:4 round trip against vmerge's scaling of subsampled chroma,
    /// as the matrix test notes for its windows as big as the output) and in tone-mapped PQ. The
    /// reference's window one pixel off gave luma of at most 34.1 dB on every cell (seed 1).
    static let minimumLumaPSNR = Matrix.minimumLumaPSNR
    static let minimumChromaPSNR = 40.0
    /// Luma of a tone-mapped (HLG, PQ) clip shrunk 2-3x (a big clip's 320x240), made from the
    /// decoded pictures like every tone-mapped picture: seeds 1-12 of clips of 644-900 pixels gave
    /// 39.6-46 dB in PQ (1.5-1.9x bigger, seeds 1-8: 44.0 and up). vmerge and the reference there
    /// are 41 dB apart but equally far, 31.6 and 31.8 dB, from scaling the same test pattern in
    /// linear light: tone mapping turns the reference's 4:4:4 round trip into luma differences,
    /// as the matrix test notes. Every other clip's files, the 320x240 scaled from the 640x480,
    /// gave luma 51.1 and chroma 50.3 dB or more (seeds 1-8, sides 960-1100).
    static let minimumToneMappedLumaPSNR = 38.0

    struct Clip {
        var cell: Matrix.Cell
        var format: Matrix.PixelFormat
        var label: String { "\(format.name), \(cell.width)x\(cell.height) \(cell.turn.matrix)" }
    }

    /// Eleven clips, one in each format (all of them every run): every turn, then three drawn again,
    /// in a shuffled order; sides of 96-401 pixels, odd wherever the coded picture allows it (an
    /// axis its chroma is not subsampled along), so a flipped or turned window meets odd slack.
    static func clips(seed: UInt64, sides: ClosedRange<Int> = 96...401) -> [Clip] {
        var random = SeededRandom(state: seed &* 0x2545_F491_4F6C_DD1D)
        let formats = Matrix.formats.shuffled(using: &random)
        var chosen = turns.shuffled(using: &random)
        while chosen.count < formats.count { chosen.append(random.pick(turns)) }
        let (low, span) = (sides.lowerBound, sides.upperBound - sides.lowerBound)
        return zip(chosen, formats).map { turn, format in
            let side = { (subsampled: Bool) in
                subsampled ? 2 * (low / 2 + random.below(span / 2 + 1)) : low + random.below(span + 1)
            }
            let across = side(format.subsampling.log2Width > 0), down = side(format.subsampling.log2Height > 0)
            let swaps = turn.upright.hasPrefix("transpose")
            return Clip(
                cell: Matrix.Cell(width: swaps ? down : across, height: swaps ? across : down, turn: turn),
                format: format)
        }
    }

    /// The window of aspect `a:b` in `cell`'s upright picture (its size) and where it lies in the
    /// coded picture: one whole side, less a pixel when odd, the other from the aspect, both even;
    /// centred in the coded picture, so where the slack is odd the window starts half a pixel
    /// before the centre in the coded picture (a flip's upright picture: half a pixel after). A
    /// mirror of the same scene keeps the same pixels; vmerge's rule (`centreCrop`).
    static func window(of cell: Matrix.Cell, aspect a: Int, _ b: Int) -> (upright: CropRect, coded: CropRect) {
        let (width, height) = (cell.width, cell.height)
        let even = { (v: Double, limit: Int) in min(Int((v / 2).rounded()) * 2, limit & ~1) }
        let (w, h) =
            width * b > height * a
            ? (even(Double(height * a) / Double(b), width), height & ~1)
            : (width & ~1, even(Double(width * b) / Double(a), height))
        let swaps = cell.turn.upright.hasPrefix("transpose")
        let (codedWidth, codedHeight) = swaps ? (height, width) : (width, height)
        let (cw, ch) = swaps ? (h, w) : (w, h)
        return (
            CropRect(x: 0, y: 0, width: w, height: h),
            CropRect(x: (codedWidth - cw) / 2, y: (codedHeight - ch) / 2, width: cw, height: ch)
        )
    }

    func testEveryPresetRendersRandomClipsInEveryTurnAndFormat() throws {
        let seed = ProcessInfo.processInfo.environment["VMERGE_PRESET_SEED"].flatMap(UInt64.init) ?? 1
        try check(Self.clips(seed: seed), Self.outputs, seed: seed)
    }

    /// The job's own 320x240 beside a 640x480 is scaled from the 640x480's frames wherever the
    /// clip's window shrinks at least 1.5x to 640x480 (`DerivedPictures`): here every clip's,
    /// sides of 960-1100 pixels, in every format and turn, against the same reference made from
    /// the source.
    /// (A tone-mapped clip's pictures are each made from the decoded pictures: tone mapping does
    /// not commute with scaling. Scaled from the 640x480, HLG and PQ came out at 34-37 dB.)
    func testAPictureScaledFromALargerOneRendersEveryTurnAndFormat() throws {
        let seed = ProcessInfo.processInfo.environment["VMERGE_PRESET_SEED"].flatMap(UInt64.init) ?? 1
        let clips = Self.clips(seed: seed, sides: 960...1100)
        let planned = try check(clips, Array(Self.outputs.prefix(2)), seed: seed)
        // What the test is for: every clip's 320x240 was made from its 640x480 (none tone-mapped).
        for (clip, plan) in zip(clips, planned) {
            XCTAssertEqual(
                plan.scaledFrom, plan.colour.isToneMapped ? [nil, nil] : [1, nil], "seed \(seed): \(clip.label)")
        }
    }

    /// Merges `clips` into `outputs` (the first the job's own, each other a rendition) and compares
    /// every file with its reference; returns how vmerge planned each clip.
    @discardableResult
    private func check(_ clips: [Clip], _ outputs: [Output], seed: UInt64) throws -> [PlannedClip] {
        let dir = try makeScratchDirectory()
        for (i, clip) in clips.enumerated() {
            let (cell, format) = (clip.cell, clip.format)
            try runFFmpeg(
                [
                    "-f", "lavfi", "-i",
                    // testsrc2 makes even sides only: an odd one is cut from the next even.
                    "testsrc2=s=\(cell.width + cell.width % 2)x\(cell.height + cell.height % 2):r=30"
                        + ":d=\(Double(Self.frames) / 30)", "-vf",
                    "format=gbrp,crop=\(cell.width):\(cell.height):0:0,\(Self.redCentre(cell)),\(cell.turn.toCoded)"
                        + ",format=\(format.pixFmt)",
                ] + format.encoder + format.colour + ["-an", "c\(i).mov"], in: dir)
            if cell.turn.matrix != "none" {
                let patch = try runProgram(
                    URL(fileURLWithPath: "/usr/bin/env"),
                    [
                        "python3", Fixtures.directory.appendingPathComponent("patch_matrix.py").path, "c\(i).mov",
                        cell.turn.matrix,
                    ], in: dir)
                guard patch.status == 0 else { throw Matrix.MatrixError.failed("patch_matrix.py: \(patch.stderr)") }
            }
        }
        let merge = try VMergeBinary.run(
            ["--min-duration", "0", "--crf", "0", "--preset", "ultrafast", "-q"] + clips.indices.map { "c\($0).mov" }
                + ["-o", "out.mp4"] + outputs.dropFirst().flatMap { ["--rendition", "\($0.preset)=\($0.file)"] },
            in: dir)
        XCTAssertEqual(merge.status, 0, "seed \(seed): \(merge.stderr)")
        guard merge.status == 0 else { return [] }
        var options = MergeOptions()
        options.minDuration = 0
        options.renditions = try outputs.dropFirst().map { try Rendition.parse($0.preset).get() }
        let planned = MergePlan(
            probes: try clips.indices.map {
                .clip(try Probe.clip(at: dir.appendingPathComponent("c\($0).mov").path).0)
            },
            options: options
        ).clips
        XCTAssertEqual(planned.count, clips.count, "seed \(seed)")

        nonisolated(unsafe) var results: [String] = []
        nonisolated(unsafe) var failures: [String] = []
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: outputs.count) { n in
            let output = outputs[n]
            do {
                let measured = try Self.compare(clips, output, in: dir)
                lock.withLock {
                    for (i, (clip, psnr)) in zip(clips, measured).enumerated() {
                        let line = String(
                            format: "%@ | %@ | %.1f %.1f %.1f", output.preset, clip.label, psnr.y, psnr.u, psnr.v)
                        results.append(line)
                        let luma =
                            planned[i].colour.isToneMapped ? Self.minimumToneMappedLumaPSNR : Self.minimumLumaPSNR
                        if psnr.y < luma || min(psnr.u, psnr.v) < Self.minimumChromaPSNR {
                            failures.append(line)
                        }
                        if let centre = psnr.centre { failures.append("\(line): \(centre)") }
                    }
                }
            } catch {
                lock.withLock { failures.append("\(output.preset): \(error)") }
            }
        }
        print(
            "presets over seed \(seed) (PSNR Y U V against the reference, dB):\n"
                + results.sorted().joined(separator: "\n"))
        XCTAssertEqual(results.count, clips.count * outputs.count, "seed \(seed)")
        XCTAssertTrue(failures.isEmpty, "seed \(seed):\n" + failures.joined(separator: "\n"))
        return planned
    }

    /// A red square in the centre of the upright picture, inside every preset's window: checked
    /// by its colour (BT.709 by hand, not by vmerge's colour code or the reference's), so a
    /// rendition whose colour work went wrong with the reference's (planes swapped, a transfer
    /// or matrix mistaken) is still seen.
    static func redCentre(_ cell: Matrix.Cell) -> String {
        let side = min(cell.width, cell.height) / 4
        return "drawbox=x=\((cell.width - side) / 2):y=\((cell.height - side) / 2):w=\(side):h=\(side):color=red:t=fill"
    }

    /// Why the centre of the frame at `start` (`width`x`height`, yuv420p, BT.709 limited range) is
    /// not red; nil when it is.
    static func notRed(_ frames: [UInt8], frameAt start: Int, width: Int, height: Int) -> String? {
        let (x, y, luma) = (width / 2, height / 2, width * height)
        let yy = (Double(frames[start + y * width + x]) - 16) * 255 / 219
        let u = Double(frames[start + luma + (y / 2) * (width / 2) + x / 2]) - 128
        let v = Double(frames[start + luma + luma / 4 + (y / 2) * (width / 2) + x / 2]) - 128
        let (r, g, b) = (
            yy + 1.5748 * v * 255 / 224, yy - (0.1873 * u + 0.4681 * v) * 255 / 224, yy + 1.8556 * u * 255 / 224
        )
        return r > g + 60 && r > b + 60 ? nil : String(format: "its centre is (%.0f, %.0f, %.0f), not red", r, g, b)
    }

    /// `output`'s frames against each clip's reference of the preset's window: the worst frame's
    /// PSNR per plane, per clip, in the merge's order, and whether each clip's centre is red.
    private static func compare(_ clips: [Clip], _ output: Output, in dir: URL) throws -> [(
        y: Double, u: Double, v: Double, centre: String?
    )] {
        let raw = output.file.replacingOccurrences(of: ".mp4", with: ".yuv")
        try runFFmpeg(["-i", output.file, "-f", "rawvideo", "-pix_fmt", "yuv420p", raw], in: dir)
        var options = MergeOptions()
        options.crf = 0
        options.width = output.width
        options.aspect = Rational(output.width, output.height)
        var arguments: [String] = []
        var graph: [String] = []
        for (i, clip) in clips.enumerated() {
            arguments += ["-noautorotate", "-i", "c\(i).mov"]
            let (probed, _) = try Probe.clip(at: dir.appendingPathComponent("c\(i).mov").path)
            let colour = ColourConversion.plan(
                for: probed.video.colour, width: probed.video.width, height: probed.video.height,
                tonemap: options.tonemap, canToneMap: true)
            let window = Self.window(of: clip.cell, aspect: output.aspect.0, output.aspect.1)
            let chain = FilterGraphs.video(
                crop: window.upright, orientation: .identity,
                inputRate: Rational(30, 1), colour: colour, options: options,
                cropping: .inGraph(afterConvertingTo: "yuv444p16le"))
            graph.append(
                "[\(i):v]\(Matrix.windowAlone(clip.format, clip.cell, coded: window.coded)),\(chain)[r\(i)]"
            )
        }
        graph.append(clips.indices.map { "[r\($0)]" }.joined() + "concat=n=\(clips.count):v=1:a=0[out]")
        let reference = "ref-" + raw
        try runFFmpeg(
            arguments + [
                "-filter_complex", graph.joined(separator: ";"), "-map", "[out]", "-f", "rawvideo", "-pix_fmt",
                "yuv420p", reference,
            ], in: dir)
        let ours = [UInt8](try Data(contentsOf: dir.appendingPathComponent(raw)))
        let theirs = [UInt8](try Data(contentsOf: dir.appendingPathComponent(reference)))
        let frameSize = output.width * output.height * 3 / 2
        let expected = clips.count * frames * frameSize
        guard ours.count == expected, theirs.count == expected else {
            throw Matrix.MatrixError.failed(
                "\(output.file): \(ours.count / frameSize) frames out of vmerge, \(theirs.count / frameSize) of the "
                    + "reference; \(clips.count * frames) expected")
        }
        return clips.indices.map { i in
            let worst = (0..<frames).reduce((y: Double.infinity, u: Double.infinity, v: Double.infinity)) { worst, f in
                let p = Matrix.planePSNR(
                    ours, theirs, frameAt: (i * frames + f) * frameSize, width: output.width, height: output.height)
                return (min(worst.y, p.y), min(worst.u, p.u), min(worst.v, p.v))
            }
            let centre = notRed(ours, frameAt: i * frames * frameSize, width: output.width, height: output.height)
            return (worst.y, worst.u, worst.v, centre)
        }
    }
}
