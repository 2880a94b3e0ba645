import Foundation

/// The walk of an MPEG transport stream's packets for --delete-sources (see `ContainerMap`),
/// each packet measured, none trusted by its PID alone:
/// - a carried PID's packet is structure when it belongs to a PES packet the demuxer read a
///   sample from (the packet that starts the PES is where the sample's position points);
/// - the program tables (PAT, the PMTs it names, the DVB/ATSC service tables): a section the
///   PID has carried before (tables repeat every few hundred ms) is structure, a new one
///   description, and after the sections only 0xFF stuffing;
/// - null packets hold only fill (0xFF or zeros); an adaptation field its clock references and
///   0xFF stuffing (private data in it is data); an M2TS packet's arrival time never goes back;
/// - a packet of any other PID is its PID's, accounted for by no output.
/// Bytes where no packet starts, and a cut-off last packet, hold what no output carries.
struct TransportStreamWalk {
    private let bytes: FileBytes
    private let carried: ContainerMap.Carried
    private var map = ContainerMap()
    /// Per carried PID: whether the PES packet under way is one a sample was read from.
    private var inSample: [Int64: Bool] = [:]
    /// The table sections seen, per PID: a repeat is structure.
    private var sections: Set<[UInt8]> = []

    init(_ bytes: FileBytes, carried: ContainerMap.Carried) {
        self.bytes = bytes
        self.carried = carried
    }

    /// PAT, CAT, TSDT, IPMP, the DVB/ARIB service information PIDs (0x10-0x1F), ATSC's base PID.
    private static let tables: Set<Int64> = Set((0...3).map(Int64.init) + (0x10...0x1F).map(Int64.init) + [0x1FFB])
    private static let null: Int64 = 0x1FFF

    consuming func walk() -> ContainerMap {
        // 188-byte packets, or 192 (M2TS: a 4-byte arrival time before each) or 204 (with a
        // Reed-Solomon tail): the size whose sync bytes line up.
        let head = bytes.read(0, 204 * 3 + 4)
        let layout = [(188, 0), (192, 4), (204, 0)].first { size, prefix in
            (0..<3).allSatisfy { prefix + $0 * size < head.count && head[prefix + $0 * size] == 0x47 }
        }
        guard let (size, prefix) = layout else {
            map.add(0..<bytes.size, .nothing("in a file where no transport packet starts"))
            return map
        }
        var tablePIDs = TransportStreamWalk.tables
        var arrival: UInt32?
        var offset: Int64 = 0
        let chunk = size * 4096
        while offset < bytes.size {
            let data = bytes.read(offset, chunk)
            var index = 0
            while index + size <= data.count {
                let start = offset + Int64(index)
                let packet = start..<(start + Int64(size))
                let sync = index + prefix
                guard data[sync] == 0x47 else {
                    map.add(start..<bytes.size, .nothing("where no transport packet starts"))
                    return map
                }
                if prefix == 4 {
                    let time = UInt32(FileBytes.number(data, index, 4)) & 0x3FFF_FFFF
                    if let last = arrival, (time &- last) & 0x3FFF_FFFF >= 0x2000_0000 {
                        map.add(packet, .nothing("in an M2TS arrival time that goes back"))
                        index += size
                        continue
                    }
                    arrival = time
                }
                let pid = Int64(data[sync + 1] & 0x1F) << 8 | Int64(data[sync + 2])
                if pid == 0, let listed = programMapPIDs(data, sync) { tablePIDs.formUnion(listed) }
                map.add(packet, holder(of: Array(data[sync..<(sync + 188)]), pid: pid, at: start, tables: tablePIDs))
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

    /// Who holds the 188-byte packet `packet` of `pid`, which starts at `start` in the file.
    private mutating func holder(of packet: [UInt8], pid: Int64, at start: Int64, tables: Set<Int64>) -> ContainerMap.Holder {
        let unitStart = packet[1] & 0x40 != 0
        let control = (packet[3] >> 4) & 0x3
        var payload = 4
        if control & 0x2 != 0 {
            let length = Int(packet[4])
            guard 5 + length <= 188, adaptationHoldsNothing(packet[5..<(5 + length)]) else {
                return .nothing("in an adaptation field of PID \(TransportStreamWalk.hex(pid)) that holds data")
            }
            payload = 5 + length
        }
        let body = control & 0x1 != 0 ? Array(packet[payload...]) : []
        if pid == TransportStreamWalk.null {
            return body.allSatisfy({ $0 == 0xFF }) || body.allSatisfy({ $0 == 0 })
                ? .structure : .nothing("in a null packet that holds data")
        }
        if carried.pids.contains(pid) {
            if unitStart { inSample[pid] = carried.sampleStarts.contains(start) }
            return body.isEmpty || inSample[pid] == true
                ? .structure
                : .nothing("in a PES packet of PID \(TransportStreamWalk.hex(pid)) that no sample read holds")
        }
        if tables.contains(pid) { return table(body, pid: pid, unitStart: unitStart) }
        return body.isEmpty ? .structure : .track(pid)
    }

    /// An adaptation field's bytes after its length: flags, the clock references they announce,
    /// a splice countdown, an extension (description), then 0xFF stuffing; private data is data.
    private func adaptationHoldsNothing(_ field: ArraySlice<UInt8>) -> Bool {
        guard let flags = field.first else { return true }
        if flags & 0x02 != 0 { return false }
        var index = field.startIndex + 1
        if flags & 0x10 != 0 { index += 6 }
        if flags & 0x08 != 0 { index += 6 }
        if flags & 0x04 != 0 { index += 1 }
        if flags & 0x01 != 0, index < field.endIndex { index += 1 + Int(field[index]) }
        return index <= field.endIndex && field[index...].allSatisfy { $0 == 0xFF }
    }

    /// A table PID's payload: a section seen on the PID before is structure, a new one
    /// description; after the sections, only 0xFF.
    private mutating func table(_ body: [UInt8], pid: Int64, unitStart: Bool) -> ContainerMap.Holder {
        guard unitStart, let pointer = body.first, 1 + Int(pointer) + 3 <= body.count else { return .description("in a table section of PID \(TransportStreamWalk.hex(pid))") }
        let start = 1 + Int(pointer)
        let end = min(body.count, start + 3 + (Int(body[start + 1] & 0x0F) << 8 | Int(body[start + 2])))
        guard body[end...].allSatisfy({ $0 == 0xFF }) else {
            return .nothing("after the table sections of PID \(TransportStreamWalk.hex(pid))")
        }
        return sections.insert(TransportStreamWalk.key(pid) + body[..<end]).inserted ? .description("in a table section of PID \(TransportStreamWalk.hex(pid))") : .structure
    }

    private static func key(_ pid: Int64) -> [UInt8] { [UInt8(pid >> 8), UInt8(pid & 0xFF)] }

    private static func hex(_ pid: Int64) -> String { "0x" + String(pid, radix: 16, uppercase: true) }

    /// The PMT PIDs a PAT packet at `sync` lists; nil when it starts no section.
    private func programMapPIDs(_ data: [UInt8], _ sync: Int) -> [Int64]? {
        guard let section = section(data, sync) else { return nil }
        // table id, section length, then 5 bytes of header, then 4 bytes per program.
        guard section.count >= 8, section[0] == 0 else { return nil }
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
    private func section(_ data: [UInt8], _ sync: Int) -> [UInt8]? {
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
