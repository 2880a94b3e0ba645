import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// Every clip renders right: each pixel format phones and cameras write, cropped at even and odd
/// offsets across and down (and a window as big as the output), in each quarter turn and mirror,
/// compared on decoded pixels, chroma to the last sample at every edge, with a reference made
/// from the window alone (`windowAlone`): the decoded source cut by the crop filter on the chroma
/// grid to the chroma samples that cover the window, given a chroma sample for every pixel,
/// cut to the window exactly, turned upright by this file's own table, and given the same
/// scaling and colour work. vmerge writes losslessly here (--crf 0), so what differs is the
/// picture path alone.
///
/// The pattern: testsrc2 (colour patches, sharp edges) over the upright window, with a red,
/// green, blue and white marker in its four corners and yellow outside it, so wrong chroma, a
/// shifted window, a column from outside and a wrong turn all cost decibels; the markers are
/// also checked by colour, which no table in this file can get wrong in step with vmerge.
/// Renditions of every preset, in every format and turn, at their real sizes:
/// PresetPictureGeneratorTests, with this file's formats, turns and reference.
final class PicturePathMatrixTests: XCTestCase {
    struct PixelFormat {
        var name: String
        var pixFmt: String
        var encoder: [String]
        var colour: [String]
        /// How its chroma is subsampled, in the coded picture.
        var subsampling = ChromaSubsampling.yuv420
        /// The planar format with the same sampling that the reference cuts packed samples in.
        var planar: String?
    }

    static let formats: [PixelFormat] = {
        let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-qp", "4"]
        let x265 = [
            "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:qp=4", "-tag:v", "hvc1",
        ]
        let bt709 = ["-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", "-color_range", "tv"]
        let bt2020 = ["-color_primaries", "bt2020", "-colorspace", "bt2020nc", "-color_range", "tv"]
        return [
            PixelFormat(name: "8-bit 4:2:0", pixFmt: "yuv420p", encoder: x264, colour: bt709),
            PixelFormat(
                name: "8-bit 4:2:0 full range BT.601", pixFmt: "yuvj420p", encoder: x264,
                colour: [
                    "-color_primaries", "smpte170m", "-color_trc", "smpte170m", "-colorspace", "smpte170m",
                    "-color_range", "pc",
                ]),
            PixelFormat(name: "10-bit 4:2:0 SDR", pixFmt: "yuv420p10le", encoder: x265, colour: bt709),
            PixelFormat(
                name: "10-bit 4:2:0 HLG", pixFmt: "yuv420p10le", encoder: x265,
                colour: bt2020 + ["-color_trc", "arib-std-b67"]),
            PixelFormat(
                name: "10-bit 4:2:0 PQ", pixFmt: "yuv420p10le", encoder: x265,
                colour: bt2020 + ["-color_trc", "smpte2084"]),
            PixelFormat(name: "12-bit 4:2:0", pixFmt: "yuv420p12le", encoder: x265, colour: bt709),
            PixelFormat(name: "8-bit 4:2:2", pixFmt: "yuv422p", encoder: x264, colour: bt709, subsampling: .yuv422),
            PixelFormat(
                name: "10-bit 4:2:2 ProRes", pixFmt: "yuv422p10le",
                encoder: ["-c:v", "prores_ks", "-profile:v", "3"], colour: bt709, subsampling: .yuv422),
            PixelFormat(name: "8-bit 4:4:4", pixFmt: "yuv444p", encoder: x264, colour: bt709, subsampling: .none),
            // Packed 4:2:2 (capture cards, 2vuy): an odd offset splits its pixel pairs.
            PixelFormat(
                name: "8-bit 4:2:2 packed UYVY", pixFmt: "uyvy422", encoder: ["-c:v", "rawvideo"], colour: bt709,
                subsampling: .yuv422, planar: "yuv422p"),
            PixelFormat(
                name: "10-bit 4:4:4 with alpha ProRes", pixFmt: "yuva444p10le",
                encoder: ["-c:v", "prores_ks", "-profile:v", "4"], colour: bt709, subsampling: .none),
        ]
    }()

    /// A display matrix (patch_matrix.py's name), the filters that make the coded picture from
    /// the upright one, and those that turn the coded picture upright for the reference.
    struct Turn {
        var matrix: String
        var toCoded: String
        var upright: String
    }

    static let turns = [
        Turn(matrix: "none", toCoded: "null", upright: "null"),
        Turn(matrix: "rot90", toCoded: "transpose=cclock", upright: "transpose=clock"),
        Turn(matrix: "rot180", toCoded: "hflip,vflip", upright: "hflip,vflip"),
        Turn(matrix: "rot270", toCoded: "transpose=clock", upright: "transpose=cclock"),
        Turn(matrix: "hflip", toCoded: "hflip", upright: "hflip"),
        Turn(matrix: "transpose", toCoded: "transpose=cclock_flip", upright: "transpose=cclock_flip"),
    ]

    /// Upright sizes whose 4:3 window starts at an odd or even column or row: 5 and 6 pixels in,
    /// across (170, 172 wide) or down (130, 132 high); a turned clip has them in the other axis
    /// of its coded picture. The window (160x120) is scaled up to 320x240, so a one-pixel shift
    /// of the source is two of the output.
    static let shapes = [(170, 120), (172, 120), (160, 130), (160, 132)]
    /// Windows as big as the output (320x240), one pixel in: scaled 1:1.
    static let sameSizeShapes = [(322, 240), (320, 242)]

    struct Cell {
        var width: Int, height: Int
        var turn: Turn
        var window: CropRect {
            let w = min(width, height * 4 / 3), h = min(height, width * 3 / 4)
            return CropRect(x: (width - w) / 2, y: (height - h) / 2, width: w, height: h)
        }
        /// The window in the coded picture, where vmerge crops it: a turn that swaps the axes
        /// swaps its offsets and sides (it is centred, so a flip leaves it in place).
        var codedWindow: CropRect { coded(window) }
        func coded(_ w: CropRect) -> CropRect {
            guard turn.upright.hasPrefix("transpose") else { return w }
            return CropRect(x: w.y, y: w.x, width: w.height, height: w.width)
        }
        var codedOffset: String { codedWindow.x > 0 ? "x=\(codedWindow.x)" : "y=\(codedWindow.y)" }
        var label: String { "\(width)x\(height) \(turn.matrix) (coded \(codedOffset))" }
    }

    static let cells: [Cell] =
        shapes.flatMap { shape in turns.map { Cell(width: shape.0, height: shape.1, turn: $0) } }
        + sameSizeShapes.map { Cell(width: $0.0, height: $0.1, turn: turns[0]) }

    static let frames = 3
    /// Measured on correct cells (FFmpeg 5.1), edges included: luma 46.3-99 dB (HDR lowest: its
    /// luma is remade from tone-mapped RGB, so chroma differences show in it), chroma 48.3-99.
    /// Chroma taken from beyond the window's edge gave 26.8-33 dB on cells off the chroma grid
    /// (the last pixel's own sample left out) and 35.7 dB on packed 4:2:2 (converted to 4:4:4
    /// whole before the crop); FFmpeg's crop filter gave 4-8 dB chroma (12 dB luma in HLG) on
    /// the 10-bit odd cells, a chroma position half a sample off 24-31 dB, and a window one
    /// source pixel off or a yellow column from outside fall well below too.
    static let minimumLumaPSNR = 42.0
    static let minimumChromaPSNR = 45.0

    func testEveryPixelFormatOffsetAndTurnMatchesTheReference() throws {
        let dir = try makeScratchDirectory()
        nonisolated(unsafe) var results: [(format: String, cell: String, psnr: (y: Double, u: Double, v: Double))] = []
        nonisolated(unsafe) var failures: [String] = []
        let lock = NSLock()
        // Two formats at a time: each is a few processes that run one after the other.
        let only = ProcessInfo.processInfo.environment["VMERGE_MATRIX_FORMATS"].map {
            $0.split(separator: ",").compactMap { Int($0) }
        }
        let chosen = only ?? Array(Self.formats.indices)
        DispatchQueue.concurrentPerform(iterations: chosen.count) { n in
            let index = chosen[n]
            let format = Self.formats[index]
            do {
                let measured = try Self.measure(
                    format, in: dir.appendingPathComponent("f\(index)"))
                lock.withLock {
                    for (cell, psnr, problem) in measured {
                        results.append((format.name, cell, psnr))
                        if let problem { failures.append("\(format.name), \(cell): \(problem)") }
                    }
                }
            } catch {
                lock.withLock { failures.append("\(format.name): \(error)") }
            }
        }
        // The table, for the issue notes and for whoever reads a failure.
        let table = results.sorted { ($0.format, $0.cell) < ($1.format, $1.cell) }.map {
            "\($0.format) | \($0.cell) | \(String(format: "%.1f %.1f %.1f", $0.psnr.y, $0.psnr.u, $0.psnr.v))"
        }
        print("picture path matrix (PSNR Y U V against the reference, dB):\n" + table.joined(separator: "\n"))
        XCTAssertEqual(results.count, chosen.count * Self.cells.count)
        XCTAssertTrue(failures.isEmpty, failures.joined(separator: "\n"))
    }

    /// A bit-packed format (1-bit PNG: monob) cannot be cut by pointer: the filters crop it after
    /// converting to 16-bit grey, at the odd offset exactly, the same as the reference does.
    func testABitPackedFormatIsCroppedByTheFilters() throws {
        let dir = try makeScratchDirectory()
        try runFFmpeg(
            [
                "-f", "lavfi", "-i", "testsrc2=s=160x120:r=30:d=0.1", "-vf",
                "pad=w=170:h=120:x=5:y=0:color=white,format=monob", "-c:v", "png", "-f", "mov", "mono.mov",
            ], in: dir)
        let (clip, _) = try Probe.clip(at: dir.appendingPathComponent("mono.mov").path)
        XCTAssertEqual(clip.video.pixelFormat, "monob")
        XCTAssertEqual(clip.video.cropping, .inGraph(afterConvertingTo: "gray16le"))
        let merge = try VMergeBinary.run(
            ["--min-duration", "0", "--crf", "0", "-q", "mono.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(merge.status, 0, merge.stderr)
        var options = MergeOptions()
        options.crf = 0
        let chain = FilterGraphs.video(
            crop: CropRect(x: 5, y: 0, width: 160, height: 120), orientation: .identity, inputRate: Rational(30, 1),
            options: options, cropping: .inGraph(afterConvertingTo: "gray16le"))
        try runFFmpeg(["-i", "mono.mov", "-vf", chain, "-f", "rawvideo", "-pix_fmt", "yuv420p", "ref.yuv"], in: dir)
        try runFFmpeg(["-i", "out.mp4", "-f", "rawvideo", "-pix_fmt", "yuv420p", "out.yuv"], in: dir)
        let ours = [UInt8](try Data(contentsOf: dir.appendingPathComponent("out.yuv")))
        let reference = [UInt8](try Data(contentsOf: dir.appendingPathComponent("ref.yuv")))
        XCTAssertEqual(ours.count, 3 * 320 * 240 * 3 / 2)
        XCTAssertEqual(reference.count, ours.count)
        for f in 0..<3 where ours.count == reference.count {
            let p = Self.planePSNR(ours, reference, frameAt: f * 320 * 240 * 3 / 2)
            XCTAssertGreaterThan(min(p.y, p.u, p.v), 50, "frame \(f): \(p)")
        }
    }

    /// Makes every cell's clip in `format`, merges them in one run and compares each clip's
    /// frames with its reference.
    private static func measure(
        _ format: PixelFormat, in dir: URL
    ) throws -> [(String, (Double, Double, Double), String?)] {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let cells = Self.cells
        // The clips: one ffmpeg run writes them all.
        var arguments: [String] = []
        for cell in cells {
            let w = cell.window
            arguments += ["-f", "lavfi", "-i", "testsrc2=s=\(w.width)x\(w.height):r=30:d=\(Double(Self.frames) / 30)"]
        }
        var graph: [String] = []
        for (i, cell) in cells.enumerated() {
            let w = cell.window, m = w.height / 5
            let markers = [
                ("red", 0, 0), ("lime", w.width - m, 0), ("blue", w.width - m, w.height - m),
                ("white", 0, w.height - m),
            ]
            .map { "drawbox=x=\($0.1):y=\($0.2):w=\(m):h=\(m):color=\($0.0):t=fill" }
            graph.append(
                "[\(i):v]format=gbrp," + markers.joined(separator: ",")
                    + ",pad=w=\(cell.width):h=\(cell.height):x=\(w.x):y=\(w.y):color=yellow,\(cell.turn.toCoded)"
                    + ",format=\(format.pixFmt)[v\(i)]")
        }
        try Self.encodeAndMerge(
            inputs: arguments, graph: graph, encoding: format.encoder + format.colour,
            matrices: cells.map(\.turn.matrix), in: dir)
        return try compare(format, cells, in: dir)
    }

    /// out.mp4's frames against the references: each cell's 4:3 window alone, through the picture
    /// path's chain.
    private static func compare(
        _ format: PixelFormat, _ cells: [Cell], in dir: URL
    ) throws -> [(String, (Double, Double, Double), String?)] {
        let (raw, size) = ("out.yuv", (width: 320, height: 240))
        try runFFmpeg(["-i", "out.mp4", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw], in: dir)
        // The references, from the same decoded samples.
        var options = MergeOptions()
        options.crf = 0
        options.width = size.width
        options.aspect = Rational(size.width, size.height)
        var refArguments: [String] = []
        var refGraph: [String] = []
        for (i, cell) in cells.enumerated() {
            refArguments += ["-noautorotate", "-i", "c\(i).mov"]
            let (clip, _) = try Probe.clip(at: dir.appendingPathComponent("c\(i).mov").path)
            let colour = ColourConversion.plan(
                for: clip.video.colour, width: clip.video.width, height: clip.video.height, tonemap: options.tonemap,
                canToneMap: true)
            let window = CropRect(x: 0, y: 0, width: cell.window.width, height: cell.window.height)
            let chain = FilterGraphs.video(
                crop: window, orientation: .identity, inputRate: Rational(30, 1), colour: colour, options: options,
                cropping: .inGraph(afterConvertingTo: "yuv444p16le"))
            refGraph.append("[\(i):v]\(windowAlone(format, cell)),\(chain)[r\(i)]")
        }
        let reference = "ref-" + raw
        refGraph.append(cells.indices.map { "[r\($0)]" }.joined() + "concat=n=\(cells.count):v=1:a=0[out]")
        refArguments += [
            "-filter_complex", refGraph.joined(separator: ";"), "-map", "[out]", "-f", "rawvideo",
            "-pix_fmt", "yuv420p", reference,
        ]
        try runFFmpeg(refArguments, in: dir)

        let ours = [UInt8](try Data(contentsOf: dir.appendingPathComponent(raw)))
        let theirs = [UInt8](try Data(contentsOf: dir.appendingPathComponent(reference)))
        let frameSize = size.width * size.height * 3 / 2
        let expected = cells.count * Self.frames * frameSize
        guard theirs.count == expected, ours.count == expected else {
            throw MatrixError.failed(
                "out.mp4: \(ours.count / frameSize) frames out of vmerge, \(theirs.count / frameSize) of the "
                    + "reference; \(cells.count * Self.frames) expected")
        }
        return cells.enumerated().map { i, cell in
            var worst = (y: Double.infinity, u: Double.infinity, v: Double.infinity)
            for f in 0..<Self.frames {
                let start = (i * Self.frames + f) * frameSize
                let p = planePSNR(ours, theirs, frameAt: start, width: size.width, height: size.height)
                worst = (min(worst.y, p.y), min(worst.u, p.u), min(worst.v, p.v))
            }
            var problems: [String] = []
            if worst.y < Self.minimumLumaPSNR || min(worst.u, worst.v) < Self.minimumChromaPSNR {
                problems.append(String(format: "PSNR Y %.1f U %.1f V %.1f dB", worst.y, worst.u, worst.v))
            }
            // The markers sit in the 4:3 window's corners.
            if let wrong = wrongMarkers(ours, frameAt: i * Self.frames * frameSize) {
                problems.append(wrong)
            }
            return (cell.label, worst, problems.isEmpty ? nil : problems.joined(separator: "; "))
        }
    }

    /// The reference's first steps, which make the window a picture of its own before anything
    /// resamples it: the coded picture is cut (planar, on the chroma grid: exact) to the chroma
    /// samples that cover the window and nothing beyond, given a chroma sample for every pixel
    /// (the scaler's centred siting; the samples at its edges are the window's own), cut to the
    /// window exactly and turned upright. No sample from outside the window reaches the
    /// reference's chroma; off the chroma grid, the edge sample is half outside in the source.
    static func windowAlone(_ format: PixelFormat, _ cell: Cell, coded: CropRect? = nil) -> String {
        let w = coded ?? cell.codedWindow, s = format.subsampling
        func grid(_ start: Int, _ length: Int, _ log2: Int) -> (start: Int, length: Int) {
            let mask = (1 << log2) - 1
            let first = start & ~mask, end = (start + length + mask) & ~mask
            return (first, end - first)
        }
        let across = grid(w.x, w.width, s.log2Width), down = grid(w.y, w.height, s.log2Height)
        // Centred chroma, said outright (newer scalers may follow the frame's chroma location).
        let siting = (s.log2Width > 0 ? ":in_h_chr_pos=128" : "") + (s.log2Height > 0 ? ":in_v_chr_pos=128" : "")
        return (format.planar.map { "format=pix_fmts=\($0)," } ?? "")
            + "crop=w=\(across.length):h=\(down.length):x=\(across.start):y=\(down.start):exact=1,"
            + "scale=flags=bicubic\(siting),format=pix_fmts=yuv444p16le,"
            + "crop=w=\(w.width):h=\(w.height):x=\(w.x - across.start):y=\(w.y - down.start):exact=1,"
            + cell.turn.upright
    }

    /// Encodes each `[v<i>]` of `graph` (over `inputs`, ffmpeg's) as c<i>.mov with `encoding`,
    /// patches each one's display matrix in (`matrices[i]`, "none" for none), then merges them all
    /// with vmerge losslessly into out.mp4.
    static func encodeAndMerge(
        inputs: [String], graph: [String], encoding: [String], matrices: [String], renditions: [String] = [],
        in dir: URL
    ) throws {
        var arguments = inputs + ["-filter_complex", graph.joined(separator: ";")]
        for i in matrices.indices {
            arguments += ["-map", "[v\(i)]"] + encoding + ["-an", "c\(i).mov"]
        }
        try runFFmpeg(arguments, in: dir)
        for (i, matrix) in matrices.enumerated() where matrix != "none" {
            let run = try runProgram(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["python3", Fixtures.directory.appendingPathComponent("patch_matrix.py").path, "c\(i).mov", matrix],
                in: dir)
            guard run.status == 0 else { throw MatrixError.failed("patch_matrix.py: \(run.stderr)") }
        }
        let merge = try VMergeBinary.run(
            ["--min-duration", "0", "--crf", "0", "-q", "-y"] + matrices.indices.map { "c\($0).mov" } + [
                "-o", "out.mp4",
            ]
                + renditions.flatMap { ["--rendition", $0] },
            in: dir)
        guard merge.status == 0 else { throw MatrixError.failed("vmerge: \(merge.stderr)") }
    }

    /// PSNR of each plane of one 320x240 yuv420p frame, over the whole picture: a column from
    /// outside the window, a shift or chroma taken from beyond the window's edge shows there.
    static func planePSNR(
        _ a: [UInt8], _ b: [UInt8], frameAt start: Int, width: Int = 320, height: Int = 240
    ) -> (y: Double, u: Double, v: Double) {
        func psnr(offset: Int, width: Int, height: Int) -> Double {
            var sum = 0.0, count = 0
            for y in 0..<height {
                for x in 0..<width {
                    let i = start + offset + y * width + x
                    let d = Double(a[i]) - Double(b[i])
                    sum += d * d
                    count += 1
                }
            }
            let mse = sum / Double(count)
            return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
        }
        let luma = width * height
        return (
            psnr(offset: 0, width: width, height: height),
            psnr(offset: luma, width: width / 2, height: height / 2),
            psnr(offset: luma + luma / 4, width: width / 2, height: height / 2)
        )
    }

    /// The corner markers (48x48 on the output) by colour, at their centres: red top left,
    /// green top right, blue bottom right, white bottom left. Nil when all are where they belong.
    private static func wrongMarkers(_ frames: [UInt8], frameAt start: Int) -> String? {
        func rgb(_ x: Int, _ y: Int) -> (r: Double, g: Double, b: Double) {
            let luma = 320 * 240
            let yy = (Double(frames[start + y * 320 + x]) - 16) * 255 / 219
            let u = Double(frames[start + luma + (y / 2) * 160 + x / 2]) - 128
            let v = Double(frames[start + luma + luma / 4 + (y / 2) * 160 + x / 2]) - 128
            // BT.709 limited range to R'G'B'.
            return (
                yy + 1.5748 * v * 255 / 224, yy - (0.1873 * u + 0.4681 * v) * 255 / 224, yy + 1.8556 * u * 255 / 224
            )
        }
        let expected: [(String, Int, Int, (Double, Double, Double) -> Bool)] = [
            ("red", 24, 24, { r, g, b in r > g + 60 && r > b + 60 }),
            ("green", 296, 24, { r, g, b in g > r + 60 && g > b + 60 }),
            ("blue", 296, 216, { r, g, b in b > r + 60 && b > g + 60 }),
            ("white", 24, 216, { r, g, b in min(r, g, b) > 150 && max(r, g, b) - min(r, g, b) < 60 }),
        ]
        let wrong = expected.compactMap { name, x, y, test -> String? in
            let c = rgb(x, y)
            return test(c.r, c.g, c.b) ? nil : String(format: "\(name) corner is (%.0f, %.0f, %.0f)", c.r, c.g, c.b)
        }
        return wrong.isEmpty ? nil : wrong.joined(separator: ", ")
    }

    enum MatrixError: Error, CustomStringConvertible {
        case failed(String)
        var description: String {
            switch self {
            case let .failed(message): return message
            }
        }
    }
}
