import VMergeCore

/// Options of ffmpeg and HandBrakeCLI that people type out of habit, each with the vmerge way
/// of saying it: "vmerge: unknown option '-r'; the frame rate is --fps 25". Looked up by the
/// whole argument before it is split into single-letter flags, so `-ss` is not reported as '-s'.
enum ForeignOptions {
    /// What to tell someone who typed `spelling` with `value` after it (nil at the end).
    struct Hint: Sendable {
        let spellings: [String]
        /// The tool it comes from, for the table in the man page and README.
        let tool: String
        let text: @Sendable (_ value: String?) -> String
    }

    /// The value the user gave, when it is a plain word (not the next option), else `example`.
    private static func given(_ value: String?, or example: String) -> String {
        guard let value, !value.isEmpty, !value.hasPrefix("-"), value.count <= 40,
            value.allSatisfy({ $0.isLetter || $0.isNumber || ".:/x".contains($0) })
        else { return example }
        return value
    }

    static let hints: [Hint] = [
        Hint(spellings: ["-r", "--rate", "-framerate"], tool: "ffmpeg, HandBrakeCLI") {
            "the frame rate is --fps \(given($0, or: "25"))"
        },
        Hint(spellings: ["-s", "-w"], tool: "ffmpeg, HandBrakeCLI") { value in
            // -s 640x480: the width; the height follows from the aspect.
            let width = given(value, or: "640").split(separator: "x").first.map(String.init) ?? "640"
            return "the size is --width \(width) (the height follows from --aspect, 4:3 by default)"
        },
        Hint(spellings: ["-l", "--height"], tool: "HandBrakeCLI") { _ in
            "the height follows from --width and --aspect (4:3 by default)"
        },
        Hint(spellings: ["-t", "--stop-at", "--duration"], tool: "ffmpeg, HandBrakeCLI") {
            "the output's length is --max-duration \(given($0, or: "60"))"
        },
        Hint(spellings: ["-ss", "--start-at", "-sseof"], tool: "ffmpeg, HandBrakeCLI") {
            "a clip's start is --trim START,END after the file, e.g. a.mov --trim \(given($0, or: "2.5")),"
        },
        Hint(spellings: ["-to"], tool: "ffmpeg") {
            "a clip's end is --trim START,END after the file, e.g. a.mov --trim ,\(given($0, or: "8")); "
                + "the output's length is --max-duration"
        },
        Hint(spellings: ["-fs"], tool: "ffmpeg") { "the size limit is --max-size \(given($0, or: "16M"))" },
        Hint(spellings: ["-an", "-vn", "-sn", "-dn"], tool: "ffmpeg") { _ in
            "vmerge always writes video and sound (silence where a clip has none)"
        },
        Hint(
            spellings: ["-b:v", "-b", "-vb", "--vb", "-maxrate", "-bufsize", "--two-pass", "-2"],
            tool: "ffmpeg, HandBrakeCLI"
        ) { _ in
            "vmerge sets the picture, not the bit rate: --crf 23 or --quality low|medium|high; "
                + "--max-size caps the file"
        },
        Hint(spellings: ["-b:a", "-ab", "--ab", "-B", "-ar", "-ac", "--arate", "--mixdown"], tool: "ffmpeg, HandBrakeCLI") {
            _ in "vmerge writes AAC at 44.1 kHz stereo; --quality sets its bit rate (64, 96 or 128 kb/s)"
        },
        Hint(spellings: ["-crf"], tool: "ffmpeg") { "the CRF is --crf \(given($0, or: "23"))" },
        Hint(spellings: ["-preset"], tool: "ffmpeg") { "x264's preset is --preset \(given($0, or: "slow"))" },
        Hint(spellings: ["-aspect"], tool: "ffmpeg") { "the aspect is --aspect \(given($0, or: "4:3"))" },
        Hint(
            spellings: ["-c:v", "-vcodec", "-c:a", "-acodec", "-c", "-codec", "-e", "--encoder", "-E", "--aencoder"],
            tool: "ffmpeg, HandBrakeCLI"
        ) { _ in "vmerge always writes H.264 and AAC" },
        Hint(spellings: ["-f", "--format"], tool: "ffmpeg, HandBrakeCLI") { _ in
            "the container follows the name given to -o: .mp4, .m4v or .mov"
        },
        Hint(spellings: ["-i", "--input"], tool: "ffmpeg, HandBrakeCLI") { _ in
            "inputs are plain arguments: vmerge a.mov b.mov -o out.mp4"
        },
        Hint(spellings: ["-vf", "-af", "-filter_complex", "-filter:v", "-lavfi", "--crop"], tool: "ffmpeg, HandBrakeCLI") {
            _ in "vmerge chooses its filters itself (upright, centre-cropped to --aspect, scaled to --width)"
        },
        Hint(spellings: ["-movflags", "-O", "--optimize"], tool: "ffmpeg, HandBrakeCLI") { _ in
            "vmerge always writes the index first (faststart)"
        },
        Hint(spellings: ["-loglevel", "-hide_banner", "-nostats", "-stats"], tool: "ffmpeg") { _ in
            "vmerge prints no banner; -q prints only errors, -v adds FFmpeg's warnings, --progress sets the progress"
        },
        Hint(spellings: ["-map", "-map_metadata"], tool: "ffmpeg") { _ in
            "vmerge takes each clip's first video and sound; --strip-metadata drops its tags"
        },
        Hint(spellings: ["-Z", "--preset-import-file"], tool: "HandBrakeCLI") { _ in
            "vmerge's settings are --quality, --crf, --preset (x264's) and --width"
        },
    ]

    /// The hint for an argument vmerge does not know (`-ss`, `--rate=25`), with the value after it.
    static func hint(for argument: String, next: String?) -> String? {
        let (name, inline) = split(argument)
        guard let hint = hints.first(where: { $0.spellings.contains(name) }) else { return nil }
        return "unknown option '\(name)'; " + hint.text(inline ?? next)
    }

    /// `-q 22` and `-v error` parse as vmerge's --quiet and --verbose followed by an input named
    /// "22" or "error"; the tokenizer asks here before taking such a word as an input.
    static func misreadFlag(_ flag: Character, next: String) -> String? {
        switch flag {
        case "q" where JobOption.isPlainNumber(next):
            return "'-q' is --quiet in vmerge; HandBrake's quality is --crf \(next) here"
        case "v" where ffmpegLogLevels.contains(next):
            return "'-v' is --verbose in vmerge and takes no value; -q prints only errors"
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
}
