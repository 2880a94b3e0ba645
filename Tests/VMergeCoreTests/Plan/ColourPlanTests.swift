import Foundation
import XCTest

@testable import VMergeCore

final class ColourPlanTests: XCTestCase {
    func testConversionPerClip() {
        let plan = { (colour: ColourInfo, w: Int, h: Int, can: Bool) in
            ColourConversion.plan(for: colour, width: w, height: h, tonemap: .mobius, canToneMap: can)
        }
        XCTAssertEqual(plan(ColourInfo(matrix: "bt709"), 640, 480, true), .none)
        // Undeclared: guessed by size, as players do.
        XCTAssertEqual(plan(ColourInfo(), 1920, 1080, true), .none)
        XCTAssertEqual(plan(ColourInfo(), 640, 480, true), .matrix(from: "smpte170m"))
        XCTAssertEqual(plan(ColourInfo(matrix: "bt470bg", range: "pc"), 1920, 1080, true), .matrix(from: "bt470bg"))
        let hlg = ColourInfo(
            transfer: "arib-std-b67", primaries: "bt2020", matrix: "bt2020nc", range: "tv", bitDepth: 10)
        XCTAssertEqual(hlg.dynamicRange, .hlg)
        XCTAssertEqual(
            plan(hlg, 1920, 1080, true),
            .toneMap(transfer: "arib-std-b67", primaries: "bt2020", matrix: "bt2020nc", range: "tv", tonemap: .mobius))
        XCTAssertEqual(plan(hlg, 1920, 1080, false), .unmappedHDR(matrix: "bt2020nc"))
        // Dolby Vision 8.4 is read by its HLG base layer.
        var dovi = hlg
        dovi.dolbyVision = (8, 4)
        XCTAssertEqual(dovi.dynamicRange, .hlg)
        XCTAssertEqual(ColourInfo(transfer: "smpte2084").dynamicRange, .pq)
        XCTAssertEqual(ColourInfo(transfer: "smpte2084").sourcePrimaries, "bt2020", "HDR without primaries: BT.2020")
    }

    func testFilterChains() {
        let options = MergeOptions()
        let crop = CropRect(x: 0, y: 0, width: 640, height: 480)
        let sdr = FilterGraphs.video(crop: crop, orientation: .identity, inputRate: Rational(30, 1), options: options)
        XCTAssertFalse(sdr.contains("colorspace") || sdr.contains("zscale"), sdr)
        let bt601 = FilterGraphs.video(
            crop: crop, orientation: .identity, inputRate: Rational(30, 1), colour: .matrix(from: "smpte170m"),
            options: options)
        XCTAssertTrue(
            bt601.contains(
                "scale=w=320:h=240:flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128:out_range=tv,format=pix_fmts=yuv444p,"
                    + "colorspace=all=bt709:ispace=smpte170m"
                    + ":iprimaries=bt709:itrc=bt709:irange=tv:range=tv:fast=1:format=yuv444p,scale=flags=bicubic,"
                    + "format=pix_fmts=yuv420p,setsar=1"
            ),
            bt601)
        let hdr = FilterGraphs.video(
            crop: crop, orientation: .rotate90, inputRate: Rational(30, 1),
            colour: .toneMap(
                transfer: "arib-std-b67", primaries: "bt2020", matrix: "bt2020nc", range: "tv", tonemap: .mobius),
            options: options)
        // Scaled first (to the pre-rotation size), tone-mapped on the small picture, then turned.
        XCTAssertTrue(
            hdr.contains(
                "scale=w=240:h=320:flags=bicubic:in_h_chr_pos=128:in_v_chr_pos=128,format=pix_fmts=yuv444p16le,"
                    + "zscale=tin=arib-std-b67:pin=bt2020:min=bt2020nc:rin=limited:t=linear:npl=203,"
                    + "format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=mobius:desat=0:param=0.5,"
                    + "zscale=t=bt709:m=bt709:r=limited,format=pix_fmts=yuv444p16le,scale=flags=bicubic,format=pix_fmts=yuv420p,"
                    + "transpose=clock"), hdr)
    }
}
