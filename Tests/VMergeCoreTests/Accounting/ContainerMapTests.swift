import Foundation
import XCTest

@testable import VMergeCore

/// The walks --delete-sources reads a file's layout with (`ContainerMap`), on bytes made here:
/// which regions are structure, media data, a track the output does not carry, or nothing, and
/// the words a kept file is explained with. The same on real media, through the binary:
/// ByteAccountingInvariantTests.
final class ContainerMapTests: XCTestCase {
    private var path = ""

    override func setUp() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-map-\(UUID().uuidString)").path
    }

    override func tearDown() { unlink(path) }

    private func walk(_ bytes: [UInt8], _ family: ContainerMap.Family, _ carried: ContainerMap.Carried = .init()) throws
        -> [ContainerMap.Region]
    {
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let file = FileDescriptor(open(path, O_RDONLY))
        XCTAssertGreaterThanOrEqual(file.raw, 0)
        let regions = ContainerMap.walk(FileBytes(file), as: family, carried: carried).regions
        // Every byte is in exactly one region.
        let sorted = regions.map(\.range).sorted { $0.lowerBound < $1.lowerBound }
        XCTAssertEqual(sorted.first?.lowerBound, 0)
        XCTAssertEqual(sorted.last?.upperBound, Int64(bytes.count))
        for (a, b) in zip(sorted, sorted.dropFirst()) { XCTAssertEqual(a.upperBound, b.lowerBound) }
        return regions
    }

    private func nothing(_ regions: [ContainerMap.Region]) -> [String] {
        regions.compactMap { if case let .nothing(what) = $0.holder { return what } else { return nil } }
    }

    private func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) }
            + type.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) } + payload
    }

    func testRangesMergeAndTheirGapsAreExact() {
        let ranges = ByteRanges([10..<20, 0..<5, 15..<30, 40..<41])
        XCTAssertEqual(ranges.ranges, [0..<5, 10..<30, 40..<41])
        XCTAssertEqual(ranges.gaps(in: 0..<50), [5..<10, 30..<40, 41..<50])
        XCTAssertEqual(ranges.gaps(in: 12..<28), [])
        XCTAssertEqual(ranges.byteCount, 26)
        XCTAssertEqual(ByteRanges.text(1_234_567..<1_434_567), "bytes 1,234,567-1,434,566")
        XCTAssertEqual(ByteRanges.text(7..<8), "byte 7")
    }

    /// Headers and the index are structure, mdat's payload media data; zero padding and text tags
    /// are structure; padding with data, an unknown box, a binary tag and a trailer are not.
    func testAnMP4sBoxesAreStructureOnlyWhenTheyHoldNothingOrText() throws {
        let text = box("ilst", box("\u{A9}nam", box("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array("a title".utf8))))
        let binary = box("ilst", box("covr", box("data", [0, 0, 0, 13, 0, 0, 0, 0, 0xFF, 0xD8])))
        let bytes =
            box("ftyp", Array("isom".utf8) + [0, 0, 2, 0]) + box("mdat", Array(repeating: 7, count: 100))
            + box(
                "moov",
                box("mvhd", Array(repeating: 0, count: 100))
                    + box("udta", box("\u{A9}cmt", [0, 3, 0, 0, 0x61, 0x62, 0x63]) + box("smta", [1, 2])))
            + box("free", Array(repeating: 0, count: 16)) + box("skip", [1])
            + box("uuid", Array(repeating: 9, count: 16))
            + box("meta", [0, 0, 0, 0] + text) + box("meta", [0, 0, 0, 0] + binary) + [0x55, 0x66, 0x77]
        let regions = try walk(bytes, .isoBMFF)
        XCTAssertEqual(regions.filter { $0.holder == .samples }.map(\.range), [24..<124])
        XCTAssertEqual(
            nothing(regions),
            [
                "in a 'smta' box in moov/udta", "in a 'skip' box at the top level that holds data",
                "in a 'uuid' box at the top level", "in the tag 'covr' (binary data, such as a picture)",
                "after the last box",
            ])
        XCTAssertEqual(regions.last?.range, Int64(bytes.count - 3)..<Int64(bytes.count))
    }

    /// A sample description that declares a second picture layer (MV-HEVC, MVC) is not
    /// structure: the layer's pictures are in no output.
    func testASecondPictureLayerIsNotStructure() throws {
        let entry = box("hvc1", Array(repeating: 0, count: 78) + box("hvcC", [1]) + box("lhvC", [1]))
        let stsd = box("stsd", [0, 0, 0, 0, 0, 0, 0, 1] + entry)
        let moov = box("moov", box("trak", box("mdia", box("minf", box("stbl", stsd)))))
        let regions = try walk(box("ftyp", Array("qt  ".utf8)) + moov, .isoBMFF)
        XCTAssertEqual(nothing(regions).count, 1)
        XCTAssertTrue(nothing(regions)[0].contains("second picture layer, lhvC"), nothing(regions)[0])
    }

    private func element(_ id: [UInt8], _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count < 0x4000)
        return id + [0x40 | UInt8(payload.count >> 8), UInt8(truncatingIfNeeded: payload.count)] + payload
    }

    /// A block is structure when the output carries what was read from it, its track's otherwise;
    /// an attachment is named; zero Void is structure.
    func testMatroskaBlocksAttachmentsAndVoid() throws {
        let header = element([0x1A, 0x45, 0xDF, 0xA3], [0x42, 0x86, 0x81, 0x01])
        let attachment = element(
            [0x19, 0x41, 0xA4, 0x69], element([0x61, 0xA7], element([0x46, 0x6E], Array("a.gpx".utf8))))
        let blockOne = element([0xA3], [0x81, 0, 0, 0x80, 1, 2, 3])
        let blockTwo = element([0xA3], [0x82, 0, 0, 0x80, 4, 5, 6])
        let void = element([0xEC], [0, 0])
        // The segment's header, the Void, the attachments; then the cluster's header and timestamp,
        // and the block's ID and size.
        let firstBlockPayload = Int64(header.count + 6 + void.count + attachment.count + 6 + 4 + 3)
        let cluster = element([0x1F, 0x43, 0xB6, 0x75], element([0xE7], [0]) + blockOne + blockTwo)
        let segment = element([0x18, 0x53, 0x80, 0x67], void + attachment + cluster)
        let regions = try walk(header + segment, .matroska, .init(sampleStarts: [firstBlockPayload]))
        XCTAssertEqual(nothing(regions), ["in its attachment 'a.gpx'"])
        XCTAssertEqual(regions.filter { $0.holder == ContainerMap.Holder.block(2) }.count, 1)
        XCTAssertEqual(regions.filter { $0.holder == ContainerMap.Holder.block(1) }.count, 0)
    }

    private func packet(_ pid: Int, start: Bool, _ payload: [UInt8] = []) -> [UInt8] {
        var bytes: [UInt8] = [0x47, UInt8(pid >> 8) | (start ? 0x40 : 0), UInt8(pid & 0xFF), 0x10] + payload
        bytes += Array(repeating: 0xFF, count: 188 - bytes.count)
        return bytes
    }

    /// The tables the PAT names and the carried PIDs are structure; another PID is its track,
    /// and a cut-off packet is nothing.
    func testATransportStreamsPacketsByPID() throws {
        // PAT: pointer 0, table 0, length 13, ids, then program 1 on PMT PID 0x1000, CRC.
        let pat = packet(0, start: true, [0, 0, 0xB0, 13, 0, 1, 0xC1, 0, 0, 0, 1, 0xF0, 0x00, 0, 0, 0, 0])
        let pmt = packet(0x1000, start: true, [0, 2])
        let bytes = pat + pmt + packet(0x100, start: true) + packet(0x101, start: true) + [0x47, 1, 2]
        let regions = try walk(bytes, .transportStream, .init(pids: [0x100], sampleStarts: [376]))
        XCTAssertEqual(regions.filter { $0.holder == .track(0x101) }.map(\.range), [564..<752])
        XCTAssertEqual(nothing(regions), ["in a transport packet cut off by the end of the file"])
        XCTAssertEqual(ByteRanges(regions.filter { $0.holder == .structure }.map(\.range)).gaps(in: 0..<564), [])
    }

    /// Measured, not trusted by PID: a PES packet on a carried PID that no sample was read from,
    /// a null packet with data, an adaptation field with private data.
    func testATransportPacketIsStructureOnlyAsMeasured() throws {
        let pat = packet(0, start: true, [0, 0, 0xB0, 13, 0, 1, 0xC1, 0, 0, 0, 1, 0xF0, 0x00, 0, 0, 0, 0])
        var null = packet(0x1FFF, start: false, Array("data".utf8))
        var privateData = packet(0x100, start: false)
        privateData[3] = 0x20  // an adaptation field only
        privateData[4] = 183
        privateData[5] = 0x02  // private data flag
        null[3] = 0x10
        let bytes = pat + packet(0x100, start: true) + packet(0x100, start: true) + null + privateData
        let regions = try walk(bytes, .transportStream, .init(pids: [0x100], sampleStarts: [188]))
        XCTAssertEqual(
            nothing(regions),
            [
                "in a PES packet of PID 0x100 that no sample read holds", "in a null packet that holds data",
                "in an adaptation field of PID 0x100 that holds data",
            ])
        XCTAssertEqual(regions.first { $0.holder != .structure }?.range, 376..<564)
    }

    /// A table box is as long as its entries, a header as its fields; what lies past them is
    /// data unless zeros; description past the budget (a 100 KB handler name) is no header, and
    /// fields that do not fit their box (a table counting more entries than it holds) are data.
    func testAnMP4BoxIsStructureOnlyAsLongAsItsFields() throws {
        let stts = box("stts", [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 2, 0] + Array("hidden".utf8))
        let stss = box("stss", [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0])
        let moov = box("moov", box("trak", box("mdia", box("minf", box("stbl", stts + stss)))))
        let regions = try walk(box("ftyp", Array("isom".utf8)) + moov, .isoBMFF)
        XCTAssertEqual(nothing(regions), ["past the fields of the 'stts' box in moov/trak/mdia/minf/stbl"])
        XCTAssertEqual(regions.first { $0.holder != .structure }?.range.count, 6)

        let overcounted = box("stco", [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF] + Array("data".utf8))
        let lying = try walk(box("moov", box("trak", box("mdia", box("minf", box("stbl", overcounted))))), .isoBMFF)
        XCTAssertEqual(nothing(lying), ["in a 'stco' box in moov/trak/mdia/minf/stbl whose fields do not fit it"])

        let handler = box("hdlr", [UInt8](repeating: 0, count: 24) + [UInt8](repeating: 0x41, count: 100_000))
        let big = try walk(box("ftyp", Array("isom".utf8)) + box("moov", box("trak", box("mdia", handler))), .isoBMFF)
        // Only the handler: the brands beside it stay within the budget.
        XCTAssertEqual(
            nothing(big), ["in a 'hdlr' box in moov/trak/mdia (headers and tags past the 64 KiB a recording's take)"])
        XCTAssertEqual(big.first { $0.holder != .structure }?.range.count, 100_032)
    }
}
