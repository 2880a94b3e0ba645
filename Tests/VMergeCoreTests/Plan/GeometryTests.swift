import XCTest

@testable import VMergeCore

private let square = Rational(1, 1)
private let fourThree = Rational(4, 3)
private let sixteenNine = Rational(16, 9)

final class GeometryTests: XCTestCase {
    private func crop(
        _ w: Int, _ h: Int, _ o: Orientation, aspect: Rational = fourThree,
        sar: Rational = square
    ) -> CropRect {
        centreCrop(codedWidth: w, codedHeight: h, sampleAspect: sar, orientation: o, aspect: aspect)
    }

    // MARK: centreCrop

    func testMatchingAspectKeepsWholeFrame() {
        XCTAssertEqual(crop(640, 480, .identity), CropRect(x: 0, y: 0, width: 640, height: 480))
        XCTAssertEqual(crop(640, 480, .mirrorHorizontal), CropRect(x: 0, y: 0, width: 640, height: 480))
        XCTAssertEqual(crop(480, 640, .rotate90), CropRect(x: 0, y: 0, width: 480, height: 640))
        XCTAssertEqual(
            crop(1920, 1080, .identity, aspect: sixteenNine), CropRect(x: 0, y: 0, width: 1920, height: 1080))
    }

    func testLandscapeToFourThree() {
        XCTAssertEqual(crop(1920, 1080, .identity), CropRect(x: 240, y: 0, width: 1440, height: 1080))
        XCTAssertEqual(crop(1920, 1080, .rotate180), CropRect(x: 240, y: 0, width: 1440, height: 1080))
    }

    /// A portrait phone clip: coded 1920x1080, shown upright as 1080x1920. The 4:3 region of the
    /// upright picture is 1080x810, i.e. 810 coded columns by 1080 coded rows.
    func testPortraitRotate90() {
        let r = crop(1920, 1080, .rotate90)
        XCTAssertEqual(r.width, 810)
        XCTAssertEqual(r.height, 1080)
        XCTAssertEqual(r.y, 0)
        // Exactly centred at 555 (an even 554 let one outside column in).
        XCTAssertEqual(r.x, 555)
        XCTAssertEqual(r, CropRect(x: 555, y: 0, width: 810, height: 1080))
        // Every swapping orientation crops the same centred region.
        for o in [Orientation.rotate270, .transpose, .antitranspose] {
            XCTAssertEqual(crop(1920, 1080, o), r, "\(o)")
        }
    }

    func testOddSizeRotate270() {
        let r = crop(638, 478, .rotate270)
        // Upright 478x638 -> 4:3 region 478 wide, 358.5 high -> 358 coded columns.
        XCTAssertEqual(r, CropRect(x: 140, y: 0, width: 358, height: 478))
        XCTAssertEqual(r.x + r.width + r.x, 638)
    }

    func testOddCodedDimensionsStayInside() {
        let r = crop(639, 479, .identity)
        XCTAssertEqual(r, CropRect(x: 0, y: 0, width: 638, height: 478))
    }

    func testNonSquareSampleAspect() {
        // NTSC 16:9 DVD: 720x480 with 32:27 pixels shows as 853.3x480; its 4:3 centre is 640x480
        // display pixels = 540 coded columns.
        XCTAssertEqual(crop(720, 480, .identity, sar: Rational(32, 27)), CropRect(x: 90, y: 0, width: 540, height: 480))
        // NTSC 4:3 DVD: 720x480 with 8:9 pixels is already 4:3.
        XCTAssertEqual(crop(720, 480, .identity, sar: Rational(8, 9)), CropRect(x: 0, y: 0, width: 720, height: 480))
        // Rotated: upright 480x853.3 -> 480x360 display -> 360 / (32/27) = 303.75 coded columns.
        XCTAssertEqual(
            crop(720, 480, .rotate90, sar: Rational(32, 27)), CropRect(x: 208, y: 0, width: 304, height: 480))
        // 16:9 output from 32:27 anamorphic: whole frame.
        XCTAssertEqual(
            crop(720, 480, .identity, aspect: sixteenNine, sar: Rational(32, 27)),
            CropRect(x: 0, y: 0, width: 720, height: 480))
    }

    func testUnknownSampleAspectCountsAsSquare() {
        for sar in [Rational(0, 1), Rational(0, 0), Rational(-1, 1)] {
            XCTAssertEqual(
                crop(1920, 1080, .identity, sar: sar), CropRect(x: 240, y: 0, width: 1440, height: 1080), "\(sar)")
        }
    }

    func testSixteenNine() {
        XCTAssertEqual(crop(640, 480, .identity, aspect: sixteenNine), CropRect(x: 0, y: 60, width: 640, height: 360))
        // Upright 1080x1920 -> 1080x607.5 -> 608 coded columns.
        XCTAssertEqual(
            crop(1920, 1080, .rotate90, aspect: sixteenNine), CropRect(x: 656, y: 0, width: 608, height: 1080))
    }

    func testPortraitOutputAspect() {
        // 3:4 output from a landscape clip: 1080 high, 810 wide.
        XCTAssertEqual(
            crop(1920, 1080, .identity, aspect: Rational(3, 4)), CropRect(x: 555, y: 0, width: 810, height: 1080))
        // ... and from a portrait clip it is the 1440-wide region turned upright.
        XCTAssertEqual(
            crop(1920, 1080, .rotate90, aspect: Rational(3, 4)), CropRect(x: 240, y: 0, width: 1440, height: 1080))
    }

    /// Over many sizes, orientations, aspects and pixel shapes: even sizes, inside the frame,
    /// centred to the pixel, and of the requested aspect up to the rounding to even sizes.
    func testInvariantsOverManySizes() {
        var rng = SplitMix(seed: 0x5eed)
        let aspects = [
            fourThree, sixteenNine, Rational(3, 4), Rational(1, 1), Rational(9, 16), Rational(21, 9), Rational(5, 4),
        ]
        let sars = [square, Rational(32, 27), Rational(8, 9), Rational(4, 3), Rational(64, 45)]
        var checked = 0
        for _ in 0..<3000 {
            let w = Int(rng.next() % 3900) + 100, h = Int(rng.next() % 3900) + 100
            for o in Orientation.allCases {
                let aspect = aspects[Int(rng.next() % UInt64(aspects.count))]
                let sar = sars[Int(rng.next() % UInt64(sars.count))]
                let r = crop(w, h, o, aspect: aspect, sar: sar)
                let label = "\(w)x\(h) \(o) aspect \(aspect) sar \(sar) -> \(r)"
                XCTAssertEqual(r.width % 2, 0, label)
                XCTAssertEqual(r.height % 2, 0, label)
                XCTAssertGreaterThanOrEqual(r.x, 0, label)
                XCTAssertGreaterThanOrEqual(r.y, 0, label)
                XCTAssertGreaterThanOrEqual(r.width, 2, label)
                XCTAssertGreaterThanOrEqual(r.height, 2, label)
                XCTAssertLessThanOrEqual(r.x + r.width, w, label)
                XCTAssertLessThanOrEqual(r.y + r.height, h, label)
                // Centred exactly: the two margins differ by at most 1 (an odd frame).
                XCTAssertLessThanOrEqual(abs((w - r.x - r.width) - r.x), 1, label)
                XCTAssertLessThanOrEqual(abs((h - r.y - r.height) - r.y), 1, label)
                // At least one side uses (nearly) the whole frame.
                XCTAssertTrue(r.width >= (w & ~1) - 2 || r.height >= (h & ~1) - 2, label)
                // Aspect of the upright crop in display units.
                let dw = Double(r.width) * sar.doubleValue, dh = Double(r.height)
                let (uw, uh) = o.swapsAxes ? (dh, dw) : (dw, dh)
                let tolerance =
                    aspect.doubleValue * (2.5 * sar.doubleValue / dw + 2.5 / dh + 2.5 / sar.doubleValue / dw)
                XCTAssertEqual(uw / uh, aspect.doubleValue, accuracy: tolerance, label)
                checked += 1
            }
        }
        XCTAssertEqual(checked, 3000 * 8)
    }

    // MARK: outputSize

    func testOutputSize() {
        func size(_ w: Int, _ a: Rational) -> [Int] {
            let s = outputSize(width: w, aspect: a); return [s.width, s.height]
        }
        XCTAssertEqual(size(320, fourThree), [320, 240])
        XCTAssertEqual(size(640, sixteenNine), [640, 360])
        XCTAssertEqual(size(1920, sixteenNine), [1920, 1080])
        XCTAssertEqual(size(240, Rational(3, 4)), [240, 320])
        // Odd heights become even: 243 -> 244, 241.5 -> 242, 238.5 -> 238, 183.375 -> 184.
        XCTAssertEqual(size(324, fourThree), [324, 244])
        XCTAssertEqual(size(322, fourThree), [322, 242])
        XCTAssertEqual(size(318, fourThree), [318, 238])
        XCTAssertEqual(size(326, sixteenNine), [326, 184])
        // Never below 2.
        XCTAssertEqual(size(2, Rational(10, 1)), [2, 2])
        for w in stride(from: 16, through: 4000, by: 2) {
            for a in [fourThree, sixteenNine, Rational(21, 9), Rational(3, 4)] {
                let s = outputSize(width: w, aspect: a)
                XCTAssertEqual(s.width, w)
                XCTAssertEqual(s.height % 2, 0, "\(w) \(a)")
                XCTAssertLessThanOrEqual(abs(Double(s.height) - Double(w) / a.doubleValue), 1.0, "\(w) \(a)")
            }
        }
    }

    func testMergeOptionsOutputSizeFollowsWidthAndAspect() {
        var options = MergeOptions()
        XCTAssertEqual(options.outputSize.width, 320)
        XCTAssertEqual(options.outputSize.height, 240)
        options.width = 640
        options.aspect = sixteenNine
        XCTAssertEqual(options.outputSize.width, 640)
        XCTAssertEqual(options.outputSize.height, 360)
    }
}

/// Deterministic PRNG so failures reproduce.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension GeometryTests {
    /// --fit pad/blur: the whole picture scaled into the output box (coded orientation), even sizes.
    func testFittedSize() {
        // A 1920x1080 portrait recording (turned 90) into a 320x240 output: the box is 240x320.
        XCTAssertEqual(
            fittedSize(codedWidth: 1920, codedHeight: 1080, sampleAspect: Rational(1, 1), box: (240, 320)).width, 240)
        XCTAssertEqual(
            fittedSize(codedWidth: 1920, codedHeight: 1080, sampleAspect: Rational(1, 1), box: (240, 320)).height, 136)
        // Already the box's shape: the box.
        let same = fittedSize(codedWidth: 640, codedHeight: 480, sampleAspect: Rational(1, 1), box: (320, 240))
        XCTAssertEqual([same.width, same.height], [320, 240])
        // Anamorphic 1440x1080 at 4:3 pixels is 16:9 on screen: 320x180 in the box.
        let wide = fittedSize(codedWidth: 1440, codedHeight: 1080, sampleAspect: Rational(4, 3), box: (320, 240))
        XCTAssertEqual([wide.width, wide.height], [320, 180])
        // Never past the box, never odd, never zero.
        let thin = fittedSize(codedWidth: 10_000, codedHeight: 2, sampleAspect: Rational(1, 1), box: (320, 240))
        XCTAssertEqual([thin.width, thin.height], [320, 2])
    }
}
