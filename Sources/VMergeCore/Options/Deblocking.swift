/// `--skip-deblocking`: which pictures the video decoder may leave without its in-loop
/// deblocking filter (H.264, HEVC; FFmpeg's `skip_loop_filter`).
///
/// Deblocking smooths the edges of the 4x4-16x16 blocks a codec predicts and transforms. After
/// shrinking by 3x or more those edges fall inside one output pixel, and at phone bit rates they
/// are faint; the filter is still a fixed share of the decoder's work (BENCH.md, issue 36: 13 %
/// of decoding set P). Skipping it changes the decoded pictures, so it was measured per set
/// against the full decode: on unreferenced pictures within 0.005 dB and 0.4 % in size on six
/// sets; on all pictures 0.03-0.30 dB off and 4-31 % larger, as x264 spends bits on the block
/// edges carried from picture to picture. Hence `auto`.
package enum SkipDeblocking: String, Sendable, CaseIterable {
    /// `unreferenced` when the clip shrinks by 3x or more, otherwise `never`.
    case auto
    /// Every picture deblocked, as the standard decodes it.
    case never
    /// Only pictures no other picture predicts from: an error stays in the picture it is in.
    case unreferenced
    /// Every picture: the most saved, but a reference picture's unfiltered edges are carried
    /// into the pictures predicted from it.
    case always

    /// The shrink at which `auto` starts skipping.
    package static let autoShrink = 3.0

    /// What this choice means for a clip shrunk by `downscale` (source pixels per output pixel).
    package func pictures(shrinkingBy downscale: Double) -> UndeblockedPictures {
        switch self {
        case .auto: return downscale >= SkipDeblocking.autoShrink ? .unreferenced : .none
        case .never: return .none
        case .unreferenced: return .unreferenced
        case .always: return .all
        }
    }
}

/// The pictures one clip's decoder leaves without deblocking.
package enum UndeblockedPictures: Sendable, Equatable {
    case none
    case unreferenced
    case all
}
