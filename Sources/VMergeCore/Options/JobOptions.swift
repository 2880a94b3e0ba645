import Foundation

/// One option a job can carry, declared once: its name (`--name` on the command line, `"name"`
/// in a job file's "options"), its help, what its value is, how it is read and checked, and what
/// it contributes to the job key. The command line builds its help, man page and completions for
/// these from the same rows.
package struct JobOption: Sendable {
    package enum Kind: Sendable, Equatable {
        /// true/false: present on the command line, a JSON boolean in a job file.
        case flag
        /// A number (or a number with units) : a JSON number or string.
        case number
        /// One of these words: a JSON string.
        case choice([String])
        /// A file's name: a JSON string; shells offer file names for it.
        case fileName
        case text
    }

    package let name: String
    /// The value's placeholder in help ("seconds"); nil for a flag.
    package let placeholder: String?
    package let help: String
    package let kind: Kind
    /// Whether the value shapes the output (and so the job key).
    package let keyed: Bool
    /// A value the job key and a queued job's spec leave out: the default of an option added after
    /// keys were first made, so that jobs not using it keep the keys (and the done outputs) they
    /// had, and workers of the release before still run them.
    var unkeyedDefault: String? = nil
    /// Reads `text` (a flag: "true" or "false") into the settings, or says why not.
    let parse: @Sendable (String, inout JobSettings) throws(JobOptionError) -> Void
    /// The value in force, as the job key records it.
    let describe: @Sendable (JobSettings) -> String
    /// Its name in the report's "options" and the value in force there.
    package let reportKey: String
    let report: @Sendable (JobSettings) -> JSON

    package func reportValue(in settings: JobSettings) -> JSON { report(settings) }

    /// The value in force, unless it is the one keys and specs leave out.
    package func recordedValue(in settings: JobSettings) -> String? {
        let value = value(in: settings)
        return value == unkeyedDefault ? nil : value
    }

    package func apply(_ text: String, to settings: inout JobSettings) throws(JobOptionError) {
        try parse(text, &settings)
    }

    package func value(in settings: JobSettings) -> String { describe(settings) }

    func invalid(_ text: String, _ expected: String) -> JobOptionError {
        JobOptionError.invalidValue(text, for: name, expected: expected)
    }

    package static func named(_ name: String) -> JobOption? { all.first { $0.name == name } }

    /// Every option a job file may carry, in help order.
    package static let all: [JobOption] = [
        minDuration.row, width.row, aspect.row, fit.row, fps.row, quality.row, crf.row, preset.row, tonemap.row,
        skipDeblocking.row, loudness.row, chapters.row, poster.row, posterAt.row, skipInvalid.row, strict.row,
        stripMetadata.row, maxPixels.row, maxDuration.row, maxSize.row, minFree.row,
    ]

    // MARK: the rows (their shapes are in JobOption+Typed.swift)

    package static let minDuration = time(
        "min-duration", placeholder: "seconds",
        help: "Drop clips whose video is shorter than this (seconds, or m:ss); 0 keeps every clip. (default: 2.0)",
        range: .anyLength, store: { $1.merge.minDuration = $0 }, describe: { "\($0.merge.minDuration)" },
        reportKey: "min_duration", report: { .number($0.merge.minDuration) })

    package static let width = value(
        "width", placeholder: "n",
        help: "Output width in pixels, even; the height follows from the aspect. (default: 320)",
        read: { isPlainNumber($0) ? Int($0) : nil }, rule: .width, store: { $1.merge.width = $0 },
        describe: { "\($0.merge.width)" }, reportKey: "width", report: { .int($0.merge.width) })

    package static let aspect = value(
        "aspect", placeholder: "w:h", help: "Output aspect; each clip is centre-cropped to it. (default: 4:3)",
        kind: .text,
        read: { text in
            isPlainFraction(text, separators: [":", "/"])
                ? Rational(parsing: text, separators: [":", "/"])?.reduced : nil
        },
        rule: .aspect, store: { $1.merge.aspect = $0 }, describe: { "\($0.merge.aspect.num):\($0.merge.aspect.den)" },
        reportKey: "aspect", report: { .string("\($0.merge.aspect.num):\($0.merge.aspect.den)") })

    package static let fit = choice(
        "fit", placeholder: "crop|pad|blur",
        help: "How a clip of another shape (a portrait clip in a landscape output) fills the picture: crop "
            + "cuts it to the aspect, centred; pad shows all of it with black bars; blur shows all of it "
            + "over a blurred, darkened copy of itself scaled to fill, as phone apps do. (default: crop)",
        \MergeOptions.fit)

    package static let fps = value(
        "fps", placeholder: "rate", help: "Constant output frame rate: 30, 29.97 or 30000/1001. (default: 30)",
        read: { isPlainFraction($0, separators: ["/"]) ? Rational(parsing: $0)?.reduced : nil }, rule: .frameRate,
        store: { $1.merge.frameRate = $0 }, describe: { $0.merge.frameRate.description }, reportKey: "frame_rate",
        report: { .string($0.merge.frameRate.description) })

    package static let quality = choice(
        "quality", placeholder: "low|medium|high",
        help: "low: x264 CRF 28, AAC 64 kb/s; medium: CRF 23, AAC 96 kb/s; high: CRF 18, AAC 128 kb/s "
            + "(x264 preset medium, High profile, AAC-LC 44.1 kHz stereo). (default: medium)", \MergeOptions.quality,
        // HandBrake's --quality is a number: its CRF.
        hint: { isPlainNumber($0) ? "; a CRF is --crf \($0)" : "" })

    package static let crf = value(
        "crf", placeholder: "n",
        help: "x264's constant rate factor, 0 (lossless) to 51: lower is a better picture and a larger file; "
            + "about 6 halves or doubles the size. Overrides the quality's CRF. (default: from --quality)",
        read: { isPlainNumber($0) && !$0.contains("e") && !$0.contains("E") ? Double($0) : nil }, rule: .crf,
        store: { $1.merge.crf = $0 },
        // Keyed by the value in force: --crf 23 with medium quality is the same output as neither.
        describe: { formatDecimal($0.merge.effectiveCRF) }, reportKey: "crf",
        report: { .number($0.merge.effectiveCRF) })

    package static let preset = choice(
        "preset", placeholder: "name",
        help: "x264's speed preset: " + X264Preset.allCases.map(\.rawValue).joined(separator: ", ")
            + "; slower ones make a smaller file at the same picture. (default: medium)",
        inForce: { $0.merge.effectivePreset }, store: { $1.merge.preset = $0 })

    package static let tonemap = choice(
        "tonemap", placeholder: "mobius|hable|reinhard|clip",
        help: "How HDR clips (HLG, PQ, Dolby Vision 8.x) are brought to SDR: mobius keeps everything up to "
            + "half of SDR white exact and rolls off highlights, hable is filmic and darker, reinhard in "
            + "between, clip cuts at SDR white. (default: mobius)", \MergeOptions.tonemap)

    package static let skipDeblocking = choice(
        "skip-deblocking", placeholder: "auto|never|unreferenced|always",
        help: "Which pictures the decoder leaves without its deblocking filter, which smooths block edges "
            + "that shrinking hides: never decodes exactly; unreferenced skips it on pictures no other "
            + "predicts from; always on all of them (faster, but softer and larger output). auto: "
            + "unreferenced when a clip shrinks 3x or more, else never. (default: auto)",
        \MergeOptions.skipDeblocking, unkeyedDefault: SkipDeblocking.auto)

    package static let chapters = flag(
        "chapters",
        help: "Mark each kept clip as a chapter of the output, titled with its file name without the "
            + "extension, or its job-file input's \"title\" (players list them; ffprobe -show_chapters).",
        \MergeOptions.chapters)

    package static let loudness = optionalNumber(
        "loudness", placeholder: "LUFS",
        help: "Even out the sound: each clip's gained to this integrated loudness (EBU R128), such as -16, "
            + "its true peak held at or under -1 dBTP; silent clips stay silent. (default: off)",
        rule: .loudness, \MergeOptions.loudness, reportKey: "loudness")

    package static let poster = value(
        "poster", placeholder: "name.jpg",
        help: "Also write a JPEG of the output's picture (its size) under this name beside the output, for "
            + "a web page's <video poster>; replaced only with -y, as the output is. {name} stands for the "
            + "output's name without its extension (batch: one poster per job).", kind: .fileName,
        // Keyed: part of what the job makes, so a batch re-run with another poster is not "done".
        keyed: true, read: { $0 }, rule: .posterName, store: { $1.merge.poster = $0 },
        describe: { $0.merge.poster ?? "-" }, reportKey: "poster", report: { .string($0.merge.poster) })

    package static let posterAt = optionalTime(
        "poster-at", placeholder: "seconds",
        help: "Where on the output the poster is taken (seconds, m:ss or h:mm:ss). (default: 1, or the middle of a "
            + "shorter output)",
        range: .anyLength, \MergeOptions.posterAt, reportKey: "poster_at")

    package static let skipInvalid = flag(
        "skip-invalid", help: "Drop inputs that cannot be read, with a warning, instead of stopping.",
        \MergeOptions.skipInvalid)

    package static let strict = flag(
        "strict",
        help: "Stop at the first corrupt packet instead of concealing it (players skip them; the default "
            + "counts them in one warning per clip).", \MergeOptions.strict)

    package static let stripMetadata = flag(
        "strip-metadata",
        help: "Write no creation time, place (GPS), device (make, model) or software tags into the output. "
            + "By default they are carried over from the first kept clip.", \MergeOptions.stripMetadata)

    package static let maxPixels = value(
        "max-pixels", placeholder: "WxH|n",
        help: "Refuse, before decoding, clips whose picture has more pixels than this. (default: 8192x8192)",
        read: pixels(of:), rule: .maxPixels, store: { $1.merge.maxPixels = $0 },
        describe: { "\($0.merge.maxPixels)" }, reportKey: "max_pixels", report: { .int($0.merge.maxPixels) })

    /// "WxH" (each side 1 to 65536) as its pixels, or a plain count.
    private static func pixels(of text: String) -> Int? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false).map {
            isPlainNumber(String($0)) ? Int($0) : nil
        }
        if parts.count == 2, let w = parts[0], let h = parts[1], (1...65_536).contains(w), (1...65_536).contains(h) {
            return w * h
        }
        return parts.count == 1 ? parts[0] : nil
    }

    package static let maxDuration = optionalTime(
        "max-duration", placeholder: "seconds",
        help: "Stop the output at this length (seconds, m:ss or h:mm:ss); the clip that crosses it is cut there.",
        range: .someLength, \MergeOptions.maxDuration,
        reportKey: "max_duration")

    package static let maxSize = value(
        "max-size", placeholder: "size",
        help: "Never write more than this many bytes: the file ends cleanly before the frame that would "
            + "pass it. Sizes: 500K, 160M, 2G (K/M/G = 1024 steps), 160MB (1000 steps), or bytes.",
        read: ByteSize.parse, rule: .maxSize, store: { $1.merge.maxSize = $0 },
        describe: { $0.merge.maxSize.map { "\($0)" } ?? "-" }, reportKey: "max_size",
        report: { .int($0.merge.maxSize) })

    package static let minFree = value(
        "min-free", placeholder: "size",
        help: "Refuse to start when the output folder has less free space than this. "
            + "(default: 1M plus an estimate of the output)", keyed: false,
        read: ByteSize.parse, rule: .minFree, store: { $1.minFree = $0 },
        describe: { $0.minFree.map { "\($0)" } ?? "-" }, reportKey: "min_free", report: { .int($0.minFree) })
}

/// "23", "20.5": a decimal without trailing zeros, for keys, messages and x264's settings.
package func formatDecimal(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
}
