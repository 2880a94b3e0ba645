import Foundation

extension MergeJob {
    /// The output picture's shape, width to height, such as 4:3 or 16:9; from 1:10 to 10:1.
    public struct Aspect: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The width's share, such as 4 of 4:3.
        public var width: Int
        /// The height's share, such as 3 of 4:3.
        public var height: Int

        /// The shape `width`:`height`; reduced and checked when the job runs.
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }

        /// 4:3, the default.
        public static let standard = Aspect(width: 4, height: 3)
        /// 16:9, widescreen.
        public static let widescreen = Aspect(width: 16, height: 9)

        /// "4:3".
        public var description: String { "\(width):\(height)" }
    }

    /// How a clip of another shape than the output fills the picture.
    public enum Fit: String, Sendable, Hashable, Codable, CaseIterable {
        /// The centred region of the output's aspect; the rest is cut off.
        case crop
        /// All of the picture, with black bars.
        case pad
        /// All of the picture over a blurred, darkened copy of itself scaled to fill.
        case blur
    }

    /// The encoder's trade between size and quality: x264's CRF 28, 23 or 18, with AAC at 64, 96
    /// or 128 kb/s.
    public enum Quality: String, Sendable, Hashable, Codable, CaseIterable {
        /// CRF 28, AAC 64 kb/s: the smallest file.
        case low
        /// CRF 23, AAC 96 kb/s (the default).
        case medium
        /// CRF 18, AAC 128 kb/s: the best picture.
        case high
    }

    /// x264's speed presets, fastest first.
    public enum Preset: String, Sendable, Hashable, Codable, CaseIterable {
        case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo
    }

    /// How HDR is brought to SDR.
    public enum ToneMapping: String, Sendable, Hashable, Codable, CaseIterable {
        /// Exact up to half of SDR white, then a smooth roll-off of the highlights (the default).
        case mobius
        /// Filmic: keeps highlight detail, darker mid-tones.
        case hable
        /// Between the two.
        case reinhard
        /// Cut at SDR white.
        case clip
    }

    /// Which pictures the decoder leaves without its deblocking filter (the filter smooths block
    /// edges that shrinking a picture hides).
    public enum SkipDeblocking: String, Sendable, Hashable, Codable, CaseIterable {
        /// ``unreferenced`` when a clip shrinks 3x or more, else ``never`` (the default).
        case auto
        /// Every picture deblocked: the exact decode.
        case never
        /// Skipped on pictures no other picture predicts from.
        case unreferenced
        /// Skipped on all pictures: faster, but a softer and larger output.
        case always
    }
}
