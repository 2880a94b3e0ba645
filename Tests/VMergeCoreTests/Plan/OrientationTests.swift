import Foundation
import XCTest

@testable import VMergeCore

/// FFmpeg display matrices (row-major a b u / c d v / x y w; a-d in 16.16, w in 2.30).
private let one: Int32 = 65536
private let w: Int32 = 1 << 30

private func matrix(a: Int32, b: Int32, c: Int32, d: Int32) -> [Int32] {
    [a, b, 0, c, d, 0, 0, 0, w]
}

/// The canonical matrix of each orientation, as FFmpeg writes it.
private let canonical: [(Orientation, [Int32])] = [
    (.identity, matrix(a: one, b: 0, c: 0, d: one)),
    (.rotate90, matrix(a: 0, b: one, c: -one, d: 0)),
    (.rotate180, matrix(a: -one, b: 0, c: 0, d: -one)),
    (.rotate270, matrix(a: 0, b: -one, c: one, d: 0)),
    (.mirrorHorizontal, matrix(a: -one, b: 0, c: 0, d: one)),
    (.mirrorVertical, matrix(a: one, b: 0, c: 0, d: -one)),
    (.transpose, matrix(a: 0, b: one, c: one, d: 0)),
    (.antitranspose, matrix(a: 0, b: -one, c: -one, d: 0)),
]

/// A clockwise rotation by `degrees` (y pointing down), optionally followed by a left-right
/// mirror (first column negated, as av_display_matrix_flip does), in 16.16.
private func rotationMatrix(degrees: Double, hflip: Bool = false, scale: Double = 1) -> [Int32] {
    let r = degrees * .pi / 180
    func fx(_ v: Double) -> Int32 { Int32((v * 65536 * scale).rounded()) }
    var a = fx(cos(r)), c = fx(-sin(r))
    let b = fx(sin(r)), d = fx(cos(r))
    if hflip { a = -a; c = -c }
    return matrix(a: a, b: b, c: c, d: d)
}

// MARK: - A tiny labelled image and the pixel mappings of libavfilter's filters

/// rows[y][x]
private struct Image: Equatable, CustomStringConvertible {
    var rows: [[String]]
    var width: Int { rows.first?.count ?? 0 }
    var height: Int { rows.count }
    var description: String { rows.map { $0.joined(separator: " ") }.joined(separator: " / ") }

    static func grid(width: Int, height: Int) -> Image {
        Image(rows: (0..<height).map { y in (0..<width).map { x in "\(x),\(y)" } })
    }
}

/// Applies one filter the way libavfilter computes it: each output pixel is read from an
/// input pixel (vf_hflip, vf_vflip, vf_transpose's dst[y][x] = src[x][y] with flipped bases).
private func apply(_ filter: String, to input: Image) -> Image {
    let inW = input.width, inH = input.height
    switch filter {
    case "hflip":
        return Image(rows: (0..<inH).map { y in (0..<inW).map { x in input.rows[y][inW - 1 - x] } })
    case "vflip":
        return Image(rows: (0..<inH).map { y in (0..<inW).map { x in input.rows[inH - 1 - y][x] } })
    case let f where f.hasPrefix("transpose="):
        let dirs = ["cclock_flip": 0, "clock": 1, "cclock": 2, "clock_flip": 3]
        guard let dir = dirs[String(f.dropFirst("transpose=".count))] else {
            XCTFail("unknown transpose direction in \(f)")
            return input
        }
        let outW = inH, outH = inW
        var out = Array(repeating: Array(repeating: "?", count: outW), count: outH)
        for y in 0..<outH {
            for x in 0..<outW {
                let dstRow = dir & 2 != 0 ? outH - 1 - y : y
                let srcRow = dir & 1 != 0 ? inH - 1 - x : x
                out[dstRow][x] = input.rows[srcRow][y]
            }
        }
        return Image(rows: out)
    default:
        XCTFail("no pixel model for filter \(filter)")
        return input
    }
}

/// What a player shows: coded (x, y) goes to (a*x + c*y, b*x + d*y), then the picture is moved
/// so that its top-left corner is at (0, 0).
private func display(_ input: Image, matrix m: [Int32]) -> Image {
    let a = Int(m[0]) / 65536, b = Int(m[1]) / 65536, c = Int(m[3]) / 65536, d = Int(m[4]) / 65536
    var placed: [(Int, Int, String)] = []
    for y in 0..<input.height {
        for x in 0..<input.width {
            placed.append((a * x + c * y, b * x + d * y, input.rows[y][x]))
        }
    }
    let minX = placed.map(\.0).min()!, minY = placed.map(\.1).min()!
    let maxX = placed.map(\.0).max()!, maxY = placed.map(\.1).max()!
    var out = Array(repeating: Array(repeating: "?", count: maxX - minX + 1), count: maxY - minY + 1)
    for (x, y, label) in placed { out[y - minY][x - minX] = label }
    return Image(rows: out)
}

final class OrientationTests: XCTestCase {
    func testCanonicalMatricesClassify() {
        XCTAssertEqual(canonical.count, Orientation.allCases.count)
        XCTAssertEqual(Set(canonical.map(\.0)), Set(Orientation.allCases))
        for (expected, m) in canonical {
            XCTAssertEqual(Orientation(displayMatrix: m), expected, "matrix \(m)")
        }
    }

    func testBriefMatrixLiterals() {
        XCTAssertEqual(Orientation(displayMatrix: [0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30]), .rotate90)
        XCTAssertEqual(Orientation(displayMatrix: [65536, 0, 0, 0, 65536, 0, 0, 0, 1 << 30]), .identity)
    }

    func testScaledMatricesClassifyTheSame() {
        for (expected, m) in canonical {
            let doubled = m.enumerated().map { $0.offset == 8 ? $0.element : $0.element * 2 }
            XCTAssertEqual(Orientation(displayMatrix: doubled), expected, "2x \(doubled)")
            let halved = m.enumerated().map { $0.offset == 8 ? $0.element : $0.element / 2 }
            XCTAssertEqual(Orientation(displayMatrix: halved), expected, "0.5x \(halved)")
        }
    }

    func testTranslationIsIgnored() {
        var m = canonical[1].1  // rotate90
        m[6] = 1080 << 16
        m[7] = 0
        XCTAssertEqual(Orientation(displayMatrix: m), .rotate90)
    }

    func testNonRightAnglesSnapToNearest90() {
        let cases: [(Double, Orientation)] = [
            (10, .identity), (40, .identity), (-40, .identity), (50, .rotate90), (89, .rotate90),
            (130, .rotate90), (140, .rotate180), (220, .rotate180), (230, .rotate270),
            (-50, .rotate270), (310, .rotate270), (320, .identity),
        ]
        for (degrees, expected) in cases {
            XCTAssertEqual(Orientation(displayMatrix: rotationMatrix(degrees: degrees)), expected, "\(degrees) deg")
            XCTAssertEqual(
                Orientation(displayMatrix: rotationMatrix(degrees: degrees, scale: 3)), expected,
                "\(degrees) deg scaled")
        }
        let mirrored: [(Double, Orientation)] = [
            (5, .mirrorHorizontal), (-40, .mirrorHorizontal), (50, .transpose), (95, .transpose),
            (175, .mirrorVertical), (200, .mirrorVertical), (260, .antitranspose), (300, .antitranspose),
        ]
        for (degrees, expected) in mirrored {
            XCTAssertEqual(
                Orientation(displayMatrix: rotationMatrix(degrees: degrees, hflip: true)), expected,
                "\(degrees) deg + hflip")
        }
    }

    func testExactRightAnglesFromRotationHelperMatchCanonical() {
        XCTAssertEqual(rotationMatrix(degrees: 90), canonical[1].1)
        XCTAssertEqual(rotationMatrix(degrees: 180), canonical[2].1)
        XCTAssertEqual(rotationMatrix(degrees: 270), canonical[3].1)
        XCTAssertEqual(rotationMatrix(degrees: 90, hflip: true), canonical[6].1)
    }

    func testDegenerateMatricesAreIdentity() {
        XCTAssertEqual(Orientation(displayMatrix: [0, 0, 0, 0, 0, 0, 0, 0, 0]), .identity)
        XCTAssertEqual(Orientation(displayMatrix: [0, 0, 0, 0, 0, 0, 0, 0, w]), .identity)
        XCTAssertEqual(Orientation(displayMatrix: []), .identity)
        XCTAssertEqual(Orientation(displayMatrix: [0, one, 0, -one]), .identity)  // too short
        // Singular: both axes onto the same line.
        XCTAssertEqual(Orientation(displayMatrix: matrix(a: 0, b: one, c: 0, d: one)), .identity)
        XCTAssertEqual(Orientation(displayMatrix: matrix(a: -one, b: -one, c: -one, d: -one)), .identity)
    }

    func testFiveElementsAreEnough() {
        XCTAssertEqual(Orientation(displayMatrix: [0, one, 0, -one, 0]), .rotate90)
    }

    func testProperties() {
        struct Expect { let swaps: Bool; let degrees: Int; let mirrored: Bool; let filters: [String] }
        let table: [Orientation: Expect] = [
            .identity: Expect(swaps: false, degrees: 0, mirrored: false, filters: []),
            .rotate90: Expect(swaps: true, degrees: 90, mirrored: false, filters: ["transpose=clock"]),
            .rotate180: Expect(swaps: false, degrees: 180, mirrored: false, filters: ["hflip", "vflip"]),
            .rotate270: Expect(swaps: true, degrees: 270, mirrored: false, filters: ["transpose=cclock"]),
            .mirrorHorizontal: Expect(swaps: false, degrees: 0, mirrored: true, filters: ["hflip"]),
            .mirrorVertical: Expect(swaps: false, degrees: 180, mirrored: true, filters: ["vflip"]),
            .transpose: Expect(swaps: true, degrees: 90, mirrored: true, filters: ["transpose=cclock_flip"]),
            .antitranspose: Expect(swaps: true, degrees: 270, mirrored: true, filters: ["transpose=clock_flip"]),
        ]
        XCTAssertEqual(table.count, Orientation.allCases.count)
        for orientation in Orientation.allCases {
            guard let e = table[orientation] else { return XCTFail("no expectation for \(orientation)") }
            XCTAssertEqual(orientation.swapsAxes, e.swaps, "\(orientation).swapsAxes")
            XCTAssertEqual(orientation.rotationDegrees, e.degrees, "\(orientation).rotationDegrees")
            XCTAssertEqual(orientation.isMirrored, e.mirrored, "\(orientation).isMirrored")
            XCTAssertEqual(orientation.filters, e.filters, "\(orientation).filters")
        }
    }

    func testPixelModelSanity() {
        // 3x2 grid:  0,0 1,0 2,0 / 0,1 1,1 2,1
        let g = Image.grid(width: 3, height: 2)
        XCTAssertEqual(apply("transpose=clock", to: g).rows, [["0,1", "0,0"], ["1,1", "1,0"], ["2,1", "2,0"]])
        XCTAssertEqual(apply("transpose=cclock", to: g).rows, [["2,0", "2,1"], ["1,0", "1,1"], ["0,0", "0,1"]])
        XCTAssertEqual(apply("hflip", to: g).rows, [["2,0", "1,0", "0,0"], ["2,1", "1,1", "0,1"]])
        XCTAssertEqual(display(g, matrix: canonical[1].1).rows, [["0,1", "0,0"], ["1,1", "1,0"], ["2,1", "2,0"]])
    }

    /// The filters vmerge applies produce exactly the picture the display matrix describes.
    func testFiltersAgreeWithMatrixSemantics() {
        for (width, height) in [(3, 2), (2, 3), (4, 3)] {
            let coded = Image.grid(width: width, height: height)
            for (orientation, m) in canonical {
                let expected = display(coded, matrix: m)
                let filtered = orientation.filters.reduce(coded) { apply($1, to: $0) }
                XCTAssertEqual(filtered, expected, "\(orientation) on \(width)x\(height)")
                XCTAssertEqual(filtered.width, orientation.swapsAxes ? height : width, "\(orientation) width")
                XCTAssertEqual(Orientation(displayMatrix: m), orientation)
            }
        }
    }

    /// rotationDegrees clockwise, then a left-right mirror when isMirrored, is the same picture.
    func testRotationDegreesAndMirrorDescribeTheTransform() {
        let coded = Image.grid(width: 3, height: 2)
        for (orientation, m) in canonical {
            XCTAssertEqual(orientation.rotationDegrees % 90, 0)
            var picture = coded
            for _ in 0..<(orientation.rotationDegrees / 90) { picture = apply("transpose=clock", to: picture) }
            if orientation.isMirrored { picture = apply("hflip", to: picture) }
            XCTAssertEqual(picture, display(coded, matrix: m), "\(orientation)")
        }
    }

    func testCodableRawValues() throws {
        let data = try JSONEncoder().encode([Orientation.rotate90, .antitranspose])
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"["rotate90","antitranspose"]"#)
        XCTAssertEqual(try JSONDecoder().decode([Orientation].self, from: data), [.rotate90, .antitranspose])
    }
}
