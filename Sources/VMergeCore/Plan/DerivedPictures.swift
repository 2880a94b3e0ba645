/// Which of a clip's pictures (the job's own and each rendition's) are scaled down from another
/// picture's finished frames rather than from the decoded ones.
///
/// Pictures that show the same window of the clip (same crop, --fit crop) on the same frame grid
/// differ only in size: the smaller is the larger scaled down. Scaling a 640x480 picture to
/// 320x240 costs a tenth of scaling the 1440x1080 window it came from (set R's R1: 1.8 s of CPU
/// of 46 s), and the result is 56 dB from the direct one, far inside x264's own error at the
/// presets' CRF (29 dB), so each file's PSNR stays within 0.01 dB of the file made alone. The
/// largest picture of such a group (the first of equals) is made from the decoded pictures and
/// every other from it, one step, never a chain.
///
/// Only where both steps really shrink (`minimumShrink`, or a picture of the largest's very
/// size, which is then a copy of it): the largest at least 1.5x from the source, the smaller at
/// least 1.5x from the largest. Nearer 1:1 the second filtering shows, in chroma first (a
/// hostile tester's noisy clips, against the file made alone: the largest 1:1 from a 640x480
/// BT.601 source, colour converted at full size, -0.39 dB; 642x482 beside 644x484, -0.64 dB;
/// where both shrink 1.69x and 2x, -0.03 dB). So a picture scaled up is never a source either:
/// up then down again would blur what direct scaling keeps.
///
/// A picture whose window is padded or blurred (--fit pad|blur) is always made from the decoded
/// pictures: its framing is its own.
/// And so is every picture of a tone-mapped clip (HLG, PQ): each picture is scaled in the
/// source's HDR coding and tone-mapped at its own size (`FilterGraphs.video`), and tone mapping
/// does not commute with scaling: scaled after it, at the SDR coding, the edges of a test
/// pattern came out 34 dB from the picture made alone. (A matrix change does commute: it is
/// linear in the coded values.)
package enum DerivedPictures {
    /// One picture as planned: its window of the coded picture, whether it is fitted (padded or
    /// blurred), its output size (upright) and how many source pixels make one of its pixels.
    package struct Picture: Sendable, Equatable {
        package var crop: CropRect
        package var fitted: Bool
        package var width: Int, height: Int
        package var downscale: Double

        package init(crop: CropRect, fitted: Bool, width: Int, height: Int, downscale: Double) {
            (self.crop, self.fitted, self.width, self.height, self.downscale) = (crop, fitted, width, height, downscale)
        }
    }

    /// How much each step shrinks the picture at least, on both axes, for one picture to be made
    /// from another: the largest from the source, the smaller from the largest.
    package static let minimumShrink = 1.5

    /// For each picture, the index of the picture it is scaled from, or nil when it is made from
    /// the decoded pictures.
    package static func sources(of pictures: [Picture], colour: ColourConversion) -> [Int?] {
        var sources = [Int?](repeating: nil, count: pictures.count)
        if colour.isToneMapped { return sources }
        for (i, picture) in pictures.enumerated() where !picture.fitted {
            let group = pictures.indices.filter { !pictures[$0].fitted && pictures[$0].crop == picture.crop }
            // The largest by area, the first of equals: every other fits inside it.
            guard
                let root = group.max(by: {
                    (pictures[$0].width * pictures[$0].height, -$0) < (pictures[$1].width * pictures[$1].height, -$1)
                }), root != i
            else { continue }
            let from = pictures[root]
            let copy = (picture.width, picture.height) == (from.width, from.height)
            let shrinks =
                from.downscale >= minimumShrink && Double(from.width) >= Double(picture.width) * minimumShrink
                && Double(from.height) >= Double(picture.height) * minimumShrink
            if copy || shrinks { sources[i] = root }
        }
        return sources
    }

    /// The chain that makes a picture of `width`x`height` from another's finished frames (8-bit
    /// 4:2:0, BT.709 limited range, upright, on the output's frame grid already): a scale, no
    /// more. The range and matrix are given, in and out alike, not read from the frames: a
    /// tone-mapped picture's frames still carry the source's HDR tags (or full range), and a
    /// scaler that believed them would convert colours that are already right (HLG and PQ
    /// clips: 34 dB from the reference).
    package static func filter(width: Int, height: Int) -> String {
        "scale=w=\(width):h=\(height):flags=bicubic:in_range=tv:out_range=tv:in_color_matrix=bt709"
            + ":out_color_matrix=bt709,format=pix_fmts=yuv420p,setsar=1"
    }
}
