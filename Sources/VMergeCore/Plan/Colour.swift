/// A clip's colour, as its video stream declares it (FFmpeg's names: "bt709", "arib-std-b67",
/// "smpte2084", "bt2020nc", "tv", "pc"; "unknown" when not declared).
package struct ColourInfo: Sendable, Equatable {
    package var transfer: String
    package var primaries: String
    package var matrix: String
    package var range: String
    package var bitDepth: Int
    /// Dolby Vision profile and base-layer compatibility id (8.4: HLG base layer), when present.
    package var dolbyVision: (profile: Int, compatibility: Int)?

    package init(
        transfer: String = "unknown", primaries: String = "unknown", matrix: String = "unknown",
        range: String = "unknown", bitDepth: Int = 8, dolbyVision: (profile: Int, compatibility: Int)? = nil
    ) {
        self.transfer = transfer
        self.primaries = primaries
        self.matrix = matrix
        self.range = range
        self.bitDepth = bitDepth
        self.dolbyVision = dolbyVision
    }

    package static func == (a: ColourInfo, b: ColourInfo) -> Bool {
        a.transfer == b.transfer && a.primaries == b.primaries && a.matrix == b.matrix && a.range == b.range
            && a.bitDepth == b.bitDepth && a.dolbyVision?.profile == b.dolbyVision?.profile
            && a.dolbyVision?.compatibility == b.dolbyVision?.compatibility
    }

    package enum DynamicRange: String, Sendable {
        case sdr
        /// Hybrid log-gamma (ARIB STD-B67): iPhone HDR video, many Android phones.
        case hlg
        /// Perceptual quantiser (SMPTE ST 2084): HDR10, Dolby Vision 8.1 base layers.
        case pq
    }

    /// Dolby Vision profile 8 clips are read by their base layer, which carries its own HLG or
    /// PQ transfer (8.4 / 8.1); vmerge does not apply the enhancement metadata.
    package var dynamicRange: DynamicRange {
        switch transfer {
        case "arib-std-b67": return .hlg
        case "smpte2084": return .pq
        default: return .sdr
        }
    }

    /// The matrix to decode with: the declared one, or the players' guess from the picture
    /// size when none is declared (HD and up: BT.709; smaller: BT.601).
    package func sourceMatrix(width: Int, height: Int) -> String {
        if matrix != "unknown" && matrix != "unspecified" && matrix != "reserved" { return matrix }
        return width >= 1280 || height >= 720 ? "bt709" : "smpte170m"
    }

    /// Primaries likewise: declared, or BT.2020 for HDR, BT.709 otherwise.
    package var sourcePrimaries: String {
        if primaries != "unknown" && primaries != "unspecified" && primaries != "reserved" { return primaries }
        return dynamicRange == .sdr ? "bt709" : "bt2020"
    }
}

/// How HDR is brought into SDR range (FFmpeg's tonemap filter), in linear light where 1.0 is
/// HDR reference white (203 cd/m2, BT.2408) = SDR white.
///
/// The default is mobius with its knee at 0.5: everything up to half of SDR white (code 186 of
/// 235) passes unchanged, brighter light rolls off smoothly instead of clipping. Measured on the
/// colour fixtures (SDR pattern carried in HLG and PQ): 75% white comes out at Y 180 (SDR 180),
/// where hable gives 122 (a dark, filmic look) and clip 180 but loses every highlight.
package enum Tonemap: String, Sendable, CaseIterable {
    /// Linear up to a knee (0.5), then a smooth roll-off: closest to the source below the knee.
    case mobius
    /// Filmic curve: keeps highlight detail, darkens mid-tones noticeably.
    case hable
    case reinhard
    /// Hard clip at SDR white: exact below it, highlights lost.
    case clip
}

/// What a clip's colour needs on its way to BT.709 limited range.
package enum ColourConversion: Sendable, Equatable {
    /// Already BT.709 (declared, or HD guessed): nothing beyond range.
    case none
    /// SDR with another matrix (BT.601, BT.2020...): matrix conversion only, as players do.
    case matrix(from: String)
    /// HDR: linearise, tone-map, convert primaries and matrix (zscale + tonemap).
    case toneMap(transfer: String, primaries: String, matrix: String, range: String, tonemap: Tonemap)
    /// HDR, but this FFmpeg build lacks zscale: matrix conversion only (looks washed out).
    case unmappedHDR(matrix: String)

    /// Whether the picture is tone-mapped (HLG, PQ): done at each picture's own size.
    package var isToneMapped: Bool {
        if case .toneMap = self { return true }
        return false
    }

    package var summary: String {
        switch self {
        case .none: return "none"
        case let .matrix(from): return "matrix \(from) -> bt709"
        case let .toneMap(transfer, _, _, _, tonemap): return "tone-mapped \(transfer) -> bt709 (\(tonemap.rawValue))"
        case let .unmappedHDR(matrix): return "matrix \(matrix) -> bt709 only (no zscale: not tone-mapped)"
        }
    }

    package static func plan(
        for colour: ColourInfo, width: Int, height: Int, tonemap: Tonemap, canToneMap: Bool
    ) -> ColourConversion {
        let matrix = colour.sourceMatrix(width: width, height: height)
        if colour.dynamicRange != .sdr {
            guard canToneMap else { return .unmappedHDR(matrix: matrix) }
            return .toneMap(
                transfer: colour.transfer, primaries: colour.sourcePrimaries, matrix: matrix,
                range: colour.range == "pc" ? "pc" : "tv", tonemap: tonemap)
        }
        return matrix == "bt709" ? .none : .matrix(from: matrix)
    }

    /// The filters after the scaler (which has already made the picture small and the range
    /// limited, for SDR).
    var filters: [String] {
        switch self {
        case .none: return []
        case let .matrix(from), let .unmappedHDR(from):
            // fast: matrix only, no gamut or gamma change (what players do for BT.601 video).
            // (The filter insists on input primaries and transfer; equal to the output's, they
            // leave the conversion a pure matrix change.)
            return [
                "colorspace=all=bt709:ispace=\(from):iprimaries=bt709:itrc=bt709:irange=tv:range=tv:fast=1"
                    + ":format=yuv444p"
            ]
        case let .toneMap(transfer, primaries, matrix, range, tonemap):
            // zscale (libzimg) + tonemap: the CPU path every mainstream FFmpeg build has (Debian,
            // Homebrew). libplacebo needs Vulkan, tonemap_opencl/vaapi a GPU, and colorspace knows
            // neither HLG nor PQ. Runs after the scaler, on the 320x240 picture: ~1-2 ms a frame
            // here, against ~38 ms at 1080p.
            // Linear light scaled so 203 nits (HDR reference white, BT.2408) is 1.0 = SDR white;
            // tone-map in float RGB; back to BT.709 gamma, matrix and limited range.
            let zrange = range == "pc" ? "full" : "limited"
            return [
                "zscale=tin=\(transfer):pin=\(primaries):min=\(matrix):rin=\(zrange):t=linear:npl=203",
                "format=gbrpf32le",
                "zscale=p=bt709",
                "tonemap=tonemap=\(tonemap.rawValue):desat=0" + (tonemap == .mobius ? ":param=0.5" : ""),
                "zscale=t=bt709:m=bt709:r=limited",
            ]
        }
    }
}
