import Foundation
import TestSupport
import VMergeCore
import XCTest

/// Nothing outside the crop window reaches the output's colour: grey pictures whose chroma is
/// strongly coloured (blue before the window, red after it) wherever a chroma sample covers no
/// pixel of the window, made straight in each pixel format (no conversion spreads the colour
/// inward) and stored losslessly, come out grey to the last chroma sample at every edge, in each
/// quarter turn and mirror. Off the chroma grid of a subsampled format the sample shared by the
/// window's edge pixel and the one outside it is the window's too, and grey.
///
/// This needs no reference: an output chroma sample that is not grey took colour from outside.
final class CropEdgeChromaTests: XCTestCase {
    struct Format {
        var name: String
        /// The planar format the picture is drawn in, and the one it is stored in when they differ.
        var drawn: String, stored: String
        var bits: Int
        var encoder: [String]
        var colour = ["-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", "-color_range", "tv"]
    }

    static let formats: [Format] = {
        let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-qp", "0"]
        return [
            Format(name: "8-bit 4:2:0", drawn: "yuv420p", stored: "yuv420p", bits: 8, encoder: x264),
            Format(
                name: "10-bit 4:2:0", drawn: "yuv420p10le", stored: "yuv420p10le", bits: 10,
                encoder: [
                    "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:lossless=1",
                    "-tag:v", "hvc1",
                ]),
            // Through the 4:4:4 matrix conversion.
            Format(
                name: "8-bit 4:2:0 full range BT.601", drawn: "yuvj420p", stored: "yuvj420p", bits: 8, encoder: x264,
                colour: [
                    "-color_primaries", "smpte170m", "-color_trc", "smpte170m", "-colorspace", "smpte170m",
                    "-color_range", "pc",
                ]),
            Format(name: "8-bit 4:4:4", drawn: "yuv444p", stored: "yuv444p", bits: 8, encoder: x264),
            // Cut by the filters, not by pointer.
            Format(
                name: "8-bit 4:2:2 packed UYVY", drawn: "yuv422p", stored: "uyvy422", bits: 8,
                encoder: ["-c:v", "rawvideo"]),
        ]
            // The other samplings and depths, stored losslessly by FFV1 (RGB drawn in 4:4:4 and
            // converted pixel by pixel, which spreads no colour).
            + [
                ("10-bit 4:4:4", "yuv444p10le", "yuv444p10le", 10), ("12-bit 4:4:4", "yuv444p12le", "yuv444p12le", 12),
                ("10-bit 4:4:4 with alpha", "yuva444p10le", "yuva444p10le", 10),
                ("8-bit RGB", "yuv444p", "gbrp", 8), ("10-bit RGB", "yuv444p10le", "gbrp10le", 10),
                ("8-bit 4:2:2", "yuv422p", "yuv422p", 8), ("10-bit 4:2:2", "yuv422p10le", "yuv422p10le", 10),
                ("8-bit 4:4:0", "yuv440p", "yuv440p", 8), ("8-bit 4:1:1", "yuv411p", "yuv411p", 8),
            ].map { Format(name: $0.0, drawn: $0.1, stored: $0.2, bits: $0.3, encoder: ["-c:v", "ffv1"]) }
            // Packed RGB, cut by pointer a whole pixel at a time.
            + [Format(name: "8-bit packed RGB", drawn: "yuv444p", stored: "rgb24", bits: 8, encoder: ["-c:v", "png"])]
    }()

    /// Upright sizes whose window starts on and off the chroma grid, across and down, in each
    /// turn; and windows as big as the output (scaled 1:1), upright.
    static let cells: [PicturePathMatrixTests.Cell] =
        [(172, 120), (170, 120), (160, 132), (160, 130)].flatMap { size in
            PicturePathMatrixTests.turns.map { PicturePathMatrixTests.Cell(width: size.0, height: size.1, turn: $0) }
        }
        + [(324, 240), (322, 240), (320, 242)].map {
            PicturePathMatrixTests.Cell(width: $0.0, height: $0.1, turn: PicturePathMatrixTests.turns[0])
        }

    static let frames = 3
    /// Codes an output chroma sample may differ from grey by (a 10-bit source is dithered to 8).
    static let tolerance = 2

    func testNoColourFromOutsideTheWindowReachesTheEdges() throws {
        let dir = try makeScratchDirectory()
        nonisolated(unsafe) var failures: [String] = []
        nonisolated(unsafe) var worst: [String] = []
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: Self.formats.count) { index in
            let format = Self.formats[index]
            do {
                let measured = try Self.measure(format, in: dir.appendingPathComponent("f\(index)"))
                lock.withLock {
                    for (cell, deviation, place) in measured where deviation > Self.tolerance {
                        failures.append(
                            "\(format.name), \(cell.label): chroma \(deviation) codes from grey at \(place)")
                    }
                    let largest = measured.map(\.1).max() ?? 0
                    worst.append("\(format.name): at most \(largest) codes from grey")
                }
            } catch {
                lock.withLock { failures.append("\(format.name): \(error)") }
            }
        }
        print("crop edge chroma:\n" + worst.sorted().joined(separator: "\n"))
        XCTAssertEqual(worst.count, Self.formats.count)
        XCTAssertTrue(failures.isEmpty, failures.sorted().joined(separator: "\n"))
    }

    /// The geq expression for one chroma plane of `cell`'s coded picture: `before` where a
    /// sample lies wholly left of or above the window, `after` wholly right of or below, grey
    /// (`grey`) elsewhere. A sample X of a plane SW times as wide as the picture covers luma
    /// columns X/SW to (X+1)/SW.
    static func chroma(_ cell: PicturePathMatrixTests.Cell, before: Int, after: Int, grey: Int) -> String {
        let w = cell.codedWindow
        let isBefore = "lte((X+1)/SW\\,\(w.x))+lte((Y+1)/SH\\,\(w.y))"
        let isAfter = "gte(X/SW\\,\(w.x + w.width))+gte(Y/SH\\,\(w.y + w.height))"
        return "if(\(isBefore)\\,\(before)\\,if(\(isAfter)\\,\(after)\\,\(grey)))"
    }

    /// Makes every cell's clip in `format`, merges them losslessly in one run and returns, for
    /// each, the largest distance of an output chroma sample from grey and where it is.
    private static func measure(_ format: Format, in dir: URL) throws -> [(PicturePathMatrixTests.Cell, Int, String)] {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let scale = 1 << (format.bits - 8)
        let (grey, blue, red) = (128 * scale, (cb: 240 * scale, cr: 118 * scale), (cb: 102 * scale, cr: 240 * scale))
        var arguments: [String] = []
        for cell in cells {
            let coded = cell.turn.upright.hasPrefix("transpose") ? (cell.height, cell.width) : (cell.width, cell.height)
            arguments += ["-f", "lavfi", "-i", "color=c=gray:s=\(coded.0)x\(coded.1):r=30:d=\(Double(frames) / 30)"]
        }
        var graph: [String] = []
        for (i, cell) in cells.enumerated() {
            let cb = chroma(cell, before: blue.cb, after: red.cb, grey: grey)
            let cr = chroma(cell, before: blue.cr, after: red.cr, grey: grey)
            graph.append(
                "[\(i):v]format=\(format.drawn),geq=lum=\(grey):cb='\(cb)':cr='\(cr)',format=\(format.stored)[v\(i)]")
        }
        try PicturePathMatrixTests.encodeAndMerge(
            inputs: arguments, graph: graph, encoding: format.encoder + format.colour,
            matrices: cells.map(\.turn.matrix), in: dir)
        try runFFmpeg(["-i", "out.mp4", "-f", "rawvideo", "-pix_fmt", "yuv420p", "out.yuv"], in: dir)
        let out = [UInt8](try Data(contentsOf: dir.appendingPathComponent("out.yuv")))
        let luma = 320 * 240, frameSize = luma * 3 / 2
        guard out.count == cells.count * frames * frameSize else {
            throw PicturePathMatrixTests.MatrixError.failed(
                "\(out.count / frameSize) frames out of vmerge; \(cells.count * frames) expected")
        }
        return cells.enumerated().map { i, cell in
            var largest = (0, "nowhere")
            for f in 0..<frames {
                let start = (i * frames + f) * frameSize + luma
                for (plane, offset) in [("U", 0), ("V", luma / 4)] {
                    for y in 0..<120 {
                        for x in 0..<160 {
                            let d = abs(Int(out[start + offset + y * 160 + x]) - 128)
                            if d > largest.0 { largest = (d, "\(plane) (\(x), \(y)) of 160x120, frame \(f)") }
                        }
                    }
                }
            }
            return (cell, largest.0, largest.1)
        }
    }
}
