import XCTest

@testable import VMergeCore

final class FilterGraphTests: XCTestCase {
    private let options = MergeOptions()
    private let scale320x240 = "scale=w=320:h=240:flags=bicubic:out_range=tv"
    private let fps30 = "fps=fps=30/1:round=near"

    private func filters(_ graph: String) -> [String] { graph.components(separatedBy: ",") }

    func testFpsFirstWhenDroppingFrames() {
        let crop = CropRect(x: 0, y: 0, width: 640, height: 480)
        let graph = FilterGraphs.video(crop: crop, orientation: .identity, inputRate: Rational(60, 1), options: options)
        XCTAssertEqual(
            graph,
            [
                fps30,
                "crop=w=640:h=480:x=0:y=0:exact=1",
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
                "crop=w=1440:h=1080:x=240:y=0:exact=1",
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
            XCTAssertEqual(f.first, "crop=w=640:h=480:x=0:y=0:exact=1", "\(rate)")
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
                "crop=w=810:h=1080:x=554:y=0:exact=1",
                "scale=w=240:h=320:flags=bicubic:out_range=tv",
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
                ? "scale=w=240:h=320:flags=bicubic:out_range=tv" : scale320x240
            XCTAssertEqual(
                f,
                [fps30, "crop=w=640:h=480:x=0:y=0:exact=1", scale, "format=pix_fmts=yuv420p"]
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
        XCTAssertTrue(graph.contains(",scale=w=640:h=360:flags=bicubic:out_range=tv,"), graph)
        let rotated = FilterGraphs.video(
            crop: crop, orientation: .antitranspose, inputRate: Rational(30, 1), options: opts)
        XCTAssertTrue(rotated.contains(",scale=w=360:h=640:"), rotated)
        XCTAssertTrue(rotated.contains(",transpose=clock_flip,setsar=1,"), rotated)
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
