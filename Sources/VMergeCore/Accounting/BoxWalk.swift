import Foundation

/// The walk of an MP4/QuickTime file's boxes for --delete-sources (see `ContainerMap`): headers
/// and sample tables are structure as long as their fields and entries (`BoxFields`), an
/// `mdat`'s payload is media data for the samples to account for, `free`/`skip`/`wide` padding
/// is structure only when it holds nothing but zeros, codec set-up and handler names are
/// description, and user data and metadata boxes are description only as tags that hold text or
/// numbers. Every other box, and whatever follows the last box, holds something no output
/// carries.
struct BoxWalk {
    private let bytes: FileBytes
    private var map = ContainerMap()
    /// The sample count of the sample table being walked (its `sdtp` has a byte for each).
    private var samples: Int64?

    init(_ bytes: FileBytes) { self.bytes = bytes }

    /// Boxes that hold only other boxes.
    private static let containers: Set<String> = [
        "moov", "trak", "mdia", "minf", "stbl", "dinf", "edts", "mvex", "moof", "traf", "mfra",
    ]
    /// Boxes of the container's own that are read whole but not taken apart: brands, codec
    /// set-up (sample descriptions), handler names, references, sample groups, encryption
    /// data. Description: structure within `ContainerMap.descriptionBudget`.
    private static let described: Set<String> = [
        "ftyp", "styp", "pdin", "iods", "tref", "tapt", "load", "imap", "txas", "clip", "matt", "hdlr", "elng",
        "gmhd", "dref", "stsd", "sgpd", "subs", "saiz", "saio", "padb", "stsh", "stdp", "leva", "trep", "senc",
        "pssh", "ssix", "prft",
    ]
    private static let padding: Set<String> = ["free", "skip", "wide"]
    /// The 3GPP user-data tags: text, a place, a rating.
    private static let textTags: Set<String> = [
        "titl", "dscp", "cprt", "perf", "auth", "gnre", "albm", "yrrc", "loci", "kywd", "rtng", "clsf", "name",
    ]
    /// A descriptive tag is short; anything longer is data.
    private static let tagLimit: Int64 = 4096
    /// Sample-entry boxes that say a track holds a second picture layer (MV-HEVC: an iPhone
    /// spatial video's other eye; H.264 MVC), which vmerge does not decode.
    private static let layerMarks: [[UInt8]] = ["lhvC", "mvcC"].map { Array($0.utf8) }

    struct Box {
        var type: String
        var range: Range<Int64>
        var payload: Range<Int64>
    }

    consuming func walk() -> ContainerMap {
        var offset: Int64 = 0
        while offset < bytes.size {
            guard let box = box(at: offset, within: offset..<bytes.size) else {
                map.add(offset..<bytes.size, .nothing("after the last box"))
                break
            }
            visit(box, in: [])
            offset = box.range.upperBound
        }
        return map
    }

    /// The box whose header is at `offset`, if it is whole within `bounds`.
    private func box(at offset: Int64, within bounds: Range<Int64>) -> Box? {
        guard let header = bytes.boxHeader(at: offset, endingBy: bounds.upperBound),
            header.size >= UInt64(header.headerSize), header.size <= UInt64(bounds.upperBound - offset)
        else { return nil }
        let end = offset + Int64(header.size)
        return Box(type: BoxWalk.name(header.type), range: offset..<end, payload: (offset + header.headerSize)..<end)
    }

    /// A box type as text: printable ASCII as it is, any other byte as \xNN (`©xyz` is `\xA9xyz`).
    static func name<Bytes: Collection>(_ type: Bytes) -> String where Bytes.Element == UInt8 {
        type.map { (0x20...0x7E).contains($0) ? String(UnicodeScalar($0)) : String(format: "\\x%02X", $0) }.joined()
    }

    private static func place(_ path: [String]) -> String {
        path.isEmpty ? "at the top level" : "in " + path.joined(separator: "/")
    }

    private mutating func children(of box: Box, from start: Int64, in path: [String], visit: (inout BoxWalk, Box, [String]) -> Void) {
        var offset = start
        let inside = path + [box.type]
        while offset < box.payload.upperBound {
            guard let child = self.box(at: offset, within: offset..<box.payload.upperBound) else {
                // QuickTime ends some lists with four zero bytes; anything else is unexplained.
                let rest = offset..<box.payload.upperBound
                map.add(rest, bytes.isZero(rest) ? .structure : .nothing("in \(inside.joined(separator: "/")) after its last box"))
                return
            }
            visit(&self, child, inside)
            offset = child.range.upperBound
        }
    }

    private mutating func visit(_ box: Box, in path: [String]) {
        switch box.type {
        case "mdat":
            map.add(box.range.lowerBound..<box.payload.lowerBound, .structure)
            map.add(box.payload, .samples)
        case "stsd":
            let description = bytes.read(box.payload.lowerBound, Int(min(box.payload.count, 1 << 20)))
            if let mark = BoxWalk.layerMarks.first(where: { description.contains(subsequence: $0) }) {
                map.add(
                    box.range,
                    .nothing(
                        "in \((path + [box.type]).joined(separator: "/")) (a track with a second picture layer, "
                            + "\(String(decoding: mark, as: UTF8.self)), such as a spatial video's other view)"))
            } else {
                map.add(box.range, .description("in a 'stsd' box \(BoxWalk.place(path))"))
            }
        case _ where BoxFields.measured.contains(box.type):
            measure(box, in: path)
        case _ where BoxWalk.described.contains(box.type):
            map.add(box.range, .description("in a '\(box.type)' box \(BoxWalk.place(path))"))
        case _ where BoxWalk.containers.contains(box.type):
            map.add(box.range.lowerBound..<box.payload.lowerBound, .structure)
            if box.type == "stbl" { samples = sampleCount(of: box) }
            children(of: box, from: box.payload.lowerBound, in: path) { $0.visit($1, in: $2) }
        case _ where BoxWalk.padding.contains(box.type):
            pad(box, in: path)
        case "udta":
            map.add(box.range.lowerBound..<box.payload.lowerBound, .structure)
            children(of: box, from: box.payload.lowerBound, in: path) { $0.userData($1, in: $2) }
        case "meta":
            meta(box, in: path)
        default:
            map.add(box.range, .nothing("in a '\(box.type)' box \(BoxWalk.place(path))"))
        }
    }

    /// A box as long as its fields say: the rest is no field of it, structure only as zeros.
    private mutating func measure(_ box: Box, in path: [String]) {
        let head = bytes.read(box.payload.lowerBound, 64)
        guard let length = BoxFields.length(of: box.type, head: head, samples: samples), head.first ?? 0 <= 1,
            length <= box.payload.count
        else {
            // A version no reader knows, or fields that do not fit the box: what it holds is not
            // what a table holds.
            map.add(box.range, .nothing("in a '\(box.type)' box \(BoxWalk.place(path)) whose fields do not fit it"))
            return
        }
        guard length < box.payload.count else {
            map.add(box.range, .structure)
            return
        }
        let fields = box.range.lowerBound..<(box.payload.lowerBound + length)
        let rest = fields.upperBound..<box.range.upperBound
        map.add(fields, .structure)
        map.add(rest, bytes.isZero(rest) ? .structure : .nothing("past the fields of the '\(box.type)' box \(BoxWalk.place(path))"))
    }

    /// The sample count a sample table's `stsz` or `stz2` gives.
    private func sampleCount(of table: Box) -> Int64? {
        var offset = table.payload.lowerBound
        while let child = box(at: offset, within: offset..<table.payload.upperBound) {
            if child.type == "stsz" || child.type == "stz2" {
                let head = bytes.read(child.payload.lowerBound, 12)
                return head.count == 12 ? Int64(FileBytes.number(head, 8, 4)) : nil
            }
            offset = child.range.upperBound
        }
        return nil
    }

    private mutating func pad(_ box: Box, in path: [String]) {
        map.add(box.range.lowerBound..<box.payload.lowerBound, .structure)
        map.add(
            box.payload,
            bytes.isZero(box.payload) ? .structure : .nothing("in a '\(box.type)' box \(BoxWalk.place(path)) that holds data"))
    }

    /// A child of `udta`: a descriptive tag (QuickTime's ©-text items, 3GPP's text tags), a
    /// metadata box, padding, or something else.
    private mutating func userData(_ box: Box, in path: [String]) {
        let short = box.payload.count <= BoxWalk.tagLimit
        if box.type.hasPrefix("\\xA9") && short {
            map.add(
                box.range,
                isQuickTimeText(box.payload) ? .description("in the tag '\(box.type)' \(BoxWalk.place(path))") : .nothing("in the tag '\(box.type)' \(BoxWalk.place(path)) (not text)"))
        } else if BoxWalk.textTags.contains(box.type) && short {
            map.add(
                box.range,
                is3GPPText(box)
                    ? .description("in the tag '\(box.type)' \(BoxWalk.place(path))")
                    : .nothing("in the tag '\(box.type)' \(BoxWalk.place(path)) (not text)"))
        } else if box.type == "meta" {
            meta(box, in: path)
        } else if BoxWalk.padding.contains(box.type) {
            pad(box, in: path)
        } else {
            map.add(box.range, .nothing("in a '\(box.type)' box \(BoxWalk.place(path))"))
        }
    }

    /// `meta`: its handler and keys are description, each `ilst` item a tag (see `item`), anything
    /// else (XML, item data of an image file) holds data.
    private mutating func meta(_ box: Box, in path: [String]) {
        // MP4's meta is a full box (four bytes of version and flags); QuickTime's is not.
        let peek = bytes.read(box.payload.lowerBound, 8)
        let isFull = FileBytes.number(peek, 0, 4) == 0 && peek.count == 8
        let start = box.payload.lowerBound + (isFull ? 4 : 0)
        map.add(box.range.lowerBound..<start, .structure)
        var keys: [String] = []
        children(of: box, from: start, in: path) { walk, child, inside in
            switch child.type {
            case "hdlr":
                walk.map.add(child.range, .description("in a 'hdlr' box \(BoxWalk.place(inside))"))
            case "keys":
                walk.map.add(child.range, .description("in a 'keys' box \(BoxWalk.place(inside))"))
                keys = walk.keyNames(child)
            case "ilst":
                walk.map.add(child.range.lowerBound..<child.payload.lowerBound, .structure)
                walk.children(of: child, from: child.payload.lowerBound, in: inside) { walk, item, _ in
                    walk.item(item, keys: keys)
                }
            case _ where BoxWalk.padding.contains(child.type):
                walk.pad(child, in: inside)
            default:
                walk.map.add(child.range, .nothing("in a '\(child.type)' box \(BoxWalk.place(inside))"))
            }
        }
    }

    /// The names a QuickTime `keys` box lists, in order (an `ilst` item's type is its key's
    /// number, from 1).
    private func keyNames(_ box: Box) -> [String] {
        let payload = bytes.read(box.payload.lowerBound, Int(min(box.payload.count, 1 << 20)))
        var names: [String] = []
        var index = 8
        let count = FileBytes.number(payload, 4, 4)
        while names.count < min(Int(count), 4096), index + 8 <= payload.count {
            let size = Int(FileBytes.number(payload, index, 4))
            guard size >= 8, index + size <= payload.count else { break }
            names.append(String(decoding: payload[(index + 8)..<(index + size)], as: UTF8.self))
            index += size
        }
        return names
    }

    /// One `ilst` item: a tag whose every value is short text or a number describes the file;
    /// a picture (cover art) or binary data is something no output carries.
    private mutating func item(_ box: Box, keys: [String]) {
        let typeBytes = bytes.read(box.range.lowerBound + 4, 4)
        let number = Int(FileBytes.number(typeBytes, 0, 4))
        let name = number >= 1 && number <= keys.count ? VisibleText.of(keys[number - 1]) : BoxWalk.name(typeBytes)
        var describes = box.payload.count <= BoxWalk.tagLimit + 64
        var offset = box.payload.lowerBound
        while describes, offset < box.payload.upperBound {
            guard let value = self.box(at: offset, within: offset..<box.payload.upperBound) else {
                describes = false
                break
            }
            if value.type == "data" {
                describes = describesInData(value)
            } else if value.type != "mean" && value.type != "name" {
                describes = false
            }
            offset = value.range.upperBound
        }
        map.add(box.range, describes ? .description("in the tag '\(name)'") : .nothing("in the tag '\(name)' (binary data, such as a picture)"))
    }

    /// Whether a tag's `data` box holds what its type says: UTF-8 text that is text, UTF-16 of
    /// whole units, a number of its type's width (a type that says text over binary bytes is
    /// not believed).
    private func describesInData(_ value: Box) -> Bool {
        let payload = bytes.read(value.payload.lowerBound, Int(min(Int64(value.payload.count), BoxWalk.tagLimit + 8)))
        guard payload.count >= 8, Int64(value.payload.count) <= BoxWalk.tagLimit + 8 else { return false }
        let content = Array(payload[8...])
        switch FileBytes.number(payload, 1, 3) {
        case 1, 4: return BoxWalk.isText(content)
        case 2, 5: return content.count % 2 == 0
        case 3: return !content.contains(0)
        case 21, 22: return content.count <= 8
        case 23, 67, 77: return content.count == 4
        case 24, 74, 78, 70, 71: return content.count == 8
        case 65, 75: return content.count == 1
        case 66, 76: return content.count == 2
        case 72: return content.count == 16
        case 79: return content.count == 36
        default: return false
        }
    }

    /// Text as a tag holds it: valid UTF-8, no control characters but tab and line ends.
    static func isText(_ bytes: [UInt8]) -> Bool {
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return !text.unicodeScalars.contains { $0.value < 0x20 && !["\t", "\n", "\r"].contains($0) || $0.value == 0x7F }
    }

    /// A 3GPP tag that is one string (title, description, copyright, performer, author, genre,
    /// album): version and flags, a language, then UTF-8 or UTF-16 (with its byte-order mark)
    /// to a NUL. The other 3GPP tags (a place, a year, a rating) mix numbers and text and are
    /// left to the description's budget.
    private func is3GPPText(_ box: Box) -> Bool {
        guard ["titl", "dscp", "cprt", "perf", "auth", "gnre", "albm"].contains(box.type) else { return true }
        let data = bytes.read(box.payload.lowerBound, Int(box.payload.count))
        guard data.count >= 6 else { return false }
        let text = Array(data[6...].reversed().drop { $0 == 0 }.reversed())
        if text.starts(with: [0xFE, 0xFF]) || text.starts(with: [0xFF, 0xFE]) { return text.count % 2 == 0 }
        return BoxWalk.isText(text)
    }

    /// A QuickTime ©-tag's payload: records of a 16-bit length, a 16-bit language and that many
    /// bytes of text, to its end (a trailing NUL is allowed); the text in a Mac encoding or
    /// UTF-8, so only its bytes below 0x20 are checked.
    private func isQuickTimeText(_ payload: Range<Int64>) -> Bool {
        let data = bytes.read(payload.lowerBound, Int(payload.count))
        var index = 0
        while index + 4 <= data.count {
            let length = Int(FileBytes.number(data, index, 2))
            let text = data.dropFirst(index + 4).prefix(length)
            guard text.count == length else { return false }
            let body = text.last == 0 ? text.dropLast() : text
            if body.contains(where: { $0 < 0x20 && $0 != 9 && $0 != 10 && $0 != 13 }) { return false }
            index += 4 + length
        }
        return index == data.count
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the array.
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
