import Foundation

/// How long an MP4/QuickTime box's payload is by its own fields: fixed headers by their
/// version, tables by their entry counts (ISO 14496-12, QuickTime File Format). What a box holds
/// past that is no field of it: --delete-sources counts it as structure only when it is zeros.
enum BoxFields {
    /// The boxes measured here.
    static let measured: Set<String> = [
        "mvhd", "tkhd", "mdhd", "mehd", "tfdt", "vmhd", "smhd", "nmhd", "sthd", "hmhd", "mfhd", "trex", "mfro", "cslg",
        "stts", "ctts", "co64", "stss", "stps", "stco", "stsc", "elst", "stsz", "stz2", "sbgp", "trun", "tfhd", "sidx",
        "tfra", "sdtp",
    ]

    /// The payload's length by its fields, from its first bytes `head` (at least 32 when the box
    /// has them); `samples`: the track's sample count, which `sdtp` has a byte for each of. Nil
    /// when the fields cannot say.
    static func length(of type: String, head: [UInt8], samples: Int64?) -> Int64? {
        guard head.count >= 4 else { return nil }
        let version = head[0]
        let flags = Int64(FileBytes.number(head, 1, 3))
        func count(at index: Int) -> Int64? { head.count >= index + 4 ? Int64(FileBytes.number(head, index, 4)) : nil }
        let wide = version == 1
        switch type {
        case "mvhd": return wide ? 112 : 100
        case "tkhd": return wide ? 96 : 84
        case "mdhd": return wide ? 36 : 24
        case "mehd", "tfdt": return wide ? 12 : 8
        case "cslg": return wide ? 44 : 24
        case "vmhd": return 12
        case "smhd", "mfhd", "mfro": return 8
        case "nmhd", "sthd": return 4
        case "hmhd": return 20
        case "trex": return 24
        case "stts", "ctts", "co64": return count(at: 4).map { 8 + 8 * $0 }
        case "stss", "stps", "stco": return count(at: 4).map { 8 + 4 * $0 }
        case "stsc": return count(at: 4).map { 8 + 12 * $0 }
        case "elst": return count(at: 4).map { 8 + (wide ? 20 : 12) * $0 }
        case "stsz":
            guard let size = count(at: 4), let n = count(at: 8) else { return nil }
            return 12 + (size == 0 ? 4 * n : 0)
        case "stz2":
            guard head.count >= 8, let n = count(at: 8) else { return nil }
            return 12 + (Int64(head[7]) * n + 7) / 8
        case "sbgp": return count(at: wide ? 12 : 8).map { (wide ? 16 : 12) + 8 * $0 }
        case "sdtp": return samples.map { 4 + $0 }
        case "tfhd":
            let optional: [(Int64, Int64)] = [(0x1, 8), (0x2, 4), (0x8, 4), (0x10, 4), (0x20, 4)]
            return 8 + optional.reduce(0) { $0 + (flags & $1.0 != 0 ? $1.1 : 0) }
        case "trun":
            guard let n = count(at: 4) else { return nil }
            let perSample = [0x100, 0x200, 0x400, 0x800].reduce(Int64(0)) { $0 + (flags & $1 != 0 ? 4 : 0) }
            return 8 + (flags & 0x1 != 0 ? 4 : 0) + (flags & 0x4 != 0 ? 4 : 0) + n * perSample
        case "sidx":
            let countAt = 12 + (wide ? 16 : 8) + 2
            guard head.count >= countAt + 2 else { return nil }
            return Int64(countAt + 2) + 12 * Int64(FileBytes.number(head, countAt, 2))
        case "tfra":
            guard let sizes = count(at: 8), let n = count(at: 12) else { return nil }
            let entry = (wide ? 16 : 8) + ((sizes >> 4) & 3) + 1 + ((sizes >> 2) & 3) + 1 + (sizes & 3) + 1
            return 16 + n * entry
        default: return nil
        }
    }
}
