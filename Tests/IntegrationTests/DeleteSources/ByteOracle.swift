import Foundation
import TestSupport

/// The test's own account of a source's bytes, independent of vmerge's (`ByteAccount`,
/// `ContainerMap`): ffprobe's packets (stream, position, size, flags, time) and a walk of boxes,
/// elements or transport packets written here from the formats' specifications. It answers which
/// bytes are neither in a shown sample of a stream the output carries (the picture, one sound
/// track, a timecode; the encoder's priming of at most 0.1 s that the edit list hides; sound no
/// more than 0.1 s outside the picture) nor in the container's structure (headers, the index,
/// zero padding, short text tags).
struct ByteOracle {
    struct Packet {
        var stream: Int
        var position: Int64
        var size: Int64
        var discard: Bool
        var time: Double
        var duration: Double
    }

    struct Stream {
        var index: Int
        var type: String
        var tag: String
        var attachedPicture: Bool
        var id: Int64
    }

    let bytes: [UInt8]
    var streams: [Stream] = []
    var packets: [Packet] = []
    var programTables: Set<Int64> = []
    /// Bytes accounted for so far, as (start, end) pairs.
    private var accounted: [Range<Int64>] = []
    /// Why bytes are not, for the failure message.
    private(set) var unaccounted: [(Range<Int64>, String)] = []

    init(path: String) throws {
        bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let probe = try runTool(
            "ffprobe", ["-v", "error", "-show_streams", "-show_programs", "-show_packets", "-of", "json", path])
        guard probe.status == 0, let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any]
        else { throw InspectError("ffprobe: \(probe.stderr)") }
        for stream in json["streams"] as? [[String: Any]] ?? [] {
            let disposition = stream["disposition"] as? [String: Any]
            streams.append(
                Stream(
                    index: stream["index"] as? Int ?? -1, type: stream["codec_type"] as? String ?? "",
                    tag: stream["codec_tag_string"] as? String ?? "",
                    attachedPicture: (disposition?["attached_pic"] as? Int) == 1,
                    id: Int64((stream["id"] as? String ?? "").dropFirst(2), radix: 16) ?? -1))
        }
        for program in json["programs"] as? [[String: Any]] ?? [] {
            if let pmt = program["pmt_pid"] as? Int { programTables.insert(Int64(pmt)) }
            if let pcr = program["pcr_pid"] as? Int { programTables.insert(Int64(pcr)) }
        }
        for packet in json["packets"] as? [[String: Any]] ?? [] {
            guard let position = Int64(packet["pos"] as? String ?? ""), let size = Int64(packet["size"] as? String ?? "")
            else { continue }
            packets.append(
                Packet(
                    stream: packet["stream_index"] as? Int ?? -1, position: position, size: size,
                    discard: (packet["flags"] as? String ?? "").contains("D"),
                    time: Double(packet["pts_time"] as? String ?? packet["dts_time"] as? String ?? "") ?? 0,
                    duration: Double(packet["duration_time"] as? String ?? "") ?? 0))
        }
    }

    /// The streams the output carries: the picture, the first sound track, timecodes.
    var carried: Set<Int> {
        var set: Set<Int> = []
        if let video = streams.first(where: { $0.type == "video" && !$0.attachedPicture }) { set.insert(video.index) }
        if let audio = streams.first(where: { $0.type == "audio" }) { set.insert(audio.index) }
        for stream in streams where stream.tag == "tmcd" { set.insert(stream.index) }
        return set
    }

    /// The samples that are accounted for: carried, shown (or hidden only as priming), and
    /// sound within the picture's time.
    var shownSamples: [Packet] {
        let carried = carried
        let video = streams.first { $0.type == "video" && !$0.attachedPicture }?.index
        let pictures = packets.filter { $0.stream == video && !$0.discard }
        let start = pictures.map(\.time).min() ?? 0, end = pictures.map { $0.time + $0.duration }.max() ?? 0
        var hidden: [Int: Double] = [:]
        for packet in packets where packet.discard && carried.contains(packet.stream) {
            hidden[packet.stream, default: 0] += packet.duration
        }
        return packets.filter { packet in
            guard carried.contains(packet.stream) else { return false }
            if packet.discard && hidden[packet.stream, default: 0] > 0.1 { return false }
            let type = streams.first { $0.index == packet.stream }?.type
            if type == "audio" && (packet.time >= end + 0.1 || packet.time + packet.duration <= start - 0.1) { return false }
            return true
        }
    }

    /// What of the file is not accounted for (empty: every byte is).
    mutating func account(container: String) -> [(Range<Int64>, String)] {
        switch container {
        case "mkv": walkMatroska()
        case "ts": walkTransportStream()
        default: walkBoxes()
        }
        // Whatever the walks did not reach.
        var cursor: Int64 = 0
        for range in accounted.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if range.lowerBound > cursor { unaccounted.append((cursor..<range.lowerBound, "not accounted for")) }
            cursor = max(cursor, range.upperBound)
        }
        if cursor < Int64(bytes.count) { unaccounted.append((cursor..<Int64(bytes.count), "not accounted for")) }
        return unaccounted
    }

    private mutating func ok(_ range: Range<Int64>) { accounted.append(range) }

    private mutating func bad(_ range: Range<Int64>, _ why: String) {
        unaccounted.append((range, why))
        accounted.append(range)
    }

    private func number(_ at: Int64, _ count: Int) -> UInt64 {
        guard at >= 0, Int(at) + count <= bytes.count else { return 0 }
        return bytes[Int(at)..<(Int(at) + count)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    private func isZero(_ range: Range<Int64>) -> Bool { bytes[Int(range.lowerBound)..<Int(range.upperBound)].allSatisfy { $0 == 0 } }

    private func type(at offset: Int64) -> String {
        String(decoding: bytes[Int(offset + 4)..<Int(offset + 8)], as: UTF8.self)
    }

    // MARK: ISO BMFF

    private mutating func walkBoxes() {
        let samples = shownSamples.map { $0.position..<($0.position + $0.size) }
        var offset: Int64 = 0
        while offset + 8 <= Int64(bytes.count) {
            var size = Int64(number(offset, 4))
            var header: Int64 = 8
            if size == 1 { (size, header) = (Int64(number(offset + 8, 8)), 16) }
            if size == 0 { size = Int64(bytes.count) - offset }
            guard size >= header, offset + size <= Int64(bytes.count) else { break }
            let box = offset..<(offset + size)
            switch type(at: offset) {
            case "ftyp", "styp", "sidx", "mfra", "moof": ok(box)
            case "moov": moov(box, header)
            case "mdat":
                ok(offset..<(offset + header))
                // The payload: only shown samples of carried streams.
                for sample in samples where sample.lowerBound >= offset + header && sample.upperBound <= box.upperBound {
                    ok(sample)
                }
            case "free", "skip", "wide":
                if isZero((offset + header)..<box.upperBound) { ok(box) } else { bad(box, "padding with data") }
            case "udta", "meta": tags(box, header)
            default: bad(box, "box '\(type(at: offset))'")
            }
            offset += size
        }
    }

    /// moov: structure throughout, but for user data and metadata (text tags only) and a sample
    /// description that declares a second picture layer.
    private mutating func moov(_ box: Range<Int64>, _ header: Int64) {
        ok(box.lowerBound..<(box.lowerBound + header))
        children(box.lowerBound + header, box.upperBound) { oracle, child, name in
            switch name {
            case "trak", "mdia", "minf", "stbl", "mvex", "edts", "dinf": oracle.moov(child, 8)
            case "udta", "meta": oracle.tags(child, 8)
            case "uuid": oracle.bad(child, "uuid box in moov")
            case "stts", "ctts", "co64", "stss", "stco", "stsc", "stsz":
                // A table is its header and its entries: 8 + count x entry size (stsz: 12 + 4 x
                // count when its samples differ in size).
                let count = Int64(oracle.number(child.lowerBound + 12, 4))
                let entry: Int64 = ["stts", "ctts", "co64"].contains(name) ? 8 : name == "stsc" ? 12 : 4
                var length = 16 + count * entry
                if name == "stsz" {
                    let size = oracle.number(child.lowerBound + 12, 4), samples = Int64(oracle.number(child.lowerBound + 16, 4))
                    length = 20 + (size == 0 ? 4 * samples : 0)
                }
                let tail = min(child.upperBound, child.lowerBound + length)..<child.upperBound
                oracle.ok(child.lowerBound..<tail.lowerBound)
                if oracle.isZero(tail) { oracle.ok(tail) } else { oracle.bad(tail, "past the entries of \(name)") }
            case "stsd":
                let text = String(decoding: oracle.bytes[Int(child.lowerBound)..<Int(child.upperBound)], as: Unicode.ASCII.self)
                if text.contains("mvcC") || text.contains("lhvC") { oracle.bad(child, "second layer") } else { oracle.ok(child) }
            default: oracle.ok(child)
            }
        }
    }

    /// udta and meta: ©-text items, 3GPP text, a meta's handler and keys, and ilst items whose
    /// values are text or numbers.
    private mutating func tags(_ box: Range<Int64>, _ header: Int64) {
        var start = box.lowerBound + header
        if type(at: box.lowerBound) == "meta" && number(start, 4) == 0 { start += 4 }
        ok(box.lowerBound..<start)
        children(start, box.upperBound) { oracle, child, name in
            let short = child.count <= 4096 + 8
            if name.unicodeScalars.first?.value == 0xFFFD && short || ["hdlr", "keys", "titl", "dscp", "cprt", "name"].contains(name) {
                oracle.ok(child)
            } else if name == "meta" {
                oracle.tags(child, 8)
            } else if name == "ilst" {
                oracle.ok(child.lowerBound..<(child.lowerBound + 8))
                oracle.children(child.lowerBound + 8, child.upperBound) { oracle, item, _ in
                    var textOnly = true
                    oracle.children(item.lowerBound + 8, item.upperBound) { oracle, value, valueName in
                        if valueName == "data" && ![1, 21, 22, 23, 24].contains(oracle.number(value.lowerBound + 9, 3)) { textOnly = false }
                        oracle.ok(value)
                    }
                    if textOnly { oracle.ok(item) } else { oracle.bad(item, "binary tag") }
                }
            } else if ["free", "skip"].contains(name) && oracle.isZero((child.lowerBound + 8)..<child.upperBound) {
                oracle.ok(child)
            } else {
                oracle.bad(child, "'\(name)' in user data")
            }
        }
    }

    private mutating func children(
        _ start: Int64, _ end: Int64, _ each: (inout ByteOracle, Range<Int64>, String) -> Void
    ) {
        var offset = start
        while offset + 8 <= end {
            let size = Int64(number(offset, 4))
            guard size >= 8, offset + size <= end else { break }
            // A ©-name reads as U+FFFD (not ASCII), which is how `tags` recognises it.
            each(&self, offset..<(offset + size), type(at: offset))
            offset += size
        }
        if offset < end && isZero(offset..<end) { ok(offset..<end) }
    }

    // MARK: Matroska

    private func vint(_ at: Int64, keepMarker: Bool) -> (UInt64, Int64) {
        let first = bytes[Int(at)]
        var length = 1
        while length <= 8 && first & (0x80 >> (length - 1)) == 0 { length += 1 }
        var value = UInt64(keepMarker ? first : first & (0xFF >> length))
        for i in 1..<length { value = value << 8 | UInt64(bytes[Int(at) + i]) }
        return (value, Int64(length))
    }

    private mutating func walkMatroska() {
        let starts = Dictionary(shownSamples.map { ($0.position, $0.size) }, uniquingKeysWith: { a, _ in a })
        matroska(0, Int64(bytes.count), starts: starts, depth: 0)
    }

    private mutating func matroska(_ start: Int64, _ end: Int64, starts: [Int64: Int64], depth: Int) {
        var offset = start
        while offset < end {
            let (id, idLength) = vint(offset, keepMarker: true)
            var (size, sizeLength) = vint(offset + idLength, keepMarker: false)
            if size == (UInt64(1) << (7 * UInt64(sizeLength))) - 1 { size = UInt64(end - offset - idLength - sizeLength) }
            let payload = offset + idLength + sizeLength
            let element = offset..<min(end, payload + Int64(size))
            switch id {
            case 0x1A45_DFA3, 0x114D_9B74, 0x1549_A966, 0x1654_AE6B, 0x1C53_BB6B, 0xBF, 0xE7, 0xA7, 0xAB, 0x9B, 0xFB, 0xFA,
                0x63C0, 0x45A3, 0x447A, 0x4484, 0x75A2:
                ok(element)
            case 0x4487 where size <= 4096: ok(element)
            case 0x1853_8067, 0x1F43_B675, 0xA0, 0x1254_C367, 0x7373, 0x67C8:
                ok(offset..<payload)
                matroska(payload, element.upperBound, starts: starts, depth: depth + 1)
            case 0xEC:
                if isZero(payload..<element.upperBound) { ok(element) } else { bad(element, "Void with data") }
            case 0xA3, 0xA1:
                let (_, trackLength) = vint(payload, keepMarker: false)
                let frames = (payload + trackLength + 3)..<element.upperBound
                ok(offset..<frames.lowerBound)
                if let size = starts[payload], frames.lowerBound + size == frames.upperBound { ok(frames) } else { bad(frames, "block not carried") }
            default:
                bad(element, String(format: "element 0x%llX", id))
            }
            offset = element.upperBound
        }
    }

    // MARK: MPEG-TS

    private mutating func walkTransportStream() {
        let carriedIDs = Set(carried.compactMap { index in streams.first { $0.index == index }?.id })
        let tables = programTables.union([0, 0x11, 0x1FFF])
        var offset: Int64 = 0
        while offset + 188 <= Int64(bytes.count) {
            let packet = offset..<(offset + 188)
            let pid = Int64(bytes[Int(offset) + 1] & 0x1F) << 8 | Int64(bytes[Int(offset) + 2])
            let nullData = pid == 0x1FFF && !bytes[Int(offset + 4)..<Int(offset + 188)].allSatisfy { $0 == 0xFF || $0 == 0 }
            if bytes[Int(offset)] == 0x47 && (tables.contains(pid) || carriedIDs.contains(pid)) && !nullData {
                ok(packet)
            } else {
                bad(packet, "packet of PID \(pid)")
            }
            offset += 188
        }
        // A transport packet holds part of a sample: a carried sample that is not shown (sound
        // past the picture) is, at its first packet, in no output.
        let shown = Set(shownSamples.map(\.position))
        for packet in packets where carried.contains(packet.stream) && !shown.contains(packet.position) {
            bad(packet.position..<(packet.position + 188), "sample not shown")
        }
    }
}
