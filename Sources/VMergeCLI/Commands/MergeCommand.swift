import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeRemote

/// `vmerge a.mov b.mov -o out.mp4`: one merge (or dry run). Its values are the job and how this
/// run shows and reports it; its run resolves inputs, checks the output, probes and plans, checks
/// free space and writes, then prints the summary line and the JSON report, whatever happened.
struct MergeCommand: CommandSpec {
    static let configuration = CommandConfiguration(
        name: "", abstract: Help.summary, overview: Help.summary, usage: Help.usage, examples: Help.examples,
        exits: .merge, positionals: .inputs)

    static let output = CommandOption.text(
        "output", short: "o", value: "file",
        help: "Output file (required): .mp4 or .m4v for MP4, .mov for QuickTime (the same streams, index "
            + "first). Written to a temporary file and moved into place when complete.",
        kind: .file)
    static let overwrite = SharedOptions.overwrite(help: "Replace the output file if it exists.")
    /// Per input: by the position of the input it follows.
    static let trim = CommandOption<[Int: String]>(
        OptionSpec(
            long: "trim", short: nil, value: "start,end",
            help: "Use only this part of the input just before it, in seconds on its own timeline (or m:ss): "
                + "'a.mov --trim 2.5,8', from 2.5 s on: '--trim 2.5,', up to 8 s: '--trim ,8'. Pictures to the "
                + "frame, sound to the sample; --min-duration applies to the part kept.",
            perInput: true)
    ) { parsed, spec in parsed.attached.compactMapValues { $0[spec.long] } }
    static let inputsFrom = CommandOption.text(
        "inputs-from", value: "file",
        help: "Read more inputs from a file, one path per line ('-' = stdin); blank lines and lines "
            + "starting with # are ignored.",
        kind: .file)
    static let sort = CommandOption.choice(
        "sort", value: InputOrder.allCases.map(\.rawValue).joined(separator: "|"),
        help: "Order of the inputs: by name in natural order (clip2 before clip10), by modification "
            + "time, as given, or by the time each was recorded as its container says (creation_time, "
            + "Matroska's DateUTC; ties and clips without one by name, those last). Folders always list "
            + "their videos by name unless mtime. (default: none)",
        of: InputOrder.self)
    static let rendition = CommandOption<[String]>.repeated(
        "rendition", value: "spec[=file]",
        help: "Also make this rendition of the same merge, decoded once (repeatable): a preset ("
            + Rendition.Preset.allCases.map(\.rawValue).joined(separator: ", ")
            + ") or WIDTHxHEIGHT, then any of :crf=N, :fit=crop|pad|blur, :preset=NAME. Written beside -o as "
            + "<name>-<spec>.mp4, or =FILE in -o's folder; published with the output as one set.")
    static let dryRun = CommandOption.flag(
        "dry-run", short: "n",
        help: "Probe and plan only: list which clips are kept or dropped and why, and how each is "
            + "turned and cropped; write no output.")
    static let report = SharedOptions.report(
        help:
            "Write a JSON report of the run to this file ('-' = stdout; or an object, s3://bucket/key.json), on success and on failure."
    )

    static let table: [OptionSpec] =
        [output.spec, overwrite.spec] + JobOptions.specs
        + [
            rendition.spec,
            SharedOptions.deleteSources.spec, trim.spec, inputsFrom.spec, sort.spec, dryRun.spec, report.spec,
            SharedOptions.allowRemote.spec,
        ] + NotifyOptions.specs
        + ProgressOptions.specs + VerbosityOptions.specs + [SharedOptions.help.spec, SharedOptions.version.spec]

    /// Inputs as named on the command line (files or folders, each with its --trim), the
    /// output, the options, --inputs-from, --sort, --dry-run, --delete-sources.
    var job: Job
    var verbosity: Verbosity
    /// Where the JSON report goes: a file or stdout.
    var reportTo: Location? = nil
    var progress: ProgressMode = .auto
    var progressFD: Int32? = nil
    /// Test hooks (TestHooks).
    var hooks = MergeHooks()
    /// --notify: the run's events, and how long its end waits for them.
    var notify: NotifyOptions.Settings?
    var messageForm: MessageForm { MessageForm(progress: progress, fd: progressFD) }

    init(job: Job, verbosity: Verbosity) {
        self.job = job
        self.verbosity = verbosity
    }

    init(_ parsed: ParsedArguments) throws {
        let settings = try JobOptions.settings(parsed, overwrite: try MergeCommand.overwrite.read(parsed))
        job = Job(name: "", inputs: parsed.positionals.map { JobInput($0) }, output: "", settings: settings)
        do throws(JobOptionError) {
            try JobFile.checkInputCount(job.inputs.count)
        } catch {
            throw UsageError(description: error.description)
        }
        // The limit a job file's paths have, in the same bytes (see FileName.maxPathBytes).
        for input in parsed.positionals {
            if input.isEmpty { throw UsageError(description: "an input is an empty name ('')") }
            if let problem = FileName.lengthProblem(of: input, field: "an input") { throw UsageError.naming(problem) }
            // A URL that is none vmerge reads (http://, s3:// without a bucket) is the command's
            // mistake, as a missing folder of -o's is: said now, never echoed with its query.
            if RemoteName.looksRemote(input) && RemoteName(input) == nil {
                throw UsageError.naming(
                    "\(RemoteName.shown(input)): not an s3://bucket/key or https:// name vmerge can read")
            }
        }
        verbosity = .normal
        if let value = try MergeCommand.sort.read(parsed) { job.order = value }
        (progress, progressFD) = try ProgressOptions.read(parsed)
        if let list = try MergeCommand.inputsFrom.read(parsed), RemoteName.looksRemote(list) {
            throw UsageError.naming(
                "'--inputs-from \(RemoteName.shown(list))': the list is read from a local file or '-', not a URL (it may name URLs)"
            )
        }
        job.inputsFrom = try MergeCommand.inputsFrom.read(parsed).map(Location.reading)
        // Before --report's own checks, which look at the file system.
        try ProgressOptions.checkStdout(
            report: parsed.values[MergeCommand.report.long]?.last.map(Location.writing), fd: progressFD)
        job.dryRun = try MergeCommand.dryRun.read(parsed)
        job.deleteSources = try SharedOptions.deleteSources.read(parsed)
        job.remoteAccess = try SharedOptions.remoteAccess(parsed, listingRequired: false)
        notify = try NotifyOptions.read(parsed, access: job.remoteAccess)
        // Named by its output in the report and in messages.
        let output = try MergeCommand.checkedOutput(
            MergeCommand.output.read(parsed), hasInputs: !job.inputs.isEmpty || job.inputsFrom != nil, parsed: parsed)
        (job.output, job.name) = (FileName(output), output)
        try MergeCommand.readRenditions(parsed, into: &job)
        verbosity = try VerbosityOptions.read(parsed)
        reportTo = try MergeCommand.report.read(parsed)
        for (index, text) in try MergeCommand.trim.read(parsed) {
            do {
                job.inputs[index].edit = try InputEdit.trim(text)
            } catch {
                throw UsageError(description: "\(parsed.positionals[index]): \(error.description)")
            }
        }
    }

    /// Each --rendition, read, and their names as the command gives them: each its
    /// own (not the output's, the poster's, the report's or another rendition's). The command's
    /// own mistake, said before any work (the merge checks the files themselves again).
    private static func readRenditions(_ parsed: ParsedArguments, into job: inout Job) throws {
        let texts = try rendition.read(parsed)
        if texts.count > JobFile.maxRenditions {
            throw UsageError.naming(
                "'--rendition': a job makes at most \(JobFile.maxRenditions) renditions (\(texts.count) given)")
        }
        job.options.renditions = try texts.map { text in
            switch Rendition.parse(text) {
            case let .success(rendition): return rendition
            case let .failure(problem): throw UsageError.naming("'--rendition \(text)': \(problem)")
            }
        }
        guard !job.options.renditions.isEmpty else { return }
        let report = try MergeCommand.report.read(parsed)
        var taken: [String: String] = [:]
        if case let .file(name)? = report { taken[name.escaped] = "report" }
        for (name, role) in job.publishedFiles {
            // Beside an object, each is an object: its name must be one (no '%2f', no control).
            if RemoteName.looksRemote(job.output.escaped), role.hasSuffix("rendition") {
                guard case let .s3(object)? = RemoteName(name.escaped), !object.isPrefix else {
                    throw UsageError.naming(
                        "\(RemoteName.shown(name.escaped)): the \(role) is not a name an object can have")
                }
            }
            if let other = taken.updateValue(role, forKey: name.escaped) {
                throw UsageError.naming("\(name.escaped): the \(role) would take the place of the \(other)")
            }
        }
    }

    /// -o's file, checked: there are inputs to merge into it, and it is a file vmerge can write.
    /// What the command names wrongly is a usage error (exit 2: running it again cannot help):
    /// an output in a folder that is not there, a folder, or one of the inputs it lists.
    private static func checkedOutput(_ given: String?, hasInputs: Bool, parsed: ParsedArguments) throws -> String {
        guard let output = given else {
            guard hasInputs else { throw UsageError(description: "no input files and no output given") }
            throw UsageError(description: "missing '-o <file>': where should the merged video go?" + outputHint(parsed))
        }
        guard hasInputs else { throw UsageError(description: "no input files given") }
        if output == "-" {
            throw UsageError(description: "cannot write to stdout: a faststart MP4 needs a seekable file")
        }
        if output.isEmpty { throw UsageError(description: "'-o' needs a file name, such as merged.mp4") }
        if let problem = FileName.lengthProblem(of: output, field: "'-o'") { throw UsageError.naming(problem) }
        // A URL: only an object in a bucket, said now (exit 2), never echoed with its secrets.
        if RemoteName.looksRemote(output) {
            guard case let .s3(address)? = RemoteName(output), !address.isPrefix,
                !address.key.contains(where: \.isNewline)
            else {
                throw UsageError.naming(
                    "'-o \(RemoteName.shown(output))': an output goes to s3://bucket/key.mp4 or a local path")
            }
            if let problem = OutputContainer.problem(withName: address.key) {
                throw UsageError.naming("'-o \(address)': \(problem)")
            }
            if parsed.positionals.contains(output) {
                throw UsageError.naming(VMergeError.outputIsInput(file: output).description)
            }
            return output
        }
        if output.hasSuffix("/") || FileKind.following(FileName(output)) == .directory {
            throw UsageError.naming(
                "'-o \(output)' names a folder; give a file name, such as \(FileName.joined(output, "merged.mp4"))")
        }
        if let problem = OutputContainer.problem(withName: output) {
            throw UsageError(description: "'-o \(output)': \(problem)")
        }
        try SharedOptions.checkFolder(of: output, for: "-o")
        // The same file named twice: by identity, so ./a.mov and a link to it count too.
        let identity = PathIdentity.of(FileName(output))
        if case .file = identity, parsed.positionals.contains(where: { PathIdentity.of(FileName($0)) == identity }) {
            throw UsageError.naming(VMergeError.outputIsInput(file: output).description)
        }
        return output
    }

    /// " To write out2.mp4, say so with -o: vmerge a.mov b.mov -o out2.mp4" when the last input
    /// names an MP4 or QuickTime file that is not there yet (ffmpeg's habit: the output last,
    /// without -o), or that is there but holds no video (a failed run's empty file): then with -y.
    /// A video that is there is an input like the others: no hint takes it for the output.
    private static func outputHint(_ parsed: ParsedArguments) -> String {
        guard parsed.positionals.count >= 2, let last = parsed.positionals.last, let at = parsed.typedPositions.last,
            OutputContainer(path: last) != nil
        else { return "" }
        var (words, added) = (parsed.typed, ["-o", last])
        var what = "To write \(VisibleText.of(last)), say so with -o"
        switch FileKind.at(FileName(last)) {
        case .missing: break
        case .regular where MediaSignature.looksLikeVideo(last) == false:
            what =
                "\(VisibleText.of(last)) is there but holds no video; to write it, say so with -o, and -y to replace it"
            if !parsed.flags.contains(overwrite.long) { added.append("-y") }
        default: return ""
        }
        // After "--" every word is an input: the option goes before it.
        let separator = words[..<at].firstIndex(of: "--")
        words.remove(at: at)
        words.insert(contentsOf: added, at: separator ?? at)
        return " \(what): vmerge \(ShellWord.command(words))"
    }

    func run(console: Console, printer: MessagePrinter) throws -> Exit {
        if let fd = progressFD, fcntl(fd, F_GETFD) == -1 {
            throw UsageError.naming("--progress-fd \(fd): no such open file descriptor")
        }
        let display = ProgressDisplays.make(
            mode: progress, fd: progressFD, verbosity: verbosity, console: console,
            printer: printer)
        // The same run as the Swift API's MergeSession: a report that cannot be written is found
        // out before an hour of encoding, and is published with the video.
        var run = MergeRun(job: job, reportPath: reportTo?.writtenName)
        run.readStandardInput = readStandardInput
        (run.notifier, run.notifyWait) = (notify?.notifier(), notify?.wait ?? 0)
        let performed = run.perform(
            diagnostics: printer.diagnostics, onProgress: { display?.show($0) },
            context: MergeContext(hooks: hooks))
        display?.end()
        printer.sayDeletedCount()
        let outcome: JobOutcome, reportError: VMergeError?
        switch performed {
        case let .refused(clash): throw clash
        case let .failedToStart(error): throw error
        case let .ran(ran, error): (outcome, reportError) = (ran, error)
        }
        let report = outcome.report
        var errors = report.error.map { [Diagnostic(.error, file: nil, $0.message)] } ?? []
        switch outcome.end {
        // No report either: it would land on a video.
        case let .refused(reason): throw CommandFailure(.failure, file: reportTo?.named, reason)
        case let .planned(plan, preflight):
            // Listed whatever it found: every input's fate, then what would stop the merge (below).
            printPlan(plan, preflight, console: console, printer: printer)
            errors = preflight.problems.map { Diagnostic(.error, file: nil, $0.description) }
        case let .published(publication): printSummary(publication.result, printer: printer)
        case .upToDate: printer.print(.info, file: nil, outcome.summary(output: job.output.escaped))
        // The error says it (below); a plan that did not get made whole is not shown.
        case .failed, .nothingToMerge, .cancelled: break
        }
        if reportTo == .standardOutput { console.output(report.json.text(pretty: true) + "\n") }
        if let reportError, reportTo != .standardOutput {
            errors.append(Diagnostic(.error, file: nil, reportError.description))
        }
        guard errors.isEmpty else {
            throw CommandFailure(reportError == nil ? report.exit : report.exit.failingLate, errors)
        }
        return report.exit
    }

    /// All of stdin; a signal while waiting for it cancels the run like any other.
    private func readStandardInput() throws -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count > 0 {
                data += buffer[0..<count]
                // An endless stdin (a device, a runaway producer) must not eat the memory.
                if data.count > InputList.maxListBytes {
                    throw VMergeError.invalidInput(
                        file: "-",
                        reason:
                            "the input list on stdin is larger than \(ByteSize.format(Int64(InputList.maxListBytes)))")
                }
            } else if count == 0 {
                return FileName.decode(data)
            } else if errno != EINTR {
                throw VMergeError.io(file: "-", message: "cannot read the input list from stdin")
            }
            let signal = VMergeProcess.pendingSignal
            if signal != 0 { throw VMergeError.cancelled(signal: signal) }
        }
    }

    private func printSummary(_ result: MergeResult, printer: MessagePrinter) {
        let output = result.output
        // Clips with at least part of them in the file (--max-size may end it early).
        let kept = result.plan.clips.filter { $0.startMicros < output.durationMicros }.count
        let line = String(
            format: "wrote %@ (%d clip%@, %@ s, %@ bytes) in %.1f s", job.output.escaped, kept, kept == 1 ? "" : "s",
            formatSeconds(Double(output.durationMicros) / 1e6), String(output.bytes), result.wallSeconds)
        let truncation: (field: String, words: String)? =
            switch output.truncation {
            case .maxSize?: ("max-size", "; stopped early at its --max-size")
            case .maxDuration?: ("max-duration", "; cut at its --max-duration")
            case nil: nil
            }
        printer.summary(
            .info, line + (truncation?.words ?? ""),
            fields: [
                ("output", .string(job.output.escaped)), ("clips", .int(kept)),
                ("duration", .number(Double(output.durationMicros) / 1e6)), ("size", .int(output.bytes)),
                ("seconds", .number((result.wallSeconds * 1000).rounded() / 1000)),
                ("truncated_by", .string(truncation?.field)),
            ])
    }

}
