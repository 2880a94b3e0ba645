import XCTest

@testable import VMergeCore

final class FilterGraphTests: XCTestCase {
    private let options = MergeOptions()
    private let scale320x240 = "scale=w=320:h=240:flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128:out_range=tv"
    private let fps30 = "fps=fps=30/1:round=near"

    private func filters(_ graph: String) -> [String] { graph.components(separatedBy: ",") }

    func testFpsFirstWhenDroppingFrames() {
        let crop = CropRect(x: 0, y: 0, width: 640, height: 480)
        let graph = FilterGraphs.video(crop: crop, orientation: .identity, inputRate: Rational(60, 1), options: options)
        XCTAssertEqual(
            graph,
            [
                fps30,
                scale320x240,
                "format=pix_fmts=yuv420p",
                "setsar=1",
            ].joined(separator: ","))
    }

    func testFpsLastWhenRepeatingFrames() {
        let crop = CropRect(x: 240, y: 0, width: 1440, height: 1080)
        let graph = FilterGraphs.video(crop: crop, orientation: .identity, inputRate: Rational(24, 1), options: options)
        XCTAssertEqual(
            graph,
            [
                scale320x240,
                "format=pix_fmts=yuv420p",
                "setsar=1",
                fps30,
            ].joined(separator: ","))
    }

    func testFpsLastWhenRatesAreEqualOrInputSlightlySlower() {
        let crop = CropRect(x: 0, y: 0, width: 640, height: 480)
        for rate in [Rational(30, 1), Rational(60, 2), Rational(30000, 1001), Rational(25, 1)] {
            let f = filters(FilterGraphs.video(crop: crop, orientation: .identity, inputRate: rate, options: options))
            XCTAssertEqual(f.last, fps30, "\(rate)")
            XCTAssertEqual(f.first, scale320x240, "\(rate)")
            XCTAssertEqual(f.filter { $0.hasPrefix("fps=") }.count, 1)
        }
    }

    func testUnknownInputRateTreatedAsDropping() {
        let crop = CropRect(x: 0, y: 0, width: 640, height: 480)
        for rate in [Rational(0, 0), Rational(0, 1), Rational(-1, 1)] {
            let f = filters(FilterGraphs.video(crop: crop, orientation: .identity, inputRate: rate, options: options))
            XCTAssertEqual(f.first, fps30, "\(rate)")
            XCTAssertEqual(f.last, "setsar=1", "\(rate)")
        }
    }

    func testNtscOutputRate() {
        var opts = options
        opts.frameRate = Rational(30000, 1001)
        let crop = CropRect(x: 0, y: 0, width: 640, height: 480)
        let f = filters(
            FilterGraphs.video(crop: crop, orientation: .identity, inputRate: Rational(30, 1), options: opts))
        XCTAssertEqual(f.first, "fps=fps=30000/1001:round=near")  // 30 > 29.97: drops
        let g = filters(
            FilterGraphs.video(crop: crop, orientation: .identity, inputRate: Rational(30000, 1001), options: opts))
        XCTAssertEqual(g.last, "fps=fps=30000/1001:round=near")
    }

    func testRotatedClipScalesBeforeTransposeWithSwappedSize() {
        let crop = CropRect(x: 554, y: 0, width: 810, height: 1080)
        let graph = FilterGraphs.video(crop: crop, orientation: .rotate90, inputRate: Rational(30, 1), options: options)
        XCTAssertEqual(
            graph,
            [
                "scale=w=240:h=320:flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128:out_range=tv",
                "format=pix_fmts=yuv420p",
                "transpose=clock",
                "setsar=1",
                fps30,
            ].joined(separator: ","))
    }

    func testEveryOrientation() {
        let crop = CropRect(x: 0, y: 0, width: 640, height: 480)
        for o in Orientation.allCases {
            let f = filters(
                FilterGraphs.video(crop: crop, orientation: o, inputRate: Rational(60, 1), options: options))
            let scale =
                o.swapsAxes
                ? "scale=w=240:h=320:flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128:out_range=tv" : scale320x240
            XCTAssertEqual(
                f,
                [fps30, scale, "format=pix_fmts=yuv420p"]
                    + o.filters + ["setsar=1"], "\(o)")
            // Orientation filters come after scaling and pixel format conversion.
            let scaleIndex = f.firstIndex(of: scale)!
            for filter in o.filters {
                XCTAssertGreaterThan(f.firstIndex(of: filter)!, scaleIndex, "\(o) \(filter)")
            }
        }
    }

    func testOutputSizeFollowsOptions() {
        var opts = options
        opts.width = 640
        opts.aspect = Rational(16, 9)
        let crop = CropRect(x: 0, y: 0, width: 1920, height: 1080)
        let graph = FilterGraphs.video(crop: crop, orientation: .identity, inputRate: Rational(30, 1), options: opts)
        XCTAssertTrue(
            graph.hasPrefix("scale=w=640:h=360:flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128:out_range=tv,"), graph)
        let rotated = FilterGraphs.video(
            crop: crop, orientation: .antitranspose, inputRate: Rational(30, 1), options: opts)
        XCTAssertTrue(rotated.hasPrefix("scale=w=360:h=640:"), rotated)
        XCTAssertTrue(rotated.contains(",transpose=clock_flip,setsar=1,"), rotated)
    }

    /// Frames cut by pointer on the chroma grid: the scaler is told their chroma is centred on
    /// the luma samples it covers (units of 1/256 luma sample), whatever the version's default.
    func testChromaPositionsAreCentred() {
        func positions(_ log2w: Int, _ log2h: Int) -> String {
            FilterGraphs.chromaPositions(ChromaSubsampling(log2Width: log2w, log2Height: log2h))
        }
        XCTAssertEqual(positions(1, 1), ":in_h_chr_pos=128:in_v_chr_pos=128")
        XCTAssertEqual(positions(1, 0), ":in_h_chr_pos=128")  // 4:2:2: rows are whole
        XCTAssertEqual(positions(2, 0), ":in_h_chr_pos=384")  // 4:1:1: 4 luma per chroma
        XCTAssertEqual(positions(0, 0), "")  // 4:4:4, RGB, grey
        let graph = FilterGraphs.video(
            crop: CropRect(x: 555, y: 0, width: 810, height: 1080), orientation: .rotate90,
            inputRate: Rational(30, 1), options: options, cropping: .framesCropped(.none))
        XCTAssertTrue(graph.hasPrefix("scale=w=240:h=320:flags=bicubic:out_range=tv,"), graph)
    }

    /// Off the chroma grid, frames are cut by pointer to the chroma samples that cover the window
    /// (every one, no other), given full chroma along the axis off the grid and cut to the
    /// window in a graph of their own; the clip's chain is told how they are sampled then.
    func testOffTheChromaGridTheWindowIsCutThrough444() {
        let window = CropRect(x: 555, y: 0, width: 810, height: 1080)
        XCTAssertEqual(window.onChromaGrid(.yuv420), CropRect(x: 554, y: 0, width: 812, height: 1080))
        XCTAssertEqual(
            CropRect(x: 7, y: 9, width: 20, height: 10).onChromaGrid(.yuv420),
            CropRect(x: 6, y: 8, width: 22, height: 12))
        XCTAssertEqual(
            CropRect(x: 7, y: 9, width: 20, height: 10).onChromaGrid(.yuv422),
            CropRect(x: 6, y: 9, width: 22, height: 10))
        XCTAssertEqual(
            CropRect(x: 9, y: 0, width: 810, height: 4).onChromaGrid(ChromaSubsampling(log2Width: 2, log2Height: 0)),
            CropRect(x: 8, y: 0, width: 812, height: 4))
        XCTAssertEqual(window.onChromaGrid(.none), window)
        // A last chroma sample that the picture's edge cuts short: the region ends with the picture.
        let yuv411 = ChromaSubsampling(log2Width: 2, log2Height: 0)
        XCTAssertEqual(
            CropRect(x: 1, y: 0, width: 320, height: 240).onChromaGrid(yuv411, pictureSize: (322, 240)),
            CropRect(x: 0, y: 0, width: 322, height: 240))
        XCTAssertEqual(
            CropRect(x: 1, y: 0, width: 320, height: 240).onChromaGrid(yuv411, pictureSize: (330, 240)),
            CropRect(x: 0, y: 0, width: 324, height: 240))
        XCTAssertTrue(FilterGraphs.isOffChromaGrid(window, .yuv420))
        XCTAssertTrue(FilterGraphs.isOffChromaGrid(CropRect(x: 0, y: 5, width: 2, height: 2), .yuv420))
        XCTAssertFalse(FilterGraphs.isOffChromaGrid(CropRect(x: 0, y: 5, width: 2, height: 2), .yuv422))
        XCTAssertFalse(FilterGraphs.isOffChromaGrid(window, .none))
        // Full chroma along the axis off the grid only, at the source's depth.
        XCTAssertEqual(
            FilterGraphs.offGridCut(crop: window, subsampling: .yuv420, bits: 8),
            "scale=flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128,format=pix_fmts=yuv440p,"
                + "crop=w=810:h=1080:x=1:y=0:exact=1")
        XCTAssertEqual(
            FilterGraphs.offGridCut(
                crop: CropRect(x: 0, y: 3, width: 640, height: 480), subsampling: .yuv420, bits: 10),
            "scale=flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128,format=pix_fmts=yuv422p10le,"
                + "crop=w=640:h=480:x=0:y=1:exact=1")
        XCTAssertEqual(
            FilterGraphs.offGridCut(
                crop: CropRect(x: 1, y: 3, width: 640, height: 480), subsampling: .yuv420, bits: 12),
            "scale=flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128,format=pix_fmts=yuv444p12le,"
                + "crop=w=640:h=480:x=1:y=1:exact=1")
        XCTAssertEqual(
            FilterGraphs.offGridCut(crop: window, subsampling: .yuv420, bits: 16),  // no 16-bit 4:4:0
            "scale=flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128,format=pix_fmts=yuv444p16le,"
                + "crop=w=810:h=1080:x=1:y=0:exact=1")
        XCTAssertEqual(
            FilterGraphs.offGridCut(crop: window, subsampling: .yuv422, bits: 10),
            "scale=flags=bicubic:in_h_chr_pos=128,format=pix_fmts=yuv444p10le,crop=w=810:h=1080:x=1:y=0:exact=1")
        // The clip's chain is told the chroma is sampled down only: 4:4:0.
        XCTAssertTrue(
            FilterGraphs.video(crop: window, orientation: .rotate90, inputRate: Rational(30, 1), options: options)
                .hasPrefix("scale=w=240:h=320:flags=bicubic:in_v_chr_pos=128:out_range=tv,"))
        // Packed 4:2:2, cut by the filters: the same way, after laying it out planar.
        XCTAssertEqual(
            Array(
                filters(
                    FilterGraphs.video(
                        crop: window, orientation: .identity, inputRate: Rational(30, 1), options: options,
                        cropping: .inGraph(afterConvertingTo: "yuv422p16le", subsampling: .yuv422))
                ).prefix(6)),
            [
                "format=pix_fmts=yuv422p16le", "crop=w=812:h=1080:x=554:y=0:exact=1",
                "scale=flags=bicubic:in_h_chr_pos=128", "format=pix_fmts=yuv444p16le",
                "crop=w=810:h=1080:x=1:y=0:exact=1", "scale=w=320:h=240:flags=bicubic:out_range=tv",
            ])
    }

    /// A window as big as the output: swscale would copy the planes unscaled and ignore the
    /// positions, so any window whose chroma is not 4:2:0 on the grid (4:2:2; 4:4:0 after a cut
    /// off the grid) is first resampled to 4:4:4.
    func testSameSizeWindowGoesThrough444UnlessOn420Grid() {
        let off = filters(
            FilterGraphs.video(
                crop: CropRect(x: 1, y: 0, width: 320, height: 240), orientation: .identity,
                inputRate: Rational(30, 1), options: options))
        XCTAssertEqual(
            Array(off.prefix(3)),
            [
                "scale=flags=bicubic:in_v_chr_pos=128", "format=pix_fmts=yuv444p16le",
                "scale=w=320:h=240:flags=bicubic:out_range=tv",
            ])
        let on = filters(
            FilterGraphs.video(
                crop: CropRect(x: 2, y: 0, width: 320, height: 240), orientation: .identity,
                inputRate: Rational(30, 1), options: options))
        XCTAssertEqual(on.first, scale320x240)
        let yuv422 = filters(
            FilterGraphs.video(
                crop: CropRect(x: 0, y: 1, width: 320, height: 240), orientation: .identity,
                inputRate: Rational(30, 1), options: options, cropping: .framesCropped(.yuv422)))
        XCTAssertEqual(
            Array(yuv422.prefix(2)), ["scale=flags=bicubic:in_h_chr_pos=128", "format=pix_fmts=yuv444p16le"])
    }

    /// Formats that cannot be cut by pointer, and the tests' reference: converted, then cropped.
    func testCropInTheGraphAfterConverting() {
        let f = filters(
            FilterGraphs.video(
                crop: CropRect(x: 555, y: 3, width: 810, height: 1080), orientation: .identity,
                inputRate: Rational(30, 1), options: options, cropping: .inGraph(afterConvertingTo: "gbrp16le")))
        XCTAssertEqual(
            Array(f.prefix(3)),
            [
                "format=pix_fmts=gbrp16le", "crop=w=810:h=1080:x=555:y=3:exact=1",
                "scale=w=320:h=240:flags=bicubic:out_range=tv",
            ])
    }

    /// boxblur refuses a radius of half a plane's smaller side on FFmpeg 9 (5.1 took it): every
    /// radius stays under half, down to the 4-pixel-high box whose 2-sample chroma gets none.
    func testBlurRadiusStaysUnderHalfOfEveryPlane() throws {
        for (box, luma, chroma) in [
            ((320, 240), 15, 7), ((16, 4), 1, 0), ((16, 6), 1, 1), ((4, 4), 1, 0), ((640, 480), 30, 15),
        ] {
            let graph = FilterGraphs.frame((box.0 - 2, box.1), in: box, blurred: true)
            let blur = try XCTUnwrap(filters(graph).first { $0.hasPrefix("boxblur=") }.map { String($0) }, graph)
            XCTAssertEqual(
                blur, "boxblur=luma_radius=\(luma):luma_power=3:chroma_radius=\(chroma):chroma_power=3", "\(box)")
            let side = min(box.0, box.1)
            XCTAssertLessThan(2 * luma, side)
            XCTAssertLessThan(2 * chroma, side / 2)
        }
    }

    func testAudio() {
        XCTAssertEqual(
            FilterGraphs.audio(options: options),
            "aresample=44100,aformat=sample_fmts=fltp:sample_rates=44100:channel_layouts=stereo")
        var opts = options
        opts.sampleRate = 48000
        opts.channels = 1
        XCTAssertEqual(
            FilterGraphs.audio(options: opts),
            "aresample=48000,aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=mono")
    }

    func testChannelLayoutNames() {
        XCTAssertEqual(FilterGraphs.channelLayoutName(1), "mono")
        XCTAssertEqual(FilterGraphs.channelLayoutName(2), "stereo")
        XCTAssertEqual(FilterGraphs.channelLayoutName(6), "6c")
    }
}
