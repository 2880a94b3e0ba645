import Foundation

/// The walk of a Matroska/WebM file's elements for --delete-sources (see `ContainerMap`): element
/// headers, numbers (a cluster's timestamp, the cue index) and `Void` of zeros are structure;
/// the EBML header, the seek index, the segment's info and the track entries are description, so
/// are tags of short text; a block is accounted for when the demuxer read a sample of a carried
/// stream from it. Attachments, chapters, binary tags, block additions, a number longer than a
/// number and elements not known here hold what no output carries.
struct EBMLWalk {
    private let bytes: FileBytes
    /// Where the payload of each block the output carries starts.
    private let carried: Set<Int64>
    private var map = ContainerMap()

    init(_ bytes: FileBytes, carried: Set<Int64>) {
        self.bytes = bytes
        self.carried = carried
    }

    private enum ID {
        static let ebml: UInt64 = 0x1A45_DFA3, segment: UInt64 = 0x1853_8067, seekHead: UInt64 = 0x114D_9B74
        static let info: UInt64 = 0x1549_A966, tracks: UInt64 = 0x1654_AE6B, cues: UInt64 = 0x1C53_BB6B
        static let cluster: UInt64 = 0x1F43_B675, chapters: UInt64 = 0x1043_A770, tags: UInt64 = 0x1254_C367
        static let attachments: UInt64 = 0x1941_A469, void: UInt64 = 0xEC, crc: UInt64 = 0xBF
        static let simpleBlock: UInt64 = 0xA3, blockGroup: UInt64 = 0xA0, block: UInt64 = 0xA1
        static let tag: UInt64 = 0x7373, simpleTag: UInt64 = 0x67C8
        static let tagString: UInt64 = 0x4487, tagName: UInt64 = 0x45A3, attachedFile: UInt64 = 0x61A7, fileName: UInt64 = 0x466E
    }
    /// Numbers (at most 8 bytes): a cluster's Timestamp, Position, PrevSize; a block group's
    /// duration, references, priority, DiscardPadding; a tag's defaults; the cue index's times,
    /// tracks and positions. Structure as long as a number; past that, data.
    private static let numbers: Set<UInt64> = [
        0xE7, 0xA7, 0xAB, 0x9B, 0xFA, 0xFB, 0xFD, 0x75A2, 0x4484, 0x44B4,
        0xB3, 0xF7, 0xF1, 0xF0, 0xB2, 0x5378, 0xEA, 0x96, 0x58D7,
    ]
    /// Read whole, not taken apart: the EBML header, the seek index, the segment's info, the
    /// track entries (codec set-up), a block group's codec state and slices, a tag's targets and
    /// language. Description: structure within `ContainerMap.descriptionBudget`.
    private static let described: Set<UInt64> = [
        ID.ebml, ID.seekHead, ID.info, ID.tracks, 0xA4, 0x8E, 0xC8, 0xC9, 0xCA, 0xCB, 0xCC, 0xCD, 0xCE, 0xCF, 0xE8,
        0x63C0, 0x447A, 0x447B,
    ]
    /// Elements that hold only other elements: the cue index's points, their track positions and
    /// references, a cluster's silent tracks.
    private static let lists: Set<UInt64> = [ID.cues, 0xBB, 0xB7, 0xDB, 0x5854]
    /// The segment's own elements: one ends a cluster of unknown size.
    private static let segmentLevel: Set<UInt64> = [
        ID.seekHead, ID.info, ID.tracks, ID.cues, ID.cluster, ID.chapters, ID.tags, ID.attachments,
    ]

    struct Element {
        var id: UInt64
        var range: Range<Int64>
        var payload: Range<Int64>
        /// The size field said "unknown" (a live recording): it runs until an element that
        /// cannot be inside it.
        var sizeUnknown: Bool
    }

    consuming func walk() -> ContainerMap {
        var offset: Int64 = 0
        while offset < bytes.size {
            guard let element = element(at: offset, within: offset..<bytes.size) else {
                map.add(offset..<bytes.size, .nothing("after the last element"))
                break
            }
            switch element.id {
            case ID.ebml:
                map.add(element.range, .description("in the EBML header"))
            case ID.segment:
                map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
                segment(element.payload)
            case ID.void:
                void(element)
            default:
                map.add(element.range, .nothing("in an element \(EBMLWalk.named(element.id)) at the top level"))
            }
            offset = element.range.upperBound
        }
        return map
    }

    /// A variable-length integer at `index` of `data`: its value (the length marker removed
    /// when `keepMarker` is false) and length; nil when malformed.
    private static func vint(_ data: [UInt8], _ index: Int, keepMarker: Bool) -> (value: UInt64, length: Int)? {
        guard index < data.count, data[index] != 0 else { return nil }
        let length = data[index].leadingZeroBitCount + 1
        guard index + length <= data.count else { return nil }
        var value = UInt64(keepMarker ? data[index] : data[index] & (0xFF >> length))
        for byte in data[(index + 1)..<(index + length)] { value = value << 8 | UInt64(byte) }
        return (value, length)
    }

    private func element(at offset: Int64, within bounds: Range<Int64>) -> Element? {
        let header = bytes.read(offset, 12)
        guard let id = EBMLWalk.vint(header, 0, keepMarker: true), id.length <= 4,
            let size = EBMLWalk.vint(header, id.length, keepMarker: false)
        else { return nil }
        let headerSize = Int64(id.length + size.length)
        let unknown = size.value == (UInt64(1) << (7 * UInt64(size.length))) - 1
        let end: Int64
        if unknown {
            end = bounds.upperBound
        } else {
            guard size.value <= UInt64(bounds.upperBound - offset - headerSize) else { return nil }
            end = offset + headerSize + Int64(size.value)
        }
        return Element(id: id.value, range: offset..<end, payload: (offset + headerSize)..<end, sizeUnknown: unknown)
    }

    private mutating func void(_ element: Element) {
        map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
        map.add(element.payload, bytes.isZero(element.payload) ? .structure : .nothing("in a Void element that holds data"))
    }

    /// The elements every level may hold, measured: Void as fill, a CRC-32 as four bytes, a
    /// number as at most eight, description, lists of these. False for any other element.
    private mutating func field(_ element: Element, in place: String) -> Bool {
        let size = element.payload.count
        switch element.id {
        case ID.void: void(element)
        case ID.crc: map.add(element.range, size == 4 ? .structure : .nothing("in a CRC-32 element \(place) that holds data"))
        case _ where EBMLWalk.numbers.contains(element.id):
            map.add(element.range, size <= 8 ? .structure : .nothing("in an element \(EBMLWalk.named(element.id)) \(place) that holds data"))
        case _ where EBMLWalk.described.contains(element.id): map.add(element.range, .description("in an element \(EBMLWalk.named(element.id)) \(place)"))
        case _ where EBMLWalk.lists.contains(element.id):
            map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
            elements(of: element.payload, after: "an element \(EBMLWalk.named(element.id))") { walk, inner in
                if !walk.field(inner, in: place) {
                    walk.map.add(inner.range, .nothing("in an element \(EBMLWalk.named(inner.id)) \(place)"))
                }
                return inner.range.upperBound
            }
        default: return false
        }
        return true
    }

    /// Hands each element of `payload` to `each`, which returns where the next one starts (its
    /// own start to stop there: a cluster of unknown size ends at an element not its own);
    /// bytes after the last whole element hold what no output carries (`after` says whose).
    /// Returns where it stopped.
    @discardableResult
    private mutating func elements(
        of payload: Range<Int64>, after: String, _ each: (inout EBMLWalk, Element) -> Int64
    ) -> Int64 {
        var offset = payload.lowerBound
        while offset < payload.upperBound {
            guard let element = element(at: offset, within: offset..<payload.upperBound) else {
                map.add(offset..<payload.upperBound, .nothing("in \(after) after its last element"))
                return payload.upperBound
            }
            let next = each(&self, element)
            guard next > offset else { return offset }
            offset = next
        }
        return offset
    }

    private static func named(_ id: UInt64) -> String { "0x" + String(id, radix: 16, uppercase: true) }

    private mutating func segment(_ payload: Range<Int64>) {
        elements(of: payload, after: "the segment") { walk, element in
            switch element.id {
            case _ where walk.field(element, in: "of its segment"): break
            case ID.cluster: return walk.cluster(element)
            case ID.tags:
                walk.map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
                walk.tags(element.payload)
            case ID.attachments: walk.attachments(element)
            case ID.chapters: walk.map.add(element.range, .nothing("in its chapters"))
            default: walk.map.add(element.range, .nothing("in an element \(EBMLWalk.named(element.id)) of its segment"))
            }
            return element.range.upperBound
        }
    }

    /// A cluster's fields and blocks; returns where it ends (at its size, or for a size left
    /// unknown at the first element that is not a cluster's).
    private mutating func cluster(_ cluster: Element) -> Int64 {
        map.add(cluster.range.lowerBound..<cluster.payload.lowerBound, .structure)
        return elements(of: cluster.payload, after: "a cluster") { walk, element in
            // A cluster of unknown size ends where an element of the segment's own begins.
            if cluster.sizeUnknown && EBMLWalk.segmentLevel.contains(element.id) { return element.range.lowerBound }
            switch element.id {
            case ID.simpleBlock: walk.block(element)
            case ID.blockGroup:
                walk.map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
                walk.blockGroup(element.payload)
            case _ where walk.field(element, in: "of a cluster"): break
            default:
                if cluster.sizeUnknown { return element.range.lowerBound }
                walk.map.add(element.range, .nothing("in an element \(EBMLWalk.named(element.id)) of a cluster"))
            }
            return element.range.upperBound
        }
    }

    private mutating func blockGroup(_ payload: Range<Int64>) {
        elements(of: payload, after: "a block group") { walk, element in
            if element.id == ID.block {
                walk.block(element)
            } else if !walk.field(element, in: "of a block group") {
                // Block additions (0x75A1) carry data beside the picture (an alpha channel, a
                // Dolby Vision layer): no output holds them.
                walk.map.add(element.range, .nothing("in an element \(EBMLWalk.named(element.id)) of a block group"))
            }
            return element.range.upperBound
        }
    }

    /// A block: its header is structure, its payload its track's.
    private mutating func block(_ element: Element) {
        let head = bytes.read(element.payload.lowerBound, 8)
        guard let track = EBMLWalk.vint(head, 0, keepMarker: false), track.length + 3 <= element.payload.count else {
            map.add(element.range, .nothing("in a block that cannot be read"))
            return
        }
        let number = Int64(clamping: track.value)
        map.add(element.range, carried.contains(element.payload.lowerBound) ? .structure : .block(number))
    }

    private mutating func tags(_ payload: Range<Int64>) {
        elements(of: payload, after: "its tags") { walk, element in
            switch element.id {
            case ID.tag, ID.simpleTag:
                walk.map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
                walk.tags(element.payload)
            case ID.tagName, ID.tagString:
                let text = walk.bytes.read(element.payload.lowerBound, Int(min(element.payload.count, 4097)))
                walk.map.add(
                    element.range,
                    // A string element may end in NULs (ffmpeg pads its DURATION tag).
                    text.count <= 4096 && BoxWalk.isText(Array(text.reversed().drop { $0 == 0 }.reversed()))
                        ? .description("in a tag") : .nothing("in a tag that is not short text"))
            case _ where walk.field(element, in: "of its tags"): break
            default: walk.map.add(element.range, .nothing("in a tag that holds binary data"))
            }
            return element.range.upperBound
        }
    }

    /// Attachments: each file attached (a GPX track, a second video) is named.
    private mutating func attachments(_ element: Element) {
        map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
        elements(of: element.payload, after: "its attachments") { walk, file in
            if file.id != ID.crc && file.id != ID.void || !walk.field(file, in: "of its attachments") {
                let name = file.id == ID.attachedFile ? walk.fileName(file) : nil
                walk.map.add(file.range, .nothing(name.map { "in its attachment '\(VisibleText.of($0))'" } ?? "in its attachments"))
            }
            return file.range.upperBound
        }
    }

    private func fileName(_ file: Element) -> String? {
        var offset = file.payload.lowerBound
        while offset < file.payload.upperBound, let field = element(at: offset, within: offset..<file.payload.upperBound) {
            if field.id == ID.fileName {
                return String(decoding: bytes.read(field.payload.lowerBound, Int(min(field.payload.count, 1024))), as: UTF8.self)
            }
            offset = field.range.upperBound
        }
        return nil
    }
}
