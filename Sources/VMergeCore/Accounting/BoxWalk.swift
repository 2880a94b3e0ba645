import Foundation

/// The walk of an MP4/QuickTime file's boxes for --delete-sources (see `ContainerMap`): headers
/// and the index are structure, an `mdat`'s payload is media data for the samples to account
/// for, `free`/`skip`/`wide` padding is structure only when it holds nothing but zeros, and
/// user data and metadata boxes are structure only as descriptive tags. Every other box, and
/// whatever follows the last box, holds something no output carries.
struct BoxWalk {
    private let bytes: FileBytes
    private var map = ContainerMap()

    init(_ bytes: FileBytes) { self.bytes = bytes }

    /// Boxes that hold only other boxes.
    private static let containers: Set<String> = [
        "moov", "trak", "mdia", "minf", "stbl", "dinf", "edts", "mvex", "moof", "traf", "mfra",
    ]
    /// Boxes that are the container's own structure wherever they are: headers, sample tables,
    /// sample descriptions (codec set-up), fragment headers, references, segment indexes.
    private static let structure: Set<String> = [
        "ftyp", "styp", "pdin", "mvhd", "iods", "tkhd", "tref", "tapt", "load", "imap", "txas", "clip", "matt",
        "elst", "mdhd", "hdlr", "elng", "vmhd", "smhd", "hmhd", "nmhd", "gmhd", "sthd", "dref", "stsd", "stts",
        "ctts", "cslg", "stss", "stps", "sdtp", "stsc", "stsz", "stz2", "stco", "co64", "sgpd", "sbgp", "subs",
        "saiz", "saio", "padb", "stsh", "stdp", "mehd", "trex", "leva", "trep", "mfhd", "tfhd", "tfdt", "trun",
        "senc", "pssh", "sidx", "ssix", "tfra", "mfro", "prft",
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
        let header = bytes.read(offset, 16)
        guard header.count >= 8, bounds.upperBound - offset >= 8 else { return nil }
        var size = Int64(FileBytes.number(header, 0, 4))
        var headerSize: Int64 = 8
        if size == 1 {
            guard header.count >= 16 else { return nil }
            let large = FileBytes.number(header, 8, 8)
            guard large <= UInt64(Int64.max) else { return nil }
            size = Int64(large)
            headerSize = 16
        } else if size == 0 {
            size = bounds.upperBound - offset
        }
        guard size >= headerSize, size <= bounds.upperBound - offset else { return nil }
        return Box(type: BoxWalk.name(header[4..<8]), range: offset..<(offset + size), payload: (offset + headerSize)..<(offset + size))
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
                        "in \((path + [box.type]).joined(separator: "/")): a track with a second picture layer "
                            + "(\(String(decoding: mark, as: UTF8.self)), such as a spatial video's other view), which no output carries"))
            } else {
                map.add(box.range, .structure)
            }
        case _ where BoxWalk.structure.contains(box.type):
            map.add(box.range, .structure)
        case _ where BoxWalk.containers.contains(box.type):
            map.add(box.range.lowerBound..<box.payload.lowerBound, .structure)
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
        if box.type.hasPrefix("\\xA9") && short || BoxWalk.textTags.contains(box.type) && short {
            map.add(box.range, .structure)
        } else if box.type == "meta" {
            meta(box, in: path)
        } else if BoxWalk.padding.contains(box.type) {
            pad(box, in: path)
        } else {
            map.add(box.range, .nothing("in a '\(box.type)' box \(BoxWalk.place(path))"))
        }
    }

    /// `meta`: its handler and keys are structure, each `ilst` item a tag (see `item`), anything
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
                walk.map.add(child.range, .structure)
            case "keys":
                walk.map.add(child.range, .structure)
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

    /// Well-known `data` types of a tag that are text or numbers (ISO 14496-12's and Apple's
    /// lists): UTF-8/16 and their sort forms, S/JIS, integers, floats, points, sizes, rectangles.
    private static let describingTypes: Set<UInt64> = [1, 2, 3, 4, 5, 21, 22, 23, 24, 65, 66, 67, 70, 71, 72, 74, 75, 76, 77, 78, 79]

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
                let header = bytes.read(value.payload.lowerBound, 4)
                describes = header.count == 4 && BoxWalk.describingTypes.contains(FileBytes.number(header, 1, 3))
            } else if value.type != "mean" && value.type != "name" {
                describes = false
            }
            offset = value.range.upperBound
        }
        map.add(box.range, describes ? .structure : .nothing("in the tag '\(name)' (binary data, such as a picture)"))
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
