import Foundation
import VMergeCore

/// One command-line option, declared once: the table drives parsing, help and error messages.
struct OptionSpec: Sendable {
    enum Key: String, Sendable {
        case output, overwrite, minDuration, width, aspect, fit, fps, quality, crf, preset, loudness, chapters, poster, posterAt, skipInvalid
        case maxDuration, maxSize, minFree, tonemap, maxPixels, strict, stripMetadata
        case trim, inputsFrom, sort, dryRun, report, progress, progressFD
        case quiet, verbose, help, version
        // batch and watch
        case out, jobs, shard, settle, marker, deleteSources, retries, poll, statusFile, once, allowInputs
        // queue and worker
        case db, maxAttempts, json, lease, workerName, pollInterval
    }

    /// What a value is, for shell completion.
    enum ValueKind: Sendable, Equatable {
        case file, directory, number, text
        case choice([String])
    }

    let key: Key
    let long: String
    let short: Character?
    /// Placeholder for the value, nil for a flag.
    let value: String?
    let help: String
    var kind: ValueKind = .text
    /// The library's row, for options a job carries (parsed, checked and keyed there).
    var job: JobOption?

    init(key: Key, long: String, short: Character?, value: String?, help: String, kind: ValueKind = .text) {
        self.key = key
        self.long = long
        self.short = short
        self.value = value
        self.help = help
        self.kind = kind
    }

    /// Options that may be given more than once.
    static let repeatable: Set<Key> = [.allowInputs]
    /// Options that belong to the input named just before them (once each).
    static let perInput: Set<Key> = [.trim]

    /// A job option's entry: names, help and value kind from the library's table.
    static func job(_ key: Key, _ option: JobOption) -> OptionSpec {
        let kind: ValueKind
        switch option.kind {
        case .flag, .text: kind = .text
        case .number: kind = .number
        case let .choice(words): kind = .choice(words)
        }
        var spec = OptionSpec(
            key: key, long: option.name, short: nil, value: option.placeholder, help: option.help, kind: kind)
        spec.job = option
        return spec
    }

    static let all: [OptionSpec] = [
        OptionSpec(
            key: .output, long: "output", short: "o", value: "file",
            help: "Output file (required): .mp4 or .m4v for MP4, .mov for QuickTime (the same streams, index "
                + "first). Written to a temporary file and moved into place when complete.",
            kind: .file),
        OptionSpec(
            key: .overwrite, long: "overwrite", short: "y", value: nil,
            help: "Replace the output file if it exists."),
        .job(.minDuration, JobOption.minDuration),
        .job(.width, JobOption.width),
        .job(.aspect, JobOption.aspect),
        .job(.fit, JobOption.fit),
        .job(.fps, JobOption.fps),
        .job(.quality, JobOption.quality),
        .job(.crf, JobOption.crf),
        .job(.preset, JobOption.preset),
        .job(.tonemap, JobOption.tonemap),
        .job(.loudness, JobOption.loudness),
        .job(.chapters, JobOption.chapters),
        .job(.poster, JobOption.poster),
        .job(.posterAt, JobOption.posterAt),
        .job(.skipInvalid, JobOption.skipInvalid),
        .job(.strict, JobOption.strict),
        .job(.stripMetadata, JobOption.stripMetadata),
        .job(.maxPixels, JobOption.maxPixels),
        .job(.maxDuration, JobOption.maxDuration),
        .job(.maxSize, JobOption.maxSize),
        .job(.minFree, JobOption.minFree),
        OptionSpec(
            key: .deleteSources, long: "delete-sources", short: nil, value: nil,
            help: "Once the output is published and reads back whole, delete the inputs it holds all of: "
                + "recordings whose every use was merged whole (none dropped, trimmed or cut) and whose every "
                + "sound, video and subtitle track it carries; each only if its name still holds the file that "
                + "was merged. Every file kept says why. Never after a failure, a cancel or a dry run."),
        OptionSpec(
            key: .trim, long: "trim", short: nil, value: "start,end",
            help: "Use only this part of the input just before it, in seconds on its own timeline (or m:ss): "
                + "'a.mov --trim 2.5,8', from 2.5 s on: '--trim 2.5,', up to 8 s: '--trim ,8'. Pictures to the "
                + "frame, sound to the sample; --min-duration applies to the part kept."),
        OptionSpec(
            key: .inputsFrom, long: "inputs-from", short: nil, value: "file",
            help: "Read more inputs from a file, one path per line ('-' = stdin); blank lines and lines "
                + "starting with # are ignored.",
            kind: .file),
        OptionSpec(
            key: .sort, long: "sort", short: nil, value: "name|mtime|none",
            help: "Order of the inputs: by name in natural order (clip2 before clip10), by modification "
                + "time, or as given. Folders always list their videos by name unless mtime. (default: none)",
            kind: .choice(["name", "mtime", "none"])),
        OptionSpec(
            key: .dryRun, long: "dry-run", short: "n", value: nil,
            help: "Probe and plan only: list which clips are kept or dropped and why, and how each is "
                + "turned and cropped; write no output."),
        OptionSpec(
            key: .report, long: "report", short: nil, value: "file",
            help: "Write a JSON report of the run to this file ('-' = stdout), on success and on failure.",
            kind: .file),
        OptionSpec(
            key: .progress, long: "progress", short: nil, value: "mode",
            help: "auto: a status bar on a terminal, plain lines otherwise; bar; plain (a line every 5 s, "
                + "no carriage returns); json (one object per line); none. (default: auto, none with -q)",
            kind: .choice(["auto", "bar", "plain", "json", "none"])),
        OptionSpec(
            key: .progressFD, long: "progress-fd", short: nil, value: "n",
            help: "Send progress to this open file descriptor instead of stderr.", kind: .number),
        OptionSpec(key: .quiet, long: "quiet", short: "q", value: nil, help: "Print only errors."),
        OptionSpec(
            key: .verbose, long: "verbose", short: "v", value: nil,
            help: "Also print FFmpeg's own warnings, each tagged with the file it concerns."),
        OptionSpec(key: .help, long: "help", short: "h", value: nil, help: "Show this help and exit."),
        OptionSpec(
            key: .version, long: "version", short: nil, value: nil,
            help: "Show the version and the FFmpeg libraries in use, and exit."),
    ]

    var display: String {
        var text = short.map { "-\($0), " } ?? "    "
        text += "--\(long)"
        if let value { text += " <\(value)>" }
        return text
    }
}

/// A usage error: wrong options or arguments. Exit status 2.
struct UsageError: Error, Equatable, CustomStringConvertible {
    let description: String
}

/// What the command line asked for.
enum Command: Equatable {
    case help
    case version
    case merge(MergeRequest)
    case batch(BatchRequest)
    case watch(WatchRequest)
    case queue(QueueRequest)
    case worker(WorkerRequest)
    /// `vmerge batch --help`, `vmerge watch --help`, `vmerge queue --help`, `vmerge worker --help`.
    case subcommandHelp(String)
    // Hidden, not in the option table: `--print-man-page`, `--print-completion <shell>` (ShellSupport.swift).
    case manPage
    case completion(Shell)
}

/// `vmerge a.mov b.mov -o out.mp4`: the job, and how this run shows and reports it.
struct MergeRequest: Equatable {
    /// Inputs as named on the command line (files or folders, each with its --trim), the
    /// output, the options, --inputs-from, --sort, --dry-run, --delete-sources.
    var job: Job
    var verbosity: Verbosity
    /// Where the JSON report goes, "-" for stdout.
    var reportPath: String? = nil
    var progress: ProgressMode = .auto
    var progressFD: Int32? = nil
    /// Test hooks (TestHooks).
    var hooks = MergeHooks()
}

enum Verbosity: Equatable { case quiet, normal, verbose }

enum ProgressMode: String, Equatable, CaseIterable { case auto, bar, plain, json, none }
