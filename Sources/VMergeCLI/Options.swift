import VMergeCore

/// One command-line option, declared once: the table drives parsing, help and error messages.
struct OptionSpec: Sendable {
    enum Key: String, Sendable {
        case output, overwrite, minDuration, width, aspect, fps, quality, skipInvalid
        case maxDuration, maxSize, minFree, tonemap, maxPixels, strict
        case inputsFrom, sort, dryRun, report, progress, progressFD
        case quiet, verbose, help, version
        // batch and watch
        case out, jobs, shard, settle, marker, deleteSources, retries, poll, statusFile, once
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

    init(key: Key, long: String, short: Character?, value: String?, help: String, kind: ValueKind = .text) {
        self.key = key
        self.long = long
        self.short = short
        self.value = value
        self.help = help
        self.kind = kind
    }

    static let all: [OptionSpec] = [
        OptionSpec(
            key: .output, long: "output", short: "o", value: "file",
            help: "Output MP4 file (required). Written to a temporary file and moved into place when complete.",
            kind: .file),
        OptionSpec(
            key: .overwrite, long: "overwrite", short: "y", value: nil,
            help: "Replace the output file if it exists."),
        OptionSpec(
            key: .minDuration, long: "min-duration", short: nil, value: "seconds",
            help: "Drop clips whose video is shorter than this; 0 keeps every clip. (default: 2.0)", kind: .number),
        OptionSpec(
            key: .width, long: "width", short: nil, value: "n",
            help: "Output width in pixels, even; the height follows from the aspect. (default: 320)", kind: .number),
        OptionSpec(
            key: .aspect, long: "aspect", short: nil, value: "w:h",
            help: "Output aspect; each clip is centre-cropped to it. (default: 4:3)"),
        OptionSpec(
            key: .fps, long: "fps", short: nil, value: "rate",
            help: "Constant output frame rate: 30, 29.97 or 30000/1001. (default: 30)", kind: .number),
        OptionSpec(
            key: .quality, long: "quality", short: nil, value: "low|medium|high",
            help: "low: x264 CRF 28, AAC 64 kb/s; medium: CRF 23, AAC 96 kb/s; high: CRF 18, AAC 128 kb/s "
                + "(x264 preset medium, High profile, AAC-LC 44.1 kHz stereo). (default: medium)",
            kind: .choice(["low", "medium", "high"])),
        OptionSpec(
            key: .tonemap, long: "tonemap", short: nil, value: "mobius|hable|reinhard|clip",
            help: "How HDR clips (HLG, PQ, Dolby Vision 8.x) are brought to SDR: mobius keeps everything up to "
                + "half of SDR white exact and rolls off highlights, hable is filmic and darker, reinhard in "
                + "between, clip cuts at SDR white. (default: mobius)",
            kind: .choice(["mobius", "hable", "reinhard", "clip"])),
        OptionSpec(
            key: .skipInvalid, long: "skip-invalid", short: nil, value: nil,
            help: "Drop inputs that cannot be read, with a warning, instead of stopping."),
        OptionSpec(
            key: .strict, long: "strict", short: nil, value: nil,
            help: "Stop at the first corrupt packet instead of concealing it (players skip them; the default "
                + "counts them in one warning per clip)."),
        OptionSpec(
            key: .maxPixels, long: "max-pixels", short: nil, value: "WxH|n",
            help: "Refuse, before decoding, clips whose picture has more pixels than this. (default: 8192x8192)",
            kind: .number),
        OptionSpec(
            key: .maxDuration, long: "max-duration", short: nil, value: "seconds",
            help: "Stop the output at this length; the clip that crosses it is cut there.", kind: .number),
        OptionSpec(
            key: .maxSize, long: "max-size", short: nil, value: "size",
            help: "Never write more than this many bytes: the file ends cleanly before the frame that would "
                + "pass it. Sizes: 500K, 160M, 2G (K/M/G = 1024 steps), 160MB (1000 steps), or bytes.",
            kind: .number),
        OptionSpec(
            key: .minFree, long: "min-free", short: nil, value: "size",
            help: "Refuse to start when the output folder has less free space than this. "
                + "(default: 1M plus an estimate of the output)",
            kind: .number),
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
    /// `vmerge batch --help`, `vmerge watch --help`.
    case subcommandHelp(String)
    // Hidden, not in the option table: `--print-man-page`, `--print-completion <shell>` (ShellSupport.swift).
    case manPage
    case completion(Shell)
}

struct MergeRequest: Equatable {
    /// Inputs as named on the command line (files or folders).
    var inputs: [String]
    var output: String
    var options: MergeOptions
    var verbosity: Verbosity
    /// A file listing more inputs, "-" for stdin.
    var inputsFrom: String? = nil
    var order: InputOrder = .none
    var dryRun = false
    /// Where the JSON report goes, "-" for stdout.
    var reportPath: String? = nil
    var progress: ProgressMode = .auto
    var progressFD: Int32? = nil
    /// Free space the output folder must have; nil: 1 MiB plus an estimate of the output.
    var minFree: Int64? = nil
}

enum Verbosity: Equatable { case quiet, normal, verbose }

enum ProgressMode: String, Equatable, CaseIterable { case auto, bar, plain, json, none }

/// Turns arguments into a command: tokenising, then reading values, then cross-field checks.
enum ArgumentParser {
    static func parse(_ arguments: [String]) throws -> Command {
        if let command = try hiddenCommand(arguments) { return command }
        switch arguments.first {
        case "batch": return try parseBatch(Array(arguments.dropFirst()))
        case "watch": return try parseWatch(Array(arguments.dropFirst()))
        default: break
        }
        let (inputs, values, flags) = try tokenize(arguments, table: OptionSpec.all)
        if flags.contains(.help) { return .help }
        if flags.contains(.version) { return .version }
        return .merge(try validate(inputs: inputs, values: values, flags: flags))
    }

    typealias Tokens = (positionals: [String], values: [OptionSpec.Key: String], flags: Set<OptionSpec.Key>)

    /// Splits arguments into positionals, option values and flags, by `table`.
    static func tokenize(_ arguments: [String], table: [OptionSpec]) throws -> Tokens {
        var values: [OptionSpec.Key: String] = [:]
        var flags: Set<OptionSpec.Key> = []
        var inputs: [String] = []
        var index = 0
        var onlyPositionals = false
        func spec(long name: String) throws -> OptionSpec {
            if let spec = table.first(where: { $0.long == name }) { return spec }
            throw UsageError(description: "unknown option '--\(name)'" + suggestion(for: name, in: table))
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                inputs.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            // --name, --name=value, -x, -x value, -xvalue, -abc (flags)
            var pending: [(OptionSpec, String?)] = []
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let eq = body.firstIndex(of: "=") {
                    pending.append((try spec(long: String(body[..<eq])), String(body[body.index(after: eq)...])))
                } else {
                    pending.append((try spec(long: String(body)), nil))
                }
            } else {
                var rest = Substring(argument.dropFirst())
                while let c = rest.first {
                    rest = rest.dropFirst()
                    guard let spec = table.first(where: { $0.short == c }) else {
                        throw UsageError(description: "unknown option '-\(c)'")
                    }
                    if spec.value != nil {
                        pending.append((spec, rest.isEmpty ? nil : String(rest)))
                        break
                    }
                    pending.append((spec, nil))
                }
            }
            for (spec, inline) in pending {
                if spec.value == nil {
                    if inline != nil { throw UsageError(description: "'--\(spec.long)' takes no value") }
                    flags.insert(spec.key)
                    continue
                }
                if let inline {
                    values[spec.key] = inline
                } else if index < arguments.count {
                    values[spec.key] = arguments[index]
                    index += 1
                } else {
                    throw UsageError(description: "missing value for '--\(spec.long) <\(spec.value!)>'")
                }
            }
        }
        return (inputs, values, flags)
    }

    private static func validate(inputs: [String], values: [OptionSpec.Key: String], flags: Set<OptionSpec.Key>)
        throws -> MergeRequest
    {
        let (options, minFree) = try mergeOptions(values: values, flags: flags, base: MergeOptions())
        var request = MergeRequest(inputs: inputs, output: "", options: options, verbosity: .normal)
        request.minFree = minFree
        return try validateRequest(request, values: values, flags: flags)
    }

    /// The options that shape a merge, over `base` (batch: the batch-wide ones under a job's own).
    static func mergeOptions(values: [OptionSpec.Key: String], flags: Set<OptionSpec.Key>, base: MergeOptions)
        throws -> (MergeOptions, minFree: Int64?)
    {
        var options = base
        if flags.contains(.overwrite) { options.overwrite = true }
        if flags.contains(.skipInvalid) { options.skipInvalid = true }
        if let text = values[.minDuration] {
            guard let value = Double(text), value >= 0, value <= MergeOptions.longestDuration else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--min-duration': expected seconds, 0 or more")
            }
            options.minDuration = value
        }
        if let text = values[.width] {
            guard let value = Int(text), value >= 16, value <= 7680, value % 2 == 0 else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--width': expected an even number from 16 to 7680")
            }
            options.width = value
        }
        if let text = values[.aspect] {
            guard let value = Rational(parsing: text, separators: [":", "/"]), value.isPositive,
                (0.1...10).contains(value.doubleValue)
            else {
                throw UsageError(description: "invalid value '\(text)' for '--aspect': expected w:h such as 4:3")
            }
            options.aspect = value
        }
        if let text = values[.fps] {
            guard let value = Rational(parsing: text), value.isPositive, (1...240).contains(value.doubleValue) else {
                throw UsageError(description: "invalid value '\(text)' for '--fps': expected a rate from 1 to 240")
            }
            options.frameRate = value
        }
        if let value: Quality = try choice(.quality, in: values) { options.quality = value }
        if flags.contains(.strict) { options.strict = true }
        if let text = values[.maxPixels] {
            let parts = text.lowercased().split(separator: "x").map { Int($0) }
            let pixels: Int?
            if parts.count == 2, let w = parts[0], let h = parts[1], w > 0, h > 0, w <= 65_536, h <= 65_536 {
                pixels = w * h
            } else if parts.count == 1, let n = parts[0], n > 0 {
                pixels = n
            } else {
                pixels = nil
            }
            guard let pixels else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--max-pixels': expected WxH such as 4096x4096")
            }
            options.maxPixels = pixels
        }
        if let value: Tonemap = try choice(.tonemap, in: values) { options.tonemap = value }
        if let text = values[.maxDuration] {
            guard let value = Double(text), value > 0, value <= MergeOptions.longestDuration else {
                throw UsageError(
                    description:
                        "invalid value '\(text)' for '--max-duration': expected seconds, more than 0 and at most 10000000"
                )
            }
            options.maxDuration = value
        }
        if let text = values[.maxSize] {
            // Below this not even the index of a one-second file fits.
            guard let value = ByteSize.parse(text), value >= 16 * 1024 else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--max-size': expected a size of at least 16K, "
                        + "such as 500K, 160M or 2G")
            }
            options.maxSize = value
        }
        if let maxDuration = options.maxDuration, maxDuration * options.frameRate.doubleValue < 1 {
            throw UsageError(
                description: "invalid value '\(values[.maxDuration]!)' for '--max-duration': shorter than one frame")
        }
        var minFree: Int64?
        if let text = values[.minFree] {
            guard let value = ByteSize.parse(text) else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--min-free': expected a size such as 1M or 2G")
            }
            minFree = value
        }
        return (options, minFree)
    }

    private static func validateRequest(
        _ request: MergeRequest, values: [OptionSpec.Key: String], flags: Set<OptionSpec.Key>
    ) throws -> MergeRequest {
        var request = request
        let inputs = request.inputs
        if let value: InputOrder = try choice(.sort, in: values) { request.order = value }
        if let value: ProgressMode = try choice(.progress, in: values) { request.progress = value }
        if let text = values[.progressFD] {
            guard let value = Int32(text), value >= 0 else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--progress-fd': expected a file descriptor number")
            }
            request.progressFD = value
        }
        request.inputsFrom = values[.inputsFrom]
        request.reportPath = values[.report]
        if request.reportPath == "-" && request.progressFD == 1 {
            throw UsageError(description: "'--report -' and '--progress-fd 1' would both write to stdout")
        }
        request.dryRun = flags.contains(.dryRun)
        guard let output = values[.output] else {
            throw UsageError(
                description: inputs.isEmpty && request.inputsFrom == nil
                    ? "no input files and no output given" : "missing '-o <file>': where should the merged video go?")
        }
        guard !inputs.isEmpty || request.inputsFrom != nil else {
            throw UsageError(description: "no input files given")
        }
        if output == "-" {
            throw UsageError(description: "cannot write to stdout: a faststart MP4 needs a seekable file")
        }
        if flags.contains(.quiet) && flags.contains(.verbose) {
            throw UsageError(description: "'--quiet' and '--verbose' cannot be used together")
        }
        if request.reportPath == "" { throw UsageError(description: "missing file name for '--report'") }
        request.output = output
        request.verbosity = flags.contains(.quiet) ? .quiet : flags.contains(.verbose) ? .verbose : .normal
        return request
    }

    /// The value of a choice option, checked against the words its table entry lists (which also
    /// make the error message and the shell completion).
    static func choice<T: RawRepresentable>(_ key: OptionSpec.Key, in values: [OptionSpec.Key: String]) throws -> T?
    where T.RawValue == String {
        guard let text = values[key] else { return nil }
        if let value = T(rawValue: text) { return value }
        let spec = OptionSpec.all.first { $0.key == key }!
        guard case let .choice(words) = spec.kind else { preconditionFailure("--\(spec.long) is not a choice") }
        let expected = words.dropLast().joined(separator: ", ") + " or " + words.last!
        throw UsageError(description: "invalid value '\(text)' for '--\(spec.long)': expected \(expected)")
    }

    /// ". Did you mean '--width'?" for a near miss, else "".
    static func suggestion(for name: String, in table: [OptionSpec] = OptionSpec.all) -> String {
        let scored = table.map { ($0.long, editDistance(name, $0.long)) }.min { $0.1 < $1.1 }
        guard let (best, distance) = scored, distance <= max(2, name.count / 3) else { return "" }
        return ". Did you mean '--\(best)'?"
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(1, b.count) where !b.isEmpty {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
