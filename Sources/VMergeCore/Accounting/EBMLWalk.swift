import Foundation

/// The walk of a Matroska/WebM file's elements for --delete-sources (see `ContainerMap`): the
/// EBML header, the segment's headers, track entries, cue index and cluster headers are
/// structure; a block's payload belongs to its track (accounted for when the track is carried);
/// `Void` is structure when it holds only zeros; tags are structure when they are text.
/// Attachments, chapters, binary tags, block additions and elements not known here hold what no
/// output carries.
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
        static let tag: UInt64 = 0x7373, targets: UInt64 = 0x63C0, simpleTag: UInt64 = 0x67C8
        static let tagString: UInt64 = 0x4487, attachedFile: UInt64 = 0x61A7, fileName: UInt64 = 0x466E
    }
    /// Whole elements that are structure: the segment's headers and index, a cluster's own
    /// fields, a block group's fields but its block and additions.
    private static let structure: Set<UInt64> = [
        ID.seekHead, ID.info, ID.tracks, ID.cues, ID.crc,
        0xE7, 0xA7, 0xAB, 0x5854,  // cluster: Timestamp, Position, PrevSize, SilentTracks
        0x9B, 0xFA, 0xFB, 0xFD, 0xA4, 0x75A2, 0x8E, 0xC8, 0xC9, 0xCA, 0xCB, 0xCC, 0xCD, 0xCE, 0xCF, 0xE8,  // block group fields
        0x45A3, 0x447A, 0x447B, 0x4484, 0x44B4,  // tag: name, language, default
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
                map.add(element.range, .structure)
            case ID.segment:
                map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
                segment(element.payload)
            case ID.void:
                void(element)
            default:
                map.add(element.range, .nothing("in an element 0x\(String(element.id, radix: 16, uppercase: true)) at the top level"))
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

    private mutating func segment(_ payload: Range<Int64>) {
        var offset = payload.lowerBound
        while offset < payload.upperBound {
            guard var element = element(at: offset, within: offset..<payload.upperBound) else {
                map.add(offset..<payload.upperBound, .nothing("in the segment after its last element"))
                return
            }
            switch element.id {
            case _ where EBMLWalk.structure.contains(element.id):
                map.add(element.range, .structure)
            case ID.void:
                void(element)
            case ID.cluster:
                element.range = cluster(element)
            case ID.tags:
                map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
                tags(element.payload)
            case ID.attachments:
                attachments(element)
            case ID.chapters:
                map.add(element.range, .nothing("in its chapters"))
            default:
                map.add(element.range, .nothing("in an element 0x\(String(element.id, radix: 16, uppercase: true)) of its segment"))
            }
            guard element.range.upperBound > offset else { return }
            offset = element.range.upperBound
        }
    }

    /// A cluster's fields and blocks; returns the bytes it took (to its size, or for a size
    /// left unknown to the first element that is not a cluster's).
    private mutating func cluster(_ cluster: Element) -> Range<Int64> {
        map.add(cluster.range.lowerBound..<cluster.payload.lowerBound, .structure)
        var offset = cluster.payload.lowerBound
        while offset < cluster.payload.upperBound {
            guard let element = element(at: offset, within: offset..<cluster.payload.upperBound) else {
                map.add(offset..<cluster.payload.upperBound, .nothing("in a cluster after its last element"))
                return cluster.range
            }
            switch element.id {
            case ID.simpleBlock:
                block(element)
            case ID.blockGroup:
                map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
                blockGroup(element.payload)
            case ID.void:
                void(element)
            case _ where EBMLWalk.structure.contains(element.id) && element.id != ID.seekHead:
                map.add(element.range, .structure)
            default:
                if cluster.sizeUnknown { return cluster.range.lowerBound..<offset }
                map.add(element.range, .nothing("in an element 0x\(String(element.id, radix: 16, uppercase: true)) of a cluster"))
            }
            offset = element.range.upperBound
        }
        return cluster.range
    }

    private mutating func blockGroup(_ payload: Range<Int64>) {
        var offset = payload.lowerBound
        while offset < payload.upperBound {
            guard let element = element(at: offset, within: offset..<payload.upperBound) else {
                map.add(offset..<payload.upperBound, .nothing("in a block group after its last element"))
                return
            }
            if element.id == ID.block {
                block(element)
            } else if EBMLWalk.structure.contains(element.id) {
                map.add(element.range, .structure)
            } else {
                // Block additions (0x75A1) carry data beside the picture (an alpha channel, a
                // Dolby Vision layer): no output holds them.
                map.add(element.range, .nothing("in an element 0x\(String(element.id, radix: 16, uppercase: true)) of a block group"))
            }
            offset = element.range.upperBound
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
        var offset = payload.lowerBound
        while offset < payload.upperBound {
            guard let element = element(at: offset, within: offset..<payload.upperBound) else {
                map.add(offset..<payload.upperBound, .nothing("in its tags after their last element"))
                return
            }
            switch element.id {
            case ID.tag, ID.simpleTag:
                map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
                tags(element.payload)
            case ID.targets:
                map.add(element.range, .structure)
            case ID.tagString where element.payload.count <= 4096:
                map.add(element.range, .structure)
            case ID.void:
                void(element)
            case _ where EBMLWalk.structure.contains(element.id):
                map.add(element.range, .structure)
            default:
                map.add(element.range, .nothing("in a tag that holds binary data"))
            }
            offset = element.range.upperBound
        }
    }

    /// Attachments: each file attached (a GPX track, a second video) is named.
    private mutating func attachments(_ element: Element) {
        map.add(element.range.lowerBound..<element.payload.lowerBound, .structure)
        var offset = element.payload.lowerBound
        while offset < element.payload.upperBound,
            let file = self.element(at: offset, within: offset..<element.payload.upperBound)
        {
            if file.id == ID.crc {
                map.add(file.range, .structure)
            } else if file.id == ID.void {
                void(file)
            } else {
                let name = file.id == ID.attachedFile ? fileName(file) : nil
                map.add(file.range, .nothing(name.map { "in its attachment '\(VisibleText.of($0))'" } ?? "in its attachments"))
            }
            offset = file.range.upperBound
        }
        if offset < element.payload.upperBound { map.add(offset..<element.payload.upperBound, .nothing("in its attachments")) }
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
