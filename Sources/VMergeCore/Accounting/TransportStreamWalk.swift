import Foundation

/// The walk of an MPEG transport stream's packets for --delete-sources (see `ContainerMap`):
/// the program tables (PAT, the PMTs it names, the DVB/ATSC service tables), null packets and
/// packets without payload (a clock reference, stuffing) are structure; a packet of an elementary stream belongs to its PID (accounted for when
/// the stream is carried). Bytes where no packet starts, and a cut-off last packet, hold what no
/// output carries.
struct TransportStreamWalk {
    private let bytes: FileBytes
    private let carried: Set<Int64>
    private var map = ContainerMap()

    init(_ bytes: FileBytes, carried: Set<Int64>) {
        self.bytes = bytes
        self.carried = carried
    }

    /// PAT, CAT, TSDT, IPMP, the DVB/ARIB service information PIDs (0x10-0x1F), ATSC's base PID,
    /// and null packets.
    private static let tables: Set<Int64> = Set((0...3).map(Int64.init) + (0x10...0x1F).map(Int64.init) + [0x1FFB, 0x1FFF])

    consuming func walk() -> ContainerMap {
        // 188-byte packets, or 192 (M2TS: a 4-byte time stamp before each) or 204 (with a
        // Reed-Solomon tail): the size whose sync bytes line up.
        let head = bytes.read(0, 204 * 3 + 4)
        let layout = [(188, 0), (192, 4), (204, 0)].first { size, prefix in
            (0..<3).allSatisfy { prefix + $0 * size < head.count && head[prefix + $0 * size] == 0x47 }
        }
        guard let (size, prefix) = layout else {
            map.add(0..<bytes.size, .nothing("in a file where no transport packet starts"))
            return map
        }
        var structurePIDs = TransportStreamWalk.tables
        var offset: Int64 = 0
        let chunk = size * 4096
        while offset < bytes.size {
            let data = bytes.read(offset, chunk)
            var index = 0
            while index + size <= data.count {
                let start = offset + Int64(index)
                let sync = index + prefix
                guard data[sync] == 0x47 else {
                    map.add(start..<bytes.size, .nothing("where no transport packet starts"))
                    return map
                }
                let pid = Int64(data[sync + 1] & 0x1F) << 8 | Int64(data[sync + 2])
                if pid == 0 { structurePIDs.formUnion(programMapPIDs(data, sync)) }
                if structurePIDs.contains(pid) || carried.contains(pid) {
                    map.add(start..<(start + Int64(size)), .structure)
                } else if (data[sync + 3] >> 4) & 0x1 == 0 {
                    // No payload, only an adaptation field: a clock reference or stuffing.
                    map.add(start..<(start + Int64(size)), .structure)
                } else {
                    map.add(start..<(start + Int64(size)), .track(pid))
                }
                index += size
            }
            if data.count < chunk {
                if index < data.count {
                    map.add((offset + Int64(index))..<bytes.size, .nothing("in a transport packet cut off by the end of the file"))
                }
                break
            }
            offset += Int64(index)
        }
        return map
    }

    /// The PMT PIDs a PAT packet at `sync` lists.
    private func programMapPIDs(_ data: [UInt8], _ sync: Int) -> [Int64] {
        guard let section = payload(data, sync) else { return [] }
        // table id, section length, then 5 bytes of header, then 4 bytes per program.
        guard section.count >= 8, section[0] == 0 else { return [] }
        let length = Int(section[1] & 0x0F) << 8 | Int(section[2])
        let end = min(section.count, 3 + length - 4)
        var pids: [Int64] = []
        var index = 8
        while index + 4 <= end {
            pids.append(Int64(section[index + 2] & 0x1F) << 8 | Int64(section[index + 3]))
            index += 4
        }
        return pids
    }

    /// A section's bytes from a packet that starts one (pointer field skipped).
    private func payload(_ data: [UInt8], _ sync: Int) -> [UInt8]? {
        let flags = data[sync + 1]
        guard flags & 0x40 != 0 else { return nil }  // payload unit start
        let control = (data[sync + 3] >> 4) & 0x3
        var index = sync + 4
        if control & 0x2 != 0 { index += 1 + Int(data[index]) }
        guard control & 0x1 != 0, index < sync + 188 else { return nil }
        let pointer = Int(data[index])
        index += 1 + pointer
        guard index < sync + 188 else { return nil }
        return Array(data[index..<(sync + 188)])
    }
}
