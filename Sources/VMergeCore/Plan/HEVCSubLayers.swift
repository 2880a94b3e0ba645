/// How many temporal sub-layers an HEVC stream has, from its sequence parameter set: the one
/// normative bound on every picture's TemporalId (the hvcC header's numTemporalLayers is only
/// informative, and a muxer that writes it wrong must not make vmerge skip a referenced picture).
package enum HEVCSubLayers {
    /// The highest TemporalId the SPS in an hvcC record allows (sps_max_sub_layers_minus1), or
    /// nil when the record holds no SPS, or several that disagree, or is malformed.
    package static func highest(inConfiguration hvcC: [UInt8]) -> UInt8? {
        guard hvcC.count >= 23 else { return nil }
        var offset = 23
        var found: UInt8?
        for _ in 0..<Int(hvcC[22]) {
            guard offset + 3 <= hvcC.count else { return nil }
            let type = hvcC[offset] & 0x3F
            let count = Int(hvcC[offset + 1]) << 8 | Int(hvcC[offset + 2])
            offset += 3
            for _ in 0..<count {
                guard offset + 2 <= hvcC.count else { return nil }
                let length = Int(hvcC[offset]) << 8 | Int(hvcC[offset + 1])
                offset += 2
                guard offset + length <= hvcC.count else { return nil }
                if type == 33 {
                    guard let highest = highest(inSPS: hvcC[offset..<offset + length]), found == nil || found == highest
                    else { return nil }
                    found = highest
                }
                offset += length
            }
        }
        return found
    }

    /// sps_max_sub_layers_minus1 of an SPS NAL unit (with its 2-byte header), or nil. The byte it
    /// sits in follows the header directly, so no emulation prevention byte can come before it.
    package static func highest(inSPS nal: ArraySlice<UInt8>) -> UInt8? {
        guard nal.count >= 3, (nal[nal.startIndex] >> 1) & 0x3F == 33 else { return nil }
        return (nal[nal.startIndex + 2] >> 1) & 7
    }
}
