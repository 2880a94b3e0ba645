import VMergeCore

/// Options of ffmpeg, HandBrakeCLI and sox that people type out of habit, each with the vmerge
/// way of saying it: "vmerge: unknown option '-r'; the frame rate is --fps 25". Looked up by the
/// whole argument before it is split into single-letter flags, so `-ss` is not reported as '-s'.
/// A hint suggests only what vmerge then accepts: the value is translated (`-s hd720` is
/// `--width 1280`), or the hint says how.
enum ForeignOptions {
    /// What to tell someone who typed `spelling` with `value` after it (nil at the end).
    struct Hint: Sendable {
        let spellings: [String]
        /// The tools it comes from, and a value to show it with, for the README's table.
        let tool: String
        var example: String? = nil
        /// The vmerge option it points to: where a command lacks it (a worker has no --width), the
        /// hint says which commands have it instead.
        var suggests: String? = nil
        let text: @Sendable (_ value: String?) -> String
    }

    /// `value` if `option` accepts it, else `example`: a hint suggests only what works.
    private static func accepted(_ value: String?, by option: JobOption, or example: String) -> String {
        guard let value = plain(value) else { return example }
        var settings = JobSettings()
        do throws(JobOptionError) {
            try option.apply(value, to: &settings)
            try settings.validate()
        } catch {
            return example
        }
        return value
    }

    /// The value the user gave when it is a time vmerge reads (seconds, m:ss), else `example`.
    private static func time(_ value: String?, or example: String) -> String {
        guard let value = plain(value), JobOption.durationSeconds(value) != nil else { return example }
        return value
    }

    /// A value that reads as one (not the next option, not a path).
    private static func plain(_ value: String?) -> String? {
        guard let value, !value.isEmpty, !value.hasPrefix("-"), value.count <= 40,
            value.allSatisfy({ $0.isLetter || $0.isNumber || ".:/x".contains($0) })
        else { return nil }
        return value
    }

    /// ffmpeg's size names.
    static let sizeNames: [String: (Int, Int)] = [
        "sqcif": (128, 96), "qcif": (176, 144), "cif": (352, 288), "4cif": (704, 576), "qqvga": (160, 120),
        "qvga": (320, 240), "vga": (640, 480), "svga": (800, 600), "xga": (1024, 768), "wvga": (852, 480),
        "ntsc": (720, 480), "pal": (720, 576), "film": (352, 240), "hd480": (852, 480), "hd720": (1280, 720),
        "hd1080": (1920, 1080), "2k": (2048, 1080), "4k": (4096, 2160), "uhd2160": (3840, 2160), "uhd4320": (7680, 4320),
    ]

    /// The options a size value (640x480, hd720) comes to: an even --width, and --aspect unless 4:3.
    static func sizeOptions(_ value: String?) -> String? {
        guard let value = plain(value)?.lowercased() else { return nil }
        let parts = value.split(separator: "x").compactMap { Int($0) }
        guard let (w, h) = sizeNames[value] ?? (parts.count == 2 ? (parts[0], parts[1]) : nil), w > 0, h > 0 else {
            return nil
        }
        let width = w / 2 * 2
        guard (16...7680).contains(width) else { return nil }
        let aspect = Rational(w, h).reduced
        guard aspect != Rational(4, 3) else { return "--width \(width)" }
        guard (0.1...10).contains(aspect.doubleValue) else { return nil }
        return "--width \(width) --aspect \(aspect.num):\(aspect.den)"
    }

    /// sox's file types, which its -t names.
    private static let soxTypes: Set<String> = [
        "wav", "mp3", "flac", "aiff", "aif", "aifc", "ogg", "opus", "raw", "au", "caf", "m4a", "mp4", "mov", "amr", "gsm",
    ]

    static let hints: [Hint] = [
        Hint(spellings: ["-r", "--rate", "-framerate"], tool: "ffmpeg, HandBrakeCLI, sox", example: "25", suggests: "fps") {
            value in
            // sox's -r is the sample rate: far above any frame rate.
            if let rate = plain(value).flatMap(Double.init), rate >= 1000 {
                return "vmerge writes AAC at 44.1 kHz stereo; the frame rate is --fps"
            }
            return "the frame rate is --fps \(accepted(value, by: .fps.row, or: "25"))"
        },
        Hint(spellings: ["-s", "-w", "-X", "--maxWidth"], tool: "ffmpeg, HandBrakeCLI", example: "hd720", suggests: "width") {
            value in
            guard let options = sizeOptions(value) else {
                return "the size is --width <even pixels, 16 to 7680> (the height follows from --aspect, 4:3 by default)"
            }
            return "the size is \(options)"
                + (options.contains("--aspect") ? " (the height follows from the aspect)" : " (the height follows from --aspect, 4:3 by default)")
        },
        Hint(spellings: ["-l", "--height", "-Y", "--maxHeight"], tool: "HandBrakeCLI", suggests: "width") { _ in
            "the height follows from --width and --aspect (4:3 by default)"
        },
        Hint(
            spellings: ["-t", "--stop-at", "--duration"], tool: "ffmpeg, HandBrakeCLI, sox", example: "0:02:30",
            suggests: "max-duration"
        ) { value in
            // sox's -t is the file type.
            if let value = plain(value)?.lowercased(), soxTypes.contains(value) {
                return "the container follows the name given to -o: .mp4, .m4v or .mov"
            }
            return "the output's length is --max-duration \(accepted(value, by: .maxDuration.row, or: "60"))"
        },
        Hint(spellings: ["-ss", "--start-at", "-sseof"], tool: "ffmpeg, HandBrakeCLI", example: "5", suggests: "trim") {
            "a clip's start is --trim START,END after the file, e.g. a.mov --trim \(time($0, or: "2.5")),"
        },
        Hint(spellings: ["-to"], tool: "ffmpeg", example: "8", suggests: "trim") {
            "a clip's end is --trim START,END after the file, e.g. a.mov --trim ,\(time($0, or: "8")); "
                + "the output's length is --max-duration"
        },
        Hint(spellings: ["-fs"], tool: "ffmpeg", example: "16M", suggests: "max-size") {
            "the size limit is --max-size \(accepted($0, by: .maxSize.row, or: "16M"))"
        },
        Hint(spellings: ["-an", "-vn", "-sn", "-dn"], tool: "ffmpeg") { _ in
            "vmerge always writes video and sound (silence where a clip has none)"
        },
        Hint(
            spellings: ["-b:v", "-b", "-vb", "--vb", "-maxrate", "-bufsize", "--two-pass", "-2", "-T", "--turbo"],
            tool: "ffmpeg, HandBrakeCLI, sox", example: "1M"
        ) { _ in
            "vmerge sets the picture, not the bit rate: --crf 23 or --quality low|medium|high; "
                + "--max-size caps the file"
        },
        Hint(
            spellings: ["-b:a", "-ab", "--ab", "-B", "-ar", "-ac", "--arate", "-R", "--mixdown", "-6", "--channels"],
            tool: "ffmpeg, HandBrakeCLI, sox"
        ) { _ in "vmerge writes AAC at 44.1 kHz stereo; --quality sets its bit rate (64, 96 or 128 kb/s)" },
        Hint(spellings: ["-crf"], tool: "ffmpeg", example: "20", suggests: "crf") {
            "the CRF is --crf \(accepted($0, by: .crf.row, or: "23"))"
        },
        Hint(
            spellings: ["-qscale", "-q:v", "-qscale:v", "-global_quality", "-cq"], tool: "ffmpeg", example: "3"
        ) { _ in "the picture's quality is --crf 23 (0 to 51, lower is better) or --quality low|medium|high" },
        Hint(spellings: ["-preset", "--encoder-preset"], tool: "ffmpeg, HandBrakeCLI", example: "slow", suggests: "preset") {
            "x264's preset is --preset \(accepted($0, by: .preset.row, or: "slow"))"
        },
        Hint(
            spellings: ["-tune", "-profile:v", "-level", "-x264-params", "-x264opts", "-g", "-bf", "--encoder-profile",
                "--encoder-level", "--encopts"],
            tool: "ffmpeg, HandBrakeCLI"
        ) { _ in "vmerge sets x264 itself; its choices are --crf and --preset" },
        Hint(spellings: ["-aspect"], tool: "ffmpeg", example: "16:9", suggests: "aspect") {
            "the aspect is --aspect \(accepted($0, by: .aspect.row, or: "4:3"))"
        },
        Hint(
            spellings: ["-c:v", "-vcodec", "-c:a", "-acodec", "-e", "--encoder", "-E", "--aencoder", "-codec"],
            tool: "ffmpeg, HandBrakeCLI"
        ) { _ in "vmerge always writes H.264 and AAC" },
        Hint(spellings: ["-c"], tool: "ffmpeg, sox", example: "copy") { value in
            // sox's -c is the channel count.
            if let value = plain(value), Int(value) != nil { return "vmerge writes stereo sound (AAC, 44.1 kHz)" }
            return "vmerge always writes H.264 and AAC"
        },
        Hint(spellings: ["-pix_fmt", "-pixel_format"], tool: "ffmpeg", example: "yuv420p") { _ in
            "vmerge always writes 8-bit 4:2:0 (yuv420p), which every player plays; HDR clips are tone-mapped (--tonemap)"
        },
        Hint(spellings: ["-f", "--format"], tool: "ffmpeg, HandBrakeCLI") { _ in
            "the container follows the name given to -o: .mp4, .m4v or .mov"
        },
        Hint(spellings: ["-i", "--input", "-input"], tool: "ffmpeg, HandBrakeCLI", example: "a.mov") { _ in
            "inputs are plain arguments: vmerge a.mov b.mov -o out.mp4"
        },
        Hint(spellings: ["-nostdin"], tool: "ffmpeg") { _ in
            "vmerge reads stdin only for '--inputs-from -', and never asks before overwriting (-y replaces)"
        },
        Hint(spellings: ["-threads", "-filter_threads"], tool: "ffmpeg", example: "2") { _ in
            "vmerge uses every core itself; -j sets how many jobs run at once in 'vmerge batch' and 'vmerge worker'"
        },
        Hint(spellings: ["-hwaccel", "-hwaccel_device", "-init_hw_device"], tool: "ffmpeg", example: "cuda") { _ in
            "vmerge decodes and encodes in software: the same output on every machine"
        },
        Hint(spellings: ["-progress", "-stats_period"], tool: "ffmpeg", example: "pipe:1") { _ in
            "progress is --progress bar|plain|json|none, to another descriptor with --progress-fd 3"
        },
        Hint(spellings: ["-metadata", "-map_metadata", "-map_chapters"], tool: "ffmpeg", example: "title=Trip") { _ in
            "vmerge keeps the first clip's date, place and device (--strip-metadata drops them); --chapters adds one per clip"
        },
        Hint(
            spellings: ["-vf", "-af", "-filter_complex", "-filter:v", "-lavfi", "--crop", "-d", "--deinterlace", "--decomb"],
            tool: "ffmpeg, HandBrakeCLI"
        ) { _ in "vmerge chooses its filters itself (upright, centre-cropped to --aspect, scaled to --width)" },
        Hint(spellings: ["-shortest", "-vsync", "-fps_mode", "-async", "-itsoffset"], tool: "ffmpeg") { _ in
            "vmerge keeps each clip's sound with its pictures itself (cut or padded to them; no drift at any boundary)"
        },
        Hint(spellings: ["-movflags", "-O", "--optimize"], tool: "ffmpeg, HandBrakeCLI") { _ in
            "vmerge always writes the index first (faststart)"
        },
        Hint(spellings: ["-loglevel", "-hide_banner", "-nostats", "-stats", "-V", "--no-show-progress"], tool: "ffmpeg, sox") {
            _ in "vmerge prints no banner; -q prints only errors, -v adds FFmpeg's warnings, --progress sets the progress"
        },
        Hint(spellings: ["-S", "--show-progress"], tool: "sox") { _ in "the progress is --progress bar (the default on a terminal)" },
        Hint(spellings: ["-map", "-a", "--audio", "--all-audio"], tool: "ffmpeg, HandBrakeCLI") { _ in
            "vmerge takes each clip's first video and sound; --strip-metadata drops its tags"
        },
        Hint(spellings: ["-m", "--markers"], tool: "HandBrakeCLI") { _ in "one chapter per clip is --chapters" },
        Hint(spellings: ["--norm", "-G", "--guard"], tool: "sox") { _ in
            "the sound's level is --loudness -16 (each clip gained to that many LUFS)"
        },
        Hint(spellings: ["--combine", "-M", "--combine-concatenate", "-safe", "-concat"], tool: "sox, ffmpeg") { _ in
            "vmerge joins its inputs in the order given: vmerge a.mov b.mov -o out.mp4"
        },
        Hint(spellings: ["-Z", "--preset-import-file"], tool: "HandBrakeCLI") { _ in
            "vmerge's settings are --quality, --crf, --preset (x264's) and --width"
        },
    ]

    /// The hint for an argument vmerge does not know (`-ss`, `--rate=25`), with the value after it,
    /// for a command with `table`: one whose table lacks the option the hint points to is told
    /// which commands have it.
    /// `command` is the whole command line (without "vmerge"), for the hints that show it back mended.
    static func hint(
        for argument: String, next: String?, table: [OptionSpec] = MergeCommand.table, command: [String] = []
    ) -> String? {
        let (name, inline) = split(argument)
        guard let hint = hints.first(where: { $0.spellings.contains(name) }) else { return nil }
        if let option = hint.suggests, !table.contains(where: { $0.long == option }) {
            let owners = ArgumentParser.commands.filter { $0.table.contains { $0.long == option } }.map(\.name)
            return "unknown option '\(name)': what it does is '--\(option)' of \(JobOptionError.listed(owners)), not of this command"
        }
        if inputSpellings.contains(name), table.map(\.long) == MergeCommand.table.map(\.long), let mended = withPlainInputs(command) {
            return "unknown option '\(name)'; inputs are plain arguments: \(mended)"
        }
        return "unknown option '\(name)'; " + hint.text(inline ?? next)
    }

    private static let inputSpellings = ["-i", "--input", "-input"]

    /// ffmpeg's `-i a.mov -i b.mov out.mp4` as vmerge's `a.mov b.mov -o out.mp4`: each `-i`'s
    /// value an input, and without an `-o`, a last plain argument that names an MP4 or QuickTime
    /// file and is not there yet the output. Nil when nothing is left to merge.
    static func withPlainInputs(_ command: [String]) -> String? {
        var words: [String] = []
        var plain: [Int] = []
        var index = 0
        var hasOutput = false
        var onlyPositionals = false
        // Where "--" is: options go before it. `given`: the words an -i named, never the output.
        var separator: Int?
        var given: Set<Int> = []
        while index < command.count {
            let word = command[index]
            index += 1
            let (name, inline) = split(word)
            if word == "--" && !onlyPositionals { (onlyPositionals, separator) = (true, words.count) }
            if onlyPositionals {
                if word != "--" { plain.append(words.count) }
                words.append(word)
                continue
            }
            if inputSpellings.contains(name) {
                guard var value = inline ?? (index < command.count ? command[index] : nil) else { continue }
                if inline == nil { index += 1 }
                // A file named like an option is an input only as ./-name.
                if value.hasPrefix("-") && value != "-" { value = "./" + value }
                plain.append(words.count)
                given.insert(words.count)
                words.append(value)
                continue
            }
            // An -o with nothing after it names no output.
            if word == "-o" || word == "--output", index == command.count { continue }
            if word == "-o" || word == "--output" || word.hasPrefix("--output=") || (word.hasPrefix("-o") && !word.hasPrefix("--")) {
                hasOutput = true
            }
            if !word.hasPrefix("-") || word == "-" { plain.append(words.count) }
            words.append(word)
        }
        if !hasOutput, plain.count >= 2, let last = words.indices.last, plain.contains(last), !given.contains(last), OutputContainer(path: words[last]) != nil,
            FileKind.at(FileName(words[last])) == .missing
        {
            plain.removeLast()
            words.insert(contentsOf: ["-o", words.removeLast()], at: separator ?? last)
            hasOutput = true
        }
        guard !plain.isEmpty else { return nil }
        if !hasOutput { words.insert(contentsOf: ["-o", "merged.mp4"], at: separator ?? words.count) }
        return "vmerge " + ShellWord.command(words)
    }

    /// `-q 22` and `-v error` parse as vmerge's --quiet and --verbose followed by an input named
    /// "22" or "error"; the tokenizer asks here before taking such a word as an input.
    static func misreadFlag(_ flag: Character, next: String) -> String? {
        switch flag {
        case "q" where JobOption.isPlainNumber(next):
            return "'-q' is --quiet in vmerge; HandBrake's quality is --crf \(next) here"
        case "v" where ffmpegLogLevels.contains(next):
            return "'-v' is --verbose in vmerge and takes no value; -q prints only errors"
        case "v" where JobOption.isPlainNumber(next):
            // sox's -v is the volume.
            return "'-v' is --verbose in vmerge and takes no value; the sound's level is --loudness -16"
        default:
            return nil
        }
    }

    private static let ffmpegLogLevels: Set<String> = [
        "quiet", "panic", "fatal", "error", "warning", "info", "verbose", "debug", "trace",
    ]

    private static func split(_ argument: String) -> (String, String?) {
        guard let eq = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }

    /// The README's table: each hint with what vmerge says to it.
    static var markdownTable: String {
        var lines = ["| you typed | from | vmerge says |", "|---|---|---|"]
        for hint in hints {
            let typed = hint.spellings.enumerated().map { index, spelling in
                index == 0 && hint.example != nil ? "`\(spelling) \(hint.example!)`" : "`\(spelling)`"
            }
            let said = "unknown option '\(hint.spellings[0])'; " + hint.text(hint.example)
            lines.append("| \(typed.joined(separator: ", ")) | \(hint.tool) | \(said.replacingOccurrences(of: "|", with: "\\|")) |")
        }
        lines.append("| `-q 22` | HandBrakeCLI | \(misreadFlag("q", next: "22")!) |")
        var settings = JobSettings()
        do throws(JobOptionError) {
            try JobOption.quality.apply("22", to: &settings)
        } catch {
            lines.append("| `--quality 22` | HandBrakeCLI | \(error.description) |")
        }
        lines.append("| `-v error`, `-v 0.5` | ffmpeg, sox | \(misreadFlag("v", next: "error")!); with a number: the sound's level is --loudness -16 |")
        return lines.joined(separator: "\n") + "\n"
    }
}
