import Foundation
import VMergeCore

/// Turns arguments into a command: tokenising, then reading values, then cross-field checks.
enum ArgumentParser {
    static func parse(_ arguments: [String]) throws -> Command {
        if let command = try hiddenCommand(arguments) { return command }
        switch arguments.first {
        case "batch": return try parseBatch(Array(arguments.dropFirst()))
        case "watch": return try parseWatch(Array(arguments.dropFirst()))
        case "queue": return try parseQueue(Array(arguments.dropFirst()))
        case "worker": return try parseWorker(Array(arguments.dropFirst()))
        default: break
        }
        let (inputs, values, flags, attached) = try tokenize(arguments, table: OptionSpec.all)
        if flags.contains(.help) { return .help }
        if flags.contains(.version) { return .version }
        var request = try validate(inputs: inputs, values: values, flags: flags)
        for (index, options) in attached {
            guard let text = options[.trim] else { continue }
            do {
                request.job.inputs[index].edit = try InputEdit.trim(text)
            } catch {
                throw UsageError(description: "\(inputs[index]): \(error.description)")
            }
        }
        return .merge(request)
    }

    /// `attached`: per-input options' values by the position of the positional they follow.
    typealias Tokens = (
        positionals: [String], values: [OptionSpec.Key: String], flags: Set<OptionSpec.Key>,
        attached: [Int: [OptionSpec.Key: String]]
    )

    /// Splits arguments into positionals, option values and flags, by `table`.
    static func tokenize(_ arguments: [String], table: [OptionSpec]) throws -> Tokens {
        var values: [OptionSpec.Key: String] = [:]
        var flags: Set<OptionSpec.Key> = []
        var inputs: [String] = []
        var attached: [Int: [OptionSpec.Key: String]] = [:]
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
            // ffmpeg's and HandBrake's spellings (none of them is a vmerge option).
            if let hint = ForeignOptions.hint(for: argument, next: index < arguments.count ? arguments[index] : nil) {
                throw UsageError(description: hint)
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
                    // `-q 22`, `-v error`: a value meant for another tool's option, not an input.
                    if argument.count == 2, index < arguments.count,
                        let hint = ForeignOptions.misreadFlag(c, next: arguments[index]),
                        !FileManager.default.fileExists(atPath: arguments[index])
                    {
                        throw UsageError(description: hint)
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
                let value: String
                if let inline {
                    value = inline
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    throw UsageError(description: "missing value for '--\(spec.long) <\(spec.value ?? "value")>'")
                }
                if OptionSpec.perInput.contains(spec.key) {
                    guard let last = inputs.indices.last else {
                        throw UsageError(
                            description: "'--\(spec.long)' must follow the file it applies to, e.g. a.mov --\(spec.long) \(value)")
                    }
                    if attached[last]?[spec.key] != nil {
                        throw UsageError(description: "'--\(spec.long)' is given twice for \(inputs[last])")
                    }
                    attached[last, default: [:]][spec.key] = value
                    continue
                }
                // Repeatable options keep every value, NUL-separated (no path holds a NUL).
                if OptionSpec.repeatable.contains(spec.key), let earlier = values[spec.key] {
                    values[spec.key] = earlier + "\u{0}" + value
                } else {
                    values[spec.key] = value
                }
            }
        }
        return (inputs, values, flags, attached)
    }

    private static func validate(inputs: [String], values: [OptionSpec.Key: String], flags: Set<OptionSpec.Key>)
        throws -> MergeRequest
    {
        let settings = try jobSettings(values: values, flags: flags, base: JobSettings())
        let job = Job(name: "", inputs: inputs.map { JobInput($0) }, output: "", settings: settings)
        return try validateRequest(MergeRequest(job: job, verbosity: .normal), values: values, flags: flags)
    }

    /// The job settings the options name, over `base` (batch and watch: the run-wide ones), each
    /// read and checked by its row of the library's option table.
    static func jobSettings(values: [OptionSpec.Key: String], flags: Set<OptionSpec.Key>, base: JobSettings)
        throws -> JobSettings
    {
        var settings = base
        if flags.contains(.overwrite) { settings.merge.overwrite = true }
        do {
            for spec in OptionSpec.all {
                guard let option = spec.job else { continue }
                if spec.value == nil {
                    if flags.contains(spec.key) { try option.apply("true", to: &settings) }
                } else if let text = values[spec.key] {
                    try option.apply(text, to: &settings)
                }
            }
            try settings.validate()
        } catch {
            throw UsageError(description: error.description)
        }
        return settings
    }

    private static func validateRequest(
        _ request: MergeRequest, values: [OptionSpec.Key: String], flags: Set<OptionSpec.Key>
    ) throws -> MergeRequest {
        var request = request
        let inputs = request.job.inputs
        if let value: InputOrder = try choice(.sort, in: values) { request.job.order = value }
        if let value: ProgressMode = try choice(.progress, in: values) { request.progress = value }
        if let text = values[.progressFD] {
            guard let value = Int32(text), value >= 0 else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--progress-fd': expected a file descriptor number")
            }
            request.progressFD = value
        }
        request.job.inputsFrom = values[.inputsFrom]
        request.reportPath = values[.report]
        if request.reportPath == "-" && request.progressFD == 1 {
            throw UsageError(description: "'--report -' and '--progress-fd 1' would both write to stdout")
        }
        request.job.dryRun = flags.contains(.dryRun)
        request.job.deleteSources = flags.contains(.deleteSources)
        guard let output = values[.output] else {
            throw UsageError(
                description: inputs.isEmpty && request.job.inputsFrom == nil
                    ? "no input files and no output given" : "missing '-o <file>': where should the merged video go?")
        }
        guard !inputs.isEmpty || request.job.inputsFrom != nil else {
            throw UsageError(description: "no input files given")
        }
        if output == "-" {
            throw UsageError(description: "cannot write to stdout: a faststart MP4 needs a seekable file")
        }
        if output.isEmpty { throw UsageError(description: "'-o' needs a file name, such as merged.mp4") }
        if output.hasSuffix("/") {
            throw UsageError(
                description: "'-o \(output)' names a folder; give a file name, such as \(output)merged.mp4")
        }
        if OutputContainer(path: output) == nil {
            throw UsageError(
                description: "'-o \(output)': vmerge writes MP4 or QuickTime files; the name must end in "
                    + OutputContainer.accepted)
        }
        if flags.contains(.quiet) && flags.contains(.verbose) {
            throw UsageError(description: "'--quiet' and '--verbose' cannot be used together")
        }
        if request.reportPath == "" { throw UsageError(description: "missing file name for '--report'") }
        // Named by its output in the report and in messages.
        (request.job.output, request.job.name) = (output, output)
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
