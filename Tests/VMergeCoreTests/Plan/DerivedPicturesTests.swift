import XCTest

@testable import VMergeCore

/// Which pictures of a clip are scaled from another's finished frames (`DerivedPictures`): only
/// those showing the same window as a larger picture that is itself scaled down, one step from
/// the largest, never a padded or blurred one.
final class DerivedPicturesTests: XCTestCase {
    /// The plan's `scaledFrom` for one clip of `width`x`height` and the job's own 320x240 beside
    /// `renditions`.
    private func sources(
        _ renditions: [String], width: Int = 1920, height: Int = 1080, orientation: Orientation = .identity,
        fit: Fit = .crop
    ) throws -> [Int?] {
        var options = MergeOptions()
        options.fit = fit
        options.renditions = try renditions.map { try Rendition.parse($0).get() }
        let plan = MergePlan(
            probes: [
                .clip(makeClip("a.mov", micros: 2_000_000, width: width, height: height, orientation: orientation))
            ],
            options: options)
        return try XCTUnwrap(plan.clips.first).scaledFrom
    }

    func testASmallerPictureOfTheSameWindowIsScaledFromTheLargest() throws {
        XCTAssertEqual(try sources(["4x3-480"]), [1, nil])
        XCTAssertEqual(
            try sources(["4x3-480", "1280x960"], width: 3840, height: 2160), [2, 2, nil],
            "one step from the largest, not a chain")
        XCTAssertEqual(try sources(["4x3-480"], orientation: .rotate90), [1, nil], "the window is the same turned")
        XCTAssertEqual(try sources(["4x3-480"], width: 1080, height: 1920, orientation: .mirrorVertical), [1, nil])
        // Equal sizes (a rendition differing only in crf or preset): the first is made, the second copies it.
        XCTAssertEqual(try sources(["320x240:crf=18", "320x240:preset=slow"]), [nil, 0, 0])
    }

    /// Both steps shrink at least 1.5x on both axes, else the second filtering shows.
    func testEachStepShrinksAtLeastOneAndAHalfTimes() throws {
        // The largest 1280x960 from a 1440x1080 window: 1.125x.
        XCTAssertEqual(try sources(["4x3-480", "1280x960"]), [nil, nil, nil])
        // 960x720 from 1440x1080: 1.5x exactly; 640x480 from it 1.5x, 320x240 3x.
        XCTAssertEqual(try sources(["4x3-480", "960x720"]), [2, 2, nil])
        XCTAssertEqual(try sources(["4x3-480"], width: 1280, height: 720), [1, nil], "640x480 from 960x720: 1.5x")
        XCTAssertEqual(try sources(["4x3-480"], width: 1280, height: 640), [nil, nil], "from 854x640: 1.33x")
        XCTAssertEqual(try sources(["600x450"], width: 1280, height: 960), [1, nil], "320x240 from 600x450: 1.875x")
        XCTAssertEqual(try sources(["400x300"]), [nil, nil], "320x240 from 400x300: 1.25x")
        XCTAssertEqual(try sources(["1x1-720", "640x640"]), [nil, nil, nil], "640x640 from 720x720: 1.125x")
        XCTAssertEqual(try sources(["1x1-720", "480x480"]), [nil, nil, 1], "480x480 from 720x720: 1.5x")
    }

    func testAnotherWindowIsMadeFromTheDecodedPictures() throws {
        XCTAssertEqual(try sources(["9x16-1080", "1x1-720", "16x9-720"]), [nil, nil, nil, nil])
        // 16:9 at 1920x1080 is the whole picture, 4:3 a part of it: different windows.
        XCTAssertEqual(try sources(["16x9-720", "640x360"]), [nil, nil, 1])
    }

    func testPaddedOrBlurredPicturesAreTheirOwn() throws {
        XCTAssertEqual(try sources(["4x3-480:fit=pad"]), [nil, nil])
        XCTAssertEqual(try sources(["4x3-480:fit=blur", "4x3-480"]), [2, nil, nil])
        XCTAssertEqual(try sources(["4x3-480"], fit: .blur), [nil, nil])
    }

    /// A source smaller than the largest picture is scaled up for it: scaling that down again
    /// would blur what scaling the source directly keeps.
    func testAPictureScaledUpIsNoOnesSource() throws {
        XCTAssertEqual(try sources(["4x3-480"], width: 480, height: 360), [nil, nil])
        XCTAssertEqual(try sources(["4x3-480"], width: 640, height: 480), [nil, nil], "640x480 exactly: not shrunk")
        // A smaller picture of a group whose largest would be scaled up keeps the decoded pictures too.
        XCTAssertEqual(try sources(["4x3-480", "1280x960"], width: 800, height: 600), [nil, nil, nil])
        // A picture of the largest's very size is a copy of it, scaled up or not.
        XCTAssertEqual(try sources(["320x240:crf=18"], width: 160, height: 120), [nil, 0])
    }

    /// Tone mapping does not commute with scaling: each picture of an HLG or PQ clip is
    /// tone-mapped at its own size. A matrix change does: those are scaled from the largest.
    func testATonemappedClipsPicturesAreEachMadeFromTheDecodedPictures() {
        let window = CropRect(x: 240, y: 0, width: 1440, height: 1080)
        let pictures = [
            DerivedPictures.Picture(crop: window, fitted: false, width: 320, height: 240, downscale: 4.5),
            DerivedPictures.Picture(crop: window, fitted: false, width: 640, height: 480, downscale: 2.25),
        ]
        let hlg = ColourConversion.toneMap(
            transfer: "arib-std-b67", primaries: "bt2020", matrix: "bt2020nc", range: "tv", tonemap: .hable)
        XCTAssertEqual(DerivedPictures.sources(of: pictures, colour: hlg), [nil, nil])
        XCTAssertEqual(DerivedPictures.sources(of: pictures, colour: .matrix(from: "bt470bg")), [1, nil])
        XCTAssertEqual(DerivedPictures.sources(of: pictures, colour: .unmappedHDR(matrix: "bt2020nc")), [1, nil])
        XCTAssertEqual(DerivedPictures.sources(of: pictures, colour: .none), [1, nil])
    }

    func testTheChainIsAScaleOfTheFinishedPicture() {
        XCTAssertEqual(
            DerivedPictures.filter(width: 320, height: 240),
            "scale=w=320:h=240:flags=bicubic:in_range=tv:out_range=tv:in_color_matrix=bt709:out_color_matrix=bt709"
                + ",format=pix_fmts=yuv420p,setsar=1")
    }
}
