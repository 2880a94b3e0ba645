import Foundation
import XCTest

@testable import VMergeCore

final class ByteSizeTests: XCTestCase {
    func testParse() {
        XCTAssertEqual(ByteSize.parse("1234"), 1234)
        XCTAssertEqual(ByteSize.parse("500K"), 500 * 1024)
        XCTAssertEqual(ByteSize.parse("500k"), 500 * 1024)
        XCTAssertEqual(ByteSize.parse("160M"), 160 << 20)
        XCTAssertEqual(ByteSize.parse("160MiB"), 160 << 20)
        XCTAssertEqual(ByteSize.parse("160MB"), 160_000_000)
        XCTAssertEqual(ByteSize.parse("1.5G"), 3 << 29)
        XCTAssertEqual(ByteSize.parse("2T"), 2 << 40)
        XCTAssertEqual(ByteSize.parse(" 10 KB "), 10_000)
        XCTAssertEqual(ByteSize.parse("7b"), 7)
        for bad in ["", "M", "-5M", "5X", "5MM", "1e3", "١٢", "abc", "99999999999T"] {
            XCTAssertNil(ByteSize.parse(bad), bad)
        }
    }

    func testFormat() {
        XCTAssertEqual(ByteSize.format(900), "900 B")
        XCTAssertEqual(ByteSize.format(1536), "1.5 KiB")
        XCTAssertEqual(ByteSize.format(160 << 20), "160 MiB")
        XCTAssertEqual(ByteSize.format(3 << 30), "3.0 GiB")
    }
}

final class InputListTests: XCTestCase {
    func testParseSkipsBlanksAndComments() {
        let text = "a.mov\n\n# a comment\n  b c.mov  \r\nd.mov\r\n   # indented comment\n#\nlast.mov"
        XCTAssertEqual(InputList.parse(text), ["a.mov", "b c.mov", "d.mov", "last.mov"])
        XCTAssertEqual(InputList.parse(""), [])
        XCTAssertEqual(
            InputList.parse("\u{FEFF}a.mov\r\nb.mov\r\n"), ["a.mov", "b.mov"], "a byte-order mark is not a path")
        XCTAssertEqual(InputList.parse("\n\n# only comments\n"), [])
    }

    func testNaturalOrder() {
        let names = [
            "clip10.mov", "clip2.mov", "Clip1.mov", "clip1.mov", "clip02.mov", "b.mov", "a10b2", "a10b10", "a9",
        ]
        let sorted = names.sorted { InputList.naturalCompare($0, $1) < 0 }
        XCTAssertEqual(
            sorted,
            ["a9", "a10b2", "a10b10", "b.mov", "Clip1.mov", "clip1.mov", "clip02.mov", "clip2.mov", "clip10.mov"])
        // Numbers longer than any integer type still compare by value.
        XCTAssertLessThan(InputList.naturalCompare("x99999999999999999999999", "x100000000000000000000000"), 0)
        XCTAssertEqual(InputList.naturalCompare("same", "same"), 0)
        XCTAssertGreaterThan(InputList.naturalCompare("clip10", "clip9"), 0)
    }

    func testFolderExpandsToVideosInNaturalOrder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-list-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["clip10.MOV", "clip2.mov", "clip1.mp4", "clip3.m4v", "clip4.3gp", "notes.txt", ".hidden.mov"] {
            _ = FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: Data([0]))
        }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("sub.mov"), withIntermediateDirectories: true)
        let expanded = try InputList.expand([folder.path, "x.mov"], order: .none)
        XCTAssertEqual(
            expanded.map { ($0 as NSString).lastPathComponent },
            ["clip1.mp4", "clip2.mov", "clip3.m4v", "clip4.3gp", "clip10.MOV", "x.mov"])
        // --sort name orders the whole list by path (the folder's absolute paths sort before "a.mov").
        XCTAssertEqual(
            try InputList.expand(["z.mov", folder.path, "a.mov"], order: .name).map {
                ($0 as NSString).lastPathComponent
            },
            ["clip1.mp4", "clip2.mov", "clip3.m4v", "clip4.3gp", "clip10.MOV", "a.mov", "z.mov"])
    }

    func testEmptyFolderIsAnError() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        XCTAssertThrowsError(try InputList.expand([folder.path], order: .none)) { error in
            XCTAssertEqual(
                (error as? VMergeError)?.description,
                "\(folder.path): folder has no video files (.mov, .mp4, .m4v, .3gp)")
        }
    }

    func testModificationTimeOrder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-mtime-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let names = ["new.mov", "old.mov", "mid.mov"]
        let ages: [Double] = [10, 1000, 100]
        for (name, age) in zip(names, ages) {
            let path = folder.appendingPathComponent(name).path
            _ = FileManager.default.createFile(atPath: path, contents: Data([0]))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: path)
        }
        let paths = names.map { folder.appendingPathComponent($0).path }
        XCTAssertEqual(
            InputList.sorted(paths, by: .mtime).map { ($0 as NSString).lastPathComponent },
            ["old.mov", "mid.mov", "new.mov"])
        XCTAssertEqual(InputList.sorted(paths, by: .none), paths)
    }
}

final class JSONTests: XCTestCase {
    func testCompactAndPretty() {
        let value = JSON.object([
            ("s", .string("a\"b\\c\n\u{1}é")), ("i", .int(-3)), ("d", .number(1.5)), ("whole", .number(2)),
            ("tiny", .number(0.0000001)), ("nan", .number(.nan)), ("b", .bool(true)), ("n", .null),
            ("a", .array([.int(1), .array([]), .object([])])),
        ])
        XCTAssertEqual(
            value.text(),
            #"{"s":"a\"b\\c\n\u0001é","i":-3,"d":1.5,"whole":2,"tiny":0,"nan":null,"b":true,"n":null,"a":[1,[],{}]}"#)
        XCTAssertEqual(JSON.object([("k", .array([.int(1)]))]).text(pretty: true), "{\n  \"k\": [\n    1\n  ]\n}")
        // What it writes, Foundation reads back.
        let parsed = try? JSONSerialization.jsonObject(with: Data(value.text(pretty: true).utf8)) as? [String: Any]
        XCTAssertEqual(parsed?["s"] as? String, "a\"b\\c\n\u{1}é")
        XCTAssertEqual(parsed?.count, 9)
    }

    /// A text cut to N bytes of JSON is at most N bytes there, whatever it holds (a byte that is
    /// not UTF-8 is 12, a control 6, "é" 2): whole when it fits, else a prefix and "…".
    func testACutTextFitsItsBytesInJSON() {
        let texts = [
            "plain name.mov", FileName.decode([0x61, 0xFF, 0xFE, 0x62, 0xC3]), "\u{1}\u{7f}\"\\\n", "é😀\u{2028}x",
            String(repeating: FileName.decode([0xFF]), count: 40),
        ]
        for text in texts {
            for limit in 0...80 {
                let cut = JSON.cut(text, toBytes: limit)
                XCTAssertLessThanOrEqual(JSON.escapedLength(cut), limit, "\(text.debugDescription) in \(limit)")
                if JSON.escapedLength(text) <= limit {
                    XCTAssertEqual(cut, text)
                } else if !cut.isEmpty {
                    XCTAssertTrue(cut.hasSuffix("…") && text.unicodeScalars.starts(with: cut.unicodeScalars.dropLast()))
                }
            }
        }
        XCTAssertEqual(JSON.cut(FileName.decode([0xFF, 0xFF]), toBytes: 16), FileName.decode([0xFF]) + "…")
    }
}

final class LimitPlanTests: XCTestCase {
    private func clip(_ name: String, micros: Int64) -> ClipInfo {
        ClipInfo(
            path: name, container: "mov,mp4,m4a,3gp,3g2,mj2", durationMicros: micros,
            video: VideoInfo(
                streamIndex: 0, codec: "h264", width: 640, height: 480, sampleAspect: Rational(1, 1),
                pixelFormat: "yuv420p", frameRate: Rational(30, 1), orientation: .identity),
            audio: nil, creationTime: nil)
    }

    func testMaxDurationCutsTheCrossingClipAndLeavesTheRestOut() {
        var options = MergeOptions()
        options.maxDuration = 5.01  // rounded down to the frame grid: 150 frames = 5 s
        let plan = MergePlan(
            probes: [
                .clip(clip("a", micros: 3_000_000)), .clip(clip("short", micros: 1_000_000)),
                .clip(clip("b", micros: 3_000_000)), .clip(clip("c", micros: 3_000_000)),
            ],
            options: options)
        XCTAssertEqual(plan.clips.map(\.clip.path), ["a", "b"])
        XCTAssertEqual(plan.clips[1].startMicros, 3_000_000)
        XCTAssertEqual(plan.clips[1].durationMicros, 2_000_000)
        XCTAssertTrue(plan.clips[1].isCut)
        XCTAssertFalse(plan.clips[0].isCut)
        XCTAssertEqual(plan.durationMicros, 5_000_000)
        XCTAssertEqual(
            plan.inputs.map(\.disposition),
            [
                .kept(0), .dropped(.tooShort(durationSeconds: 1, limitSeconds: 2)), .kept(1),
                .dropped(.beyondLimit(limitSeconds: 5.01)),
            ])
        XCTAssertEqual(
            DropReason.beyondLimit(limitSeconds: 5.01).message,
            "left out: the output reaches its 5.01 s maximum before this clip")
    }

    func testAClipTheLimitWouldCutBeforeItsFirstFrameIsLeftOut() {
        var options = MergeOptions()
        options.maxDuration = 2.01  // 60 frames = 2 s; the second clip would start at 2.0 s
        let plan = MergePlan(
            probes: [
                .clip(clip("a", micros: 2_000_000)), .clip(clip("b", micros: 3_000_000)),
                .notProbed(path: "c"),
            ],
            options: options)
        XCTAssertEqual(plan.clips.map(\.clip.path), ["a"])
        XCTAssertEqual(
            plan.inputs.map(\.disposition),
            [
                .kept(0), .dropped(.beyondLimit(limitSeconds: 2.01)), .dropped(.beyondLimit(limitSeconds: 2.01)),
            ])
        XCTAssertTrue(plan.isCutByMaxDuration, "b is left out although a is not cut")
        XCTAssertFalse(MergePlan(probes: [.clip(clip("a", micros: 2_000_000))], options: options).isCutByMaxDuration)
    }

    func testMaxDurationOnAFractionalFrameRate() {
        var options = MergeOptions()
        options.frameRate = Rational(30000, 1001)
        options.maxDuration = 1
        // 29 whole frames fit in a second at 29.97 fps.
        XCTAssertEqual(options.maxDurationMicros, options.timeline.micros(ofFrame: 29))
    }

    func testNotProbedInputsStayInTheirPlace() {
        let plan = MergePlan(
            probes: [
                .clip(clip("a", micros: 3_000_000)), .invalid(path: "bad", reason: "not a video"),
                .notProbed(path: "later"),
            ],
            options: MergeOptions())
        XCTAssertEqual(plan.inputs.map(\.probe.path), ["a", "bad", "later"])
        XCTAssertEqual(plan.inputs.map(\.disposition), [.kept(0), .dropped(.invalid("not a video")), .notProbed])
        XCTAssertEqual(plan.dropped.map(\.path), ["bad"])
    }

    func testChaptersAreCountedAgainstTheLimit() {
        XCTAssertEqual(SizeBudget.allowance(for: []), 0)
        let chapters = [
            Chapter(title: "IMG_0001", startMicros: 0, endMicros: 1_000_000),
            Chapter(title: "Größe", startMicros: 1_000_000, endMicros: 2_000_000),
        ]
        // 1024 for the track, then each title twice (in bytes: "Größe" is 7) plus 64.
        XCTAssertEqual(SizeBudget.allowance(for: chapters), 1024 + (16 + 64) + (14 + 64))
        let plain = SizeBudget(limit: 100_000), reserving = SizeBudget(limit: 100_000, reserved: 1_000)
        XCTAssertEqual(
            reserving.bound(payload: 10, videoPackets: 1, keyframes: 1, audioPackets: 1),
            plain.bound(payload: 10, videoPackets: 1, keyframes: 1, audioPackets: 1) + 1_000)
    }

    func testSizeBudget() {
        let budget = SizeBudget(limit: 100_000)
        XCTAssertEqual(budget.bound(payload: 0, videoPackets: 0, keyframes: 0, audioPackets: 0), 4096)
        XCTAssertEqual(budget.bound(payload: 50_000, videoPackets: 100, keyframes: 2, audioPackets: 50), 57_904)
        XCTAssertTrue(budget.fits(payload: 95_904, videoPackets: 0, keyframes: 0, audioPackets: 0))
        XCTAssertFalse(budget.fits(payload: 95_905, videoPackets: 0, keyframes: 0, audioPackets: 0))
        // Above 4 GiB the muxer switches to 64-bit chunk offsets.
        XCTAssertEqual(SizeBudget(limit: 5 << 30).perVideoPacket, 32)
    }

    func testFreeSpaceEstimate() {
        var options = MergeOptions()
        // 320x240 at 30 fps, 0.12 bits per pixel + 96 kb/s AAC, for 100 s.
        XCTAssertEqual(FreeSpace.estimatedOutputBytes(durationMicros: 100_000_000, options: options), 4_656_000)
        options.maxSize = 1_000_000
        XCTAssertEqual(FreeSpace.estimatedOutputBytes(durationMicros: 100_000_000, options: options), 1_000_000)
        XCTAssertThrowsError(
            try FreeSpace.check(output: "/tmp/x.mp4", durationMicros: 1, options: options, required: Int64.max / 2)
        ) { error in
            XCTAssertTrue("\(error)".contains("not enough free space"), "\(error)")
        }
    }
}

final class ProgressTests: XCTestCase {
    func testFractionSpeedAndETA() {
        var p = MergeProgress(
            phase: .encoding, item: 2, itemCount: 4, file: "b.mov", doneMicros: 10_000_000, totalMicros: 40_000_000,
            elapsedSeconds: 2)
        XCTAssertEqual(p.fraction, 0.25)
        XCTAssertEqual(p.speed, 5)
        XCTAssertEqual(p.etaSeconds, 6)
        XCTAssertEqual(
            p.json.text(),
            #"{"phase":"encoding","clip":2,"clips":4,"file":"b.mov","percent":25,"out_time":10,"total_time":40,"#
                + #""elapsed":2,"total_size":0,"speed":5,"eta":6,"progress":"continue"}"#)
        p.outputBytes = 123_456
        XCTAssertTrue(p.json.text().contains(#""total_size":123456,"#))
        p.elapsedSeconds = 0.1
        XCTAssertNil(p.speed, "too early to tell")
        XCTAssertNil(p.etaSeconds)
        p.phase = .probing
        XCTAssertEqual(p.fraction, 0)
        p.phase = .done
        XCTAssertEqual(p.fraction, 1)
        XCTAssertEqual(p.etaSeconds, 0)
        XCTAssertTrue(p.json.text().hasSuffix(#""progress":"end"}"#))
    }
}

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
