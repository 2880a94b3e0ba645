/// Output quality presets, in the spirit of AVAssetExportPreset{Low,Medium,High}Quality.
package enum Quality: String, Sendable, CaseIterable, Codable {
    case low, medium, high

    /// libx264 constant rate factor (lower is better quality, larger file).
    package var crf: Int {
        switch self {
        case .low: return 28
        case .medium: return 23
        case .high: return 18
        }
    }

    /// AAC-LC bit rate in bits per second, for stereo.
    package var audioBitRate: Int {
        switch self {
        case .low: return 64_000
        case .medium: return 96_000
        case .high: return 128_000
        }
    }

    /// libx264 speed preset; the same for every quality so only CRF and bit rate differ.
    package var x264Preset: X264Preset { .medium }
    package var x264Profile: String { "high" }
}

/// x264's speed presets, fastest first: slower ones spend more time for a smaller file at the
/// same picture.
package enum X264Preset: String, Sendable, CaseIterable, Codable {
    case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo
}
