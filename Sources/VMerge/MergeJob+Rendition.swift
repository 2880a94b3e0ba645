import Foundation
internal import VMergeCore

extension MergeJob {
    /// One more file of the same merge (the command line's `--rendition`): its picture size, and
    /// so its aspect, with its own fit, CRF and preset where they differ from the job's. Every
    /// clip is decoded once for all of them; each clip's upright picture is cut to each
    /// rendition's own aspect, centred. The file goes in the output's folder, named
    /// `<output's name>-<name>.mp4` unless ``fileName`` says otherwise, published with the output
    /// as one set.
    ///
    /// ```swift
    /// job.renditions = [.nineSixteen1080, MergeJob.Rendition(width: 720, height: 720, fit: .blur)]
    /// ```
    public struct Rendition: Sendable, Hashable, Codable {
        /// Its name: a preset's (`9x16-1080`), or `WIDTHxHEIGHT`; the default file name ends with it.
        public var name: String
        /// Its picture's size in pixels, each side even.
        public var width: Int
        public var height: Int
        /// How a clip of another shape fills it; `nil`: the job's ``MergeJob/fit``.
        public var fit: Fit?
        /// x264's constant rate factor for it; `nil`: the job's.
        public var crf: Double?
        /// x264's speed preset for it; `nil`: the job's.
        public var preset: Preset?
        /// Its file's name in the output's folder (no `/`); `nil`: `<output's name>-<name>.mp4`.
        public var fileName: String?

        /// A picture of this size (named `WIDTHxHEIGHT`), optionally fitted, encoded and named its own way.
        public init(
            width: Int, height: Int, fit: Fit? = nil, crf: Double? = nil, preset: Preset? = nil,
            fileName: String? = nil
        ) {
            self.init(name: "\(width)x\(height)", width: width, height: height)
            (self.fit, self.crf, self.preset, self.fileName) = (fit, crf, preset, fileName)
        }

        private init(name: String, width: Int, height: Int) {
            (self.name, self.width, self.height) = (name, width, height)
        }

        private static func preset(_ preset: VMergeCore.Rendition.Preset) -> Rendition {
            Rendition(name: preset.rawValue, width: preset.size.width, height: preset.size.height)
        }

        /// 320x240, the job's own picture by default.
        public static let fourThree240 = preset(.fourThree240)
        /// 640x480.
        public static let fourThree480 = preset(.fourThree480)
        /// 1280x720.
        public static let sixteenNine720 = preset(.sixteenNine720)
        /// 1080x1920: Shorts, Reels, TikTok.
        public static let nineSixteen1080 = preset(.nineSixteen1080)
        /// 720x720.
        public static let square720 = preset(.square720)

        /// The rendition as the merge takes it, by the command line's rules (its text, then read).
        func runnable() throws(MergeError) -> VMergeCore.Rendition {
            let named = VMergeCore.Rendition.Preset(rawValue: name).map { $0.size == (width, height) } ?? false
            var text = named ? name : "\(width)x\(height)"
            if let crf { text += ":crf=\(crf)" }
            if let fit { text += ":fit=\(fit.rawValue)" }
            if let preset { text += ":preset=\(preset.rawValue)" }
            if let fileName { text += "=" + fileName }
            switch VMergeCore.Rendition.parse(text) {
            case let .success(rendition): return rendition
            case let .failure(problem):
                throw MergeError(code: .invalidJob, file: nil, message: "invalid rendition \(name): \(problem)")
            }
        }
    }
}
