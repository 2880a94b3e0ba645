import CFFmpeg
import VMergeCore

/// Which video packets need not be decoded at all: those whose picture the output will not show
/// (the frame-rate step drops it: 240 fps into 30 keeps one picture in eight) and that no other
/// picture references, told from the packet's own NAL unit headers. H.264: every slice has
/// nal_ref_idc 0. HEVC: every slice is a sub-layer non-reference picture (TRAIL_N, TSA_N, STSA_N,
/// RADL_N, RASL_N) of the highest temporal sub-layer (lower sub-layers' may be referenced from
/// higher ones). Anything else in the packet (a parameter set, an IDR, an unknown NAL) means it
/// is decoded.
///
/// Whether a picture is shown is decided from its timestamp and its neighbours' in presentation
/// order, read ahead of decoding (PresentationNeighbours): exact at any frame rate, constant or
/// not. Annex B bitstreams and other codecs are decoded whole.
struct PictureSkipping {
    private enum Syntax {
        case h264
        case hevc(highestSubLayer: UInt8)
    }

    private let syntax: Syntax
    /// Bytes in each NAL unit's length prefix (avcC / hvcC).
    private let lengthSize: Int
    /// False once the stream has broken what the header promised (HEVC: a picture above the top
    /// sub-layer, or a new SPS with another one): from then on nothing is skipped.
    private var trusted = true

    init?(stream: UnsafeMutablePointer<AVStream>) {
        guard let parameters = stream.pointee.codecpar, let extradata = parameters.pointee.extradata else { return nil }
        let size = Int(parameters.pointee.extradata_size)
        // configurationVersion 1: length-prefixed NAL units, as MP4 and QuickTime store them.
        guard size >= 7, extradata[0] == 1 else { return nil }
        switch parameters.pointee.codec_id {
        case AV_CODEC_ID_H264:
            syntax = .h264
            lengthSize = Int(extradata[4] & 3) + 1
        case AV_CODEC_ID_HEVC:
            // The top sub-layer from the SPS (normative), not hvcC's numTemporalLayers; without an
            // SPS in the header (parameter sets in the stream only) nothing is skipped.
            guard let highest = HEVCSubLayers.highest(inConfiguration: Array(UnsafeBufferPointer(start: extradata, count: size)))
            else { return nil }
            syntax = .hevc(highestSubLayer: highest)
            lengthSize = Int(extradata[21] & 3) + 1
        default:
            return nil
        }
        guard lengthSize != 3 else { return nil }
    }

    /// Looks at every video packet as it is read (ahead of deciding about those before it): an
    /// HEVC picture above the SPS's top sub-layer could reference a picture taken for the top
    /// one's, so the stream is no longer trusted.
    mutating func observe(_ packet: UnsafeMutablePointer<AVPacket>) {
        guard trusted, case let .hevc(highest) = syntax else { return }
        var broken = false
        _ = forEachNAL(in: packet) { nal in
            let type = (nal[0] >> 1) & 0x3F
            if type < 32 && (nal[1] & 7) &- 1 > highest { broken = true }
            if type == 33 && HEVCSubLayers.highest(inSPS: Array(nal.prefix(3))[...]) != highest { broken = true }
            return !broken
        }
        if broken { trusted = false }
    }

    /// Whether no other picture needs this packet's: it holds slices of an unreferenced picture
    /// and nothing else that matters to the decoder.
    func isUnreferenced(_ packet: UnsafeMutablePointer<AVPacket>) -> Bool {
        guard trusted else { return false }
        var slices = 0
        let whole = forEachNAL(in: packet) { nal in
            switch syntax {
            case .h264:
                switch nal[0] & 0x1F {
                case 1 where nal[0] & 0x60 == 0: slices += 1  // a non-IDR slice, nal_ref_idc 0
                case 6, 9, 12: break  // SEI, access unit delimiter, filler
                default: return false
                }
            case let .hevc(highest):
                switch (nal[0] >> 1) & 0x3F {
                case 0, 2, 4, 6, 8:  // TRAIL_N, TSA_N, STSA_N, RADL_N, RASL_N: at the top sub-layer only
                    guard (nal[1] & 7) &- 1 == highest else { return false }
                    slices += 1
                case 35, 38, 39, 40: break  // access unit delimiter, filler, SEI
                default: return false
                }
            }
            return true
        }
        return whole && slices > 0
    }

    /// Calls `body` with each length-prefixed NAL unit of the packet (at least its 2 header
    /// bytes) until it returns false; true when the packet was walked to its end and every unit
    /// was whole and accepted.
    private func forEachNAL(
        in packet: UnsafeMutablePointer<AVPacket>, _ body: (UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Bool {
        guard let data = packet.pointee.data else { return false }
        let size = Int(packet.pointee.size)
        var offset = 0
        while offset < size {
            guard offset + lengthSize <= size else { return false }
            var length = 0
            for byte in 0..<lengthSize { length = length << 8 | Int(data[offset + byte]) }
            offset += lengthSize
            guard length >= 2, length <= size - offset else { return false }
            guard body(UnsafeBufferPointer(start: data + offset, count: length)) else { return false }
            offset += length
        }
        return true
    }
}
