import Foundation
import TestSupport

/// Makes one container layout of `ByteAccountingInvariantTests`: the ffmpeg CLI muxes the
/// tracks (from the 3 s fixture a_, and e_'s 2.2 s picture for sound that runs past it), then the
/// bytes are edited as a camera or an editor would leave them: an edit list shortened, boxes
/// appended, a box put inside the index. Edits inside `moov` rely on ffmpeg writing it after the
/// media data, so no sample moves.
struct LayoutMaker {
    typealias Layout = ByteAccountingInvariantTests.Layout
    let folder: URL

    func make(_ layout: Layout, as name: String) throws {
        let extras = Set(layout.extras)
        var inputs: [String] = []
        var maps: [String] = []
        func input(_ path: String) -> Int {
            inputs += ["-i", path]
            return inputs.count / 2 - 1
        }
        if extras.contains(.longSound) {
            let picture = input(Fixtures.path("e_")), sound = input(Fixtures.path("a_"))
            maps += ["-map", "\(picture):v", "-map", "\(sound):a"]
        } else {
            let source = input(Fixtures.path("a_"))
            maps += ["-map", "\(source):v", "-map", "\(source):a"]
            if extras.contains(.secondSound) { maps += ["-map", "\(source):a"] }
        }
        var options = ["-c", "copy"]
        if extras.contains(.subtitle) {
            try Data("1\n00:00:00,000 --> 00:00:01,000\nhello\n".utf8).write(to: folder.appendingPathComponent("sub.srt"))
            maps += ["-map", "\(input("sub.srt")):s"]
            options += ["-c:s", layout.container == .mkv ? "srt" : "mov_text"]
        }
        if extras.contains(.cover) {
            try runFFmpeg(["-i", Fixtures.path("a_"), "-frames:v", "1", "-update", "1", "cover.jpg"], in: folder)
            maps += ["-map", "\(input("cover.jpg")):v"]
            options += ["-disposition:v:1", "attached_pic"]
        }
        if extras.contains(.timecode) { options += ["-timecode", "00:00:10:00"] }
        if extras.contains(.attachment) {
            try Data("<gpx><trk><trkpt lat=\"48.85\" lon=\"2.35\"/></trk></gpx>\n".utf8)
                .write(to: folder.appendingPathComponent("track.gpx"))
            options += ["-attach", "track.gpx", "-metadata:s:t", "mimetype=application/gpx+xml"]
        }
        switch layout.container {
        case .mov: options += ["-f", "mov"]
        case .mp4: options += ["-f", "mp4"]
        case .fmp4: options += ["-f", "mp4", "-movflags", "frag_keyframe+empty_moov+default_base_moof"]
        case .mkv: options += ["-f", "matroska"]
        case .ts: options += ["-f", "mpegts"]
        }
        try runFFmpeg(inputs + maps + options + [name], in: folder)
        let url = folder.appendingPathComponent(name)
        var bytes = [UInt8](try Data(contentsOf: url))
        for extra in layout.extras { try edit(&bytes, extra) }
        try Data(bytes).write(to: url)
    }

    private func edit(_ bytes: inout [UInt8], _ extra: ByteAccountingInvariantTests.Extra) throws {
        switch extra {
        case .hidePictureStart: try hide(&bytes, handler: "vide", start: true)
        case .hidePictureEnd: try hide(&bytes, handler: "vide", start: false)
        case .hideSoundStart: try hide(&bytes, handler: "soun", start: true)
        case .hideSoundEnd: try hide(&bytes, handler: "soun", start: false)
        case .trailer:
            // Where Samsung's SEF and Insta360's gyro data sit: after the last box.
            var state: UInt32 = 12345
            bytes += (0..<(150 * 1024)).map { _ in
                state = state &* 1_103_515_245 &+ 12345
                return UInt8(truncatingIfNeeded: state >> 16)
            }
        case .uuidBox: bytes += box("uuid", Array(repeating: 0xAB, count: 16) + Array("<NonRealTimeMeta/>".utf8))
        case .freeWithData: bytes += box("free", Array("an editor's leftover bytes".utf8))
        case .freeZero: bytes += box("free", Array(repeating: 0, count: 64))
        case .udtaText: bytes += box("udta", box("\u{A9}cmt", [0, 7, 0x15, 0xC7] + Array("a trip.".utf8)))
        case .udtaBinary: bytes += box("udta", box("smta", [0, 0, 0, 1, 9, 9, 9, 9]))
        case .metaText: bytes += meta(type: 1, Array("a title".utf8))
        case .metaBinary: bytes += meta(type: 0, [1, 2, 3, 4, 5, 6, 7, 8])
        case .moovUserData:
            let moov = try child(bytes, 0..<bytes.count, "moov")
            insert(&bytes, box("udta", box("smta", [0, 0, 0, 1, 7, 7, 7, 7])), at: moov.upperBound, growing: [moov.lowerBound])
        case .secondLayer:
            // An H.264 MVC configuration in the picture's sample entry: a second view.
            let moov = try child(bytes, 0..<bytes.count, "moov")
            let trak = try track(bytes, moov, handler: "vide")
            let mdia = try child(bytes, body(trak), "mdia")
            let minf = try child(bytes, body(mdia), "minf")
            let stbl = try child(bytes, body(minf), "stbl")
            let stsd = try child(bytes, body(stbl), "stsd")
            let entry = stsd.lowerBound + 16
            let entryEnd = entry + Int(number(bytes, entry, 4))
            insert(
                &bytes, box("mvcC", [1, 118, 0, 31, 0xFF, 0xE0, 0]), at: entryEnd,
                growing: [moov.lowerBound, trak.lowerBound, mdia.lowerBound, minf.lowerBound, stbl.lowerBound, stsd.lowerBound, entry])
        case .tableTail:
            // Bytes past the entries of the picture's time-to-sample table.
            let moov = try child(bytes, 0..<bytes.count, "moov")
            let trak = try track(bytes, moov, handler: "vide")
            let mdia = try child(bytes, body(trak), "mdia")
            let minf = try child(bytes, body(mdia), "minf")
            let stbl = try child(bytes, body(minf), "stbl")
            let stts = try child(bytes, body(stbl), "stts")
            insert(
                &bytes, Array("a maker's bytes past the table".utf8), at: stts.upperBound,
                growing: [moov.lowerBound, trak.lowerBound, mdia.lowerBound, minf.lowerBound, stbl.lowerBound, stts.lowerBound])
        case .nullData:
            let payload = Array("data in a null packet ".utf8)
            for _ in 0..<10 { bytes += [0x47, 0x1F, 0xFF, 0x10] + (0..<184).map { payload[$0 % payload.count] } }
        case .voidData: bytes += [0xEC, 0x80 | 20] + Array("an old tag's bytes...".utf8.prefix(20))
        case .voidZero: bytes += [0xEC, 0x80 | 20] + Array(repeating: 0, count: 20)
        case .secondSound, .subtitle, .timecode, .cover, .attachment, .longSound: break
        }
    }

    /// A top-level MP4 `meta` with one `ilst` tag (©nam) of data type `type`.
    private func meta(type: UInt8, _ value: [UInt8]) -> [UInt8] {
        let handler = box("hdlr", [0, 0, 0, 0] + [0, 0, 0, 0] + Array("mdir".utf8) + Array(repeating: 0, count: 13))
        let data = box("data", [0, 0, 0, type, 0, 0, 0, 0] + value)
        return box("meta", [0, 0, 0, 0] + handler + box("ilst", box("\u{A9}nam", data)))
    }

    /// Shortens the edit list of the track with `handler` by one second, at its start or end.
    private func hide(_ bytes: inout [UInt8], handler: String, start: Bool) throws {
        let moov = try child(bytes, 0..<bytes.count, "moov")
        let mvhd = try child(bytes, body(moov), "mvhd")
        let movieScale = Int64(number(bytes, mvhd.lowerBound + 20, 4))
        let trak = try track(bytes, moov, handler: handler)
        let mdhd = try child(bytes, body(try child(bytes, body(trak), "mdia")), "mdhd")
        let mediaScale = Int64(number(bytes, mdhd.lowerBound + 20, 4))
        let elst = try child(bytes, body(try child(bytes, body(trak), "edts")), "elst")
        guard bytes[elst.lowerBound + 8] == 0 else { throw InspectError("a version 1 edit list") }
        // The last entry: the one that shows media (an empty edit, a delay, may come first).
        let count = Int(number(bytes, elst.lowerBound + 12, 4))
        let entry = elst.lowerBound + 16 + (count - 1) * 12
        let duration = Int64(number(bytes, entry, 4)), mediaTime = Int64(Int32(bitPattern: UInt32(number(bytes, entry + 4, 4))))
        put(&bytes, UInt32(duration - movieScale), at: entry)
        if start { put(&bytes, UInt32(mediaTime + mediaScale), at: entry + 4) }
    }

    private func track(_ bytes: [UInt8], _ moov: Range<Int>, handler: String) throws -> Range<Int> {
        for trak in children(bytes, body(moov)) where name(bytes, trak) == "trak" {
            let mdia = try child(bytes, body(trak), "mdia")
            let hdlr = try child(bytes, body(mdia), "hdlr")
            if String(decoding: bytes[(hdlr.lowerBound + 16)..<(hdlr.lowerBound + 20)], as: UTF8.self) == handler { return trak }
        }
        throw InspectError("no \(handler) track")
    }

    // MARK: bytes

    private func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        let name = type.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) } + name + payload
    }

    private func number(_ bytes: [UInt8], _ at: Int, _ count: Int) -> UInt64 {
        bytes[at..<(at + count)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    private func put(_ bytes: inout [UInt8], _ value: UInt32, at: Int) {
        for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) }
    }

    private func name(_ bytes: [UInt8], _ box: Range<Int>) -> String {
        String(decoding: bytes[(box.lowerBound + 4)..<(box.lowerBound + 8)], as: UTF8.self)
    }

    private func body(_ box: Range<Int>) -> Range<Int> { (box.lowerBound + 8)..<box.upperBound }

    private func children(_ bytes: [UInt8], _ range: Range<Int>) -> [Range<Int>] {
        var found: [Range<Int>] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            let size = Int(number(bytes, offset, 4))
            guard size >= 8, offset + size <= range.upperBound else { break }
            found.append(offset..<(offset + size))
            offset += size
        }
        return found
    }

    private func child(_ bytes: [UInt8], _ range: Range<Int>, _ type: String) throws -> Range<Int> {
        guard let found = children(bytes, range).first(where: { name(bytes, $0) == type }) else {
            throw InspectError("no '\(type)' box")
        }
        return found
    }

    /// Inserts `inserted` at `offset`, growing the 32-bit size of each box whose header is at
    /// one of `growing`.
    private func insert(_ bytes: inout [UInt8], _ inserted: [UInt8], at offset: Int, growing: [Int]) {
        for header in growing { put(&bytes, UInt32(number(bytes, header, 4)) + UInt32(inserted.count), at: header) }
        bytes.insert(contentsOf: inserted, at: offset)
    }
}
