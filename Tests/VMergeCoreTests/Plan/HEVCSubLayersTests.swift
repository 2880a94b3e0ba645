import VMergeCore
import XCTest

/// The top temporal sub-layer comes from the SPS, not from hvcC's informative numTemporalLayers.
final class HEVCSubLayersTests: XCTestCase {
    /// An SPS NAL unit with its header: type 33, TemporalId 0, then vps id 0 and the sub-layers.
    private func sps(highest: UInt8) -> [UInt8] { [0x42, 0x01, highest << 1 | 1, 0x01, 0x60] }

    /// An hvcC record: 22 header bytes (numTemporalLayers as given, 4-byte lengths), then arrays.
    private func hvcC(layers: UInt8, arrays: [(type: UInt8, nals: [[UInt8]])]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 22)
        bytes[0] = 1
        bytes[21] = layers << 3 | 3
        bytes.append(UInt8(arrays.count))
        for array in arrays {
            bytes += [0x80 | array.type, 0, UInt8(array.nals.count)]
            for nal in array.nals { bytes += [UInt8(nal.count >> 8), UInt8(nal.count & 0xFF)] + nal }
        }
        return bytes
    }

    private let vps: [UInt8] = [0x40, 0x01, 0x0C, 0x01]
    private let pps: [UInt8] = [0x44, 0x01, 0xC1, 0x72]

    func testTheSPSDecidesWhateverTheHeaderSays() {
        for layers: UInt8 in [0, 1, 2, 7] {
            let record = hvcC(layers: layers, arrays: [(32, [vps]), (33, [sps(highest: 2)]), (34, [pps])])
            XCTAssertEqual(HEVCSubLayers.highest(inConfiguration: record), 2, "numTemporalLayers \(layers)")
        }
        XCTAssertEqual(HEVCSubLayers.highest(inConfiguration: hvcC(layers: 1, arrays: [(33, [sps(highest: 0)])])), 0)
    }

    func testNoSPSDisagreeingOnesOrABrokenRecordGiveNothing() {
        XCTAssertNil(HEVCSubLayers.highest(inConfiguration: hvcC(layers: 2, arrays: [(32, [vps]), (34, [pps])])))
        XCTAssertNil(HEVCSubLayers.highest(inConfiguration: hvcC(layers: 2, arrays: [(33, [sps(highest: 1), sps(highest: 2)])])))
        let whole = hvcC(layers: 2, arrays: [(32, [vps]), (33, [sps(highest: 1)])])
        XCTAssertEqual(HEVCSubLayers.highest(inConfiguration: whole), 1)
        for cut in [10, 23, whole.count - 1] {
            XCTAssertNil(HEVCSubLayers.highest(inConfiguration: Array(whole.prefix(cut))), "cut at \(cut)")
        }
        // An "SPS" array whose unit is something else.
        XCTAssertNil(HEVCSubLayers.highest(inConfiguration: hvcC(layers: 2, arrays: [(33, [pps])])))
    }
}
