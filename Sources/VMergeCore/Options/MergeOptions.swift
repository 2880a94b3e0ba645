import Foundation

/// Everything that shapes one merge, independent of how it was asked for (CLI, batch, watch):
/// only what the option rows set. What a run carries besides (cancel, confinement, its key, the
/// build's capabilities) is its `MergeContext`.
package struct MergeOptions: Sendable, Equatable {
    /// Clips whose video lasts less than this many seconds are dropped; 0 keeps all.
    package var minDuration: Double = 2.0
    package var width: Int = 320
    package var aspect = Rational(4, 3)
    package var frameRate = Rational(30, 1)
    package var quality: Quality = .medium
    /// x264's constant rate factor and speed preset when given (--crf, --preset); otherwise
    /// the quality's.
    package var crf: Double?
    package var preset: X264Preset?
    package var effectiveCRF: Double { crf ?? Double(quality.crf) }
    package var effectivePreset: X264Preset { preset ?? quality.x264Preset }
    /// x264 codes losslessly (CRF 0) only in its High 4:4:4 Predictive profile (and refuses High).
    package var x264Profile: String { effectiveCRF == 0 ? "high444" : quality.x264Profile }
    /// The AAC bit rate: the quality's stereo rate, scaled to the channel count.
    package var audioBitRate: Int { quality.audioBitRate.multipliedSaturating(by: channels) / 2 }
    package var sampleRate: Int = 44_100
    package var channels: Int = 2
    package var overwrite = false
    package var skipInvalid = false
    /// The output stops at this many seconds (rounded down to a whole frame); nil: no limit.
    package var maxDuration: Double?
    /// The output file never grows past this many bytes; nil: no limit.
    package var maxSize: Int64?
    /// Larger pictures are refused before decoding (width x height).
    package var maxPixels = Limits.defaultMaxPixels
    /// Corrupt packets stop the run instead of being concealed.
    package var strict = false
    /// Write no creation time, place, device or software tags into the output.
    package var stripMetadata = false
    /// How HDR clips are brought to SDR.
    package var tonemap: Tonemap = .mobius
    /// Which pictures the video decoder may leave without its deblocking filter.
    package var skipDeblocking: SkipDeblocking = .auto
    /// --poster: a JPEG of the output's picture, this file name in the output's folder, at
    /// `posterAt` seconds (default 1 s, or the middle of a shorter output). "{name}" in it stands
    /// for the output's name without its extension, so the jobs of a batch sharing a folder each
    /// get their own.
    package var poster: String?
    package var posterAt: Double?

    /// The poster's path for `output`: its name, "{name}" filled in, in the output's folder.
    package func posterPath(forOutput output: String) -> String? {
        poster.map { template in
            let (folder, name) = SafeFile.split(output)
            let file = template.replacingOccurrences(of: "{name}", with: FileName(name).deletingExtension.escaped)
            return folder == "." ? file : folder + "/" + file
        }
    }

    /// Where on the output the poster is taken, for an output of `durationMicros`.
    package func posterMicros(outputDurationMicros durationMicros: Int64) -> Int64 {
        if let posterAt { return min(Int64(saturating: posterAt * 1e6), max(0, durationMicros - 1)) }
        return durationMicros >= 2_000_000 ? 1_000_000 : durationMicros / 2
    }

    /// --loudness: each clip's sound gained to this integrated loudness (LUFS).
    package var loudness: Double?

    /// One chapter per kept clip (--chapters).
    package var chapters = false
    /// How a clip of another shape fills the output picture.
    package var fit: Fit = .crop
    /// --rendition: more pictures of the same timeline, each a file of its own (the job's own,
    /// `width` by `aspect`, is not among them).
    package var renditions: [Rendition] = []

    /// The options rendition `rendition` is made with: its size and aspect, and its fit, CRF and
    /// preset where it names them; everything else (timeline, sound, limits) is the job's.
    package func shaped(as rendition: Rendition) -> MergeOptions {
        var shaped = self
        shaped.width = rendition.width
        shaped.aspect = rendition.aspect
        shaped.fit = rendition.fit ?? fit
        shaped.crf = rendition.crf ?? crf
        shaped.preset = rendition.preset ?? preset
        shaped.renditions = []
        return shaped
    }

    /// Every picture the job makes: its own first, then each rendition's.
    package var pictures: [MergeOptions] {
        var own = self
        own.renditions = []
        return [own] + renditions.map(shaped(as:))
    }

    package init() {}

    /// The longest duration an option may name (about 115 days): far beyond any recording, and
    /// far from where microsecond arithmetic on the frame grid could overflow.
    package static let longestDuration: Double = 10_000_000

    package var outputSize: (width: Int, height: Int) { VMergeCore.outputSize(width: width, aspect: aspect) }

    /// Why the output picture cannot be made (Limits.maxOutputSide, minOutputSide), or nil.
    package func outputSizeProblem(naming: OptionNaming = .commandLine) -> String? {
        let (w, h) = outputSize
        let sides = Limits.minOutputSide(fit: fit)...Limits.maxOutputSide
        guard !sides.contains(w) || !sides.contains(h) else { return nil }
        return
            "\(naming("width", "\(width)")) with \(naming("aspect", "\(aspect.num):\(aspect.den)")) makes a \(w)x\(h) "
            + "picture: each side must be \(sides.lowerBound) to \(sides.upperBound) pixels"
            + (fit == .blur ? " with \(naming("fit", "blur"))" : "")
    }

    /// Roughly how many output frames a second a merge makes at this picture size (x264 preset
    /// medium, Limits.encodedPixelsPerSecond): for the warning that a large output will take long.
    package var encodedFramesPerSecond: Double {
        let (w, h) = outputSize
        return Limits.encodedPixelsPerSecond / (Double(w) * Double(h))
    }

    /// Roughly how long encoding `seconds` of output takes.
    package func encodeSecondsEstimate(forOutputSeconds seconds: Double) -> Double {
        seconds * frameRate.doubleValue / encodedFramesPerSecond
    }

    /// The output's frame and sample grid.
    package var timeline: Timeline { Timeline(frameRate: frameRate, sampleRate: sampleRate) }

    /// Whether a clip whose video lasts this long is kept by --min-duration.
    package func isLongEnough(_ durationMicros: Int64) -> Bool {
        minDuration <= 0 || durationMicros >= Int64((minDuration * 1_000_000).rounded())
    }

    /// --max-duration on the output frame grid: whole frames only, so the last frame is never
    /// shown for less than its time.
    package var maxDurationMicros: Int64? {
        guard let maxDuration else { return nil }
        let frames = (maxDuration * frameRate.doubleValue + 1e-9).rounded(.down)
        return timeline.micros(ofFrame: Int64(frames))
    }
}
