import Foundation
import VMergeAV
import VMergeCore

/// How a job ended.
public struct JobOutcome: Sendable {
    public var report: RunReport
    public var result: MergeResult?
    public var plan: MergePlan?
    /// The output already held this job's result (same job key): nothing was done.
    public var skipped = false
    /// Set when the job was refused before any work and must leave no report (see `veto`).
    public var vetoed: String?
    /// What stopped the job, when something did.
    public var failure: VMergeError?
    public var exit: Exit { report.exit }
}

/// Runs one job: resolve inputs, check the output, probe and plan, check free space, write.
/// Whatever happens, the outcome carries a complete report. Used by the command line, batch
/// and watch alike.
public struct JobRunner {
    public static let version = "0.1.0"

    public var onDiagnostic: (Diagnostic) -> Void
    public var onProgress: ((MergeProgress) -> Void)?
    /// Reads "-" for --inputs-from.
    public var readStandardInput: () throws -> String = { "" }
    /// Called once the inputs are known; a message refuses the job without a report.
    public var veto: (([String]) -> String?)?
    /// Record the job key in the output, and skip the job when the output already holds it.
    public var keyed = false
    /// Names the temporary output (watch: the claim).
    public var temporaryTag: String?

    public init(onDiagnostic: @escaping (Diagnostic) -> Void, onProgress: ((MergeProgress) -> Void)? = nil) {
        self.onDiagnostic = onDiagnostic
        self.onProgress = onProgress
    }

    public func run(_ job: Job) -> JobOutcome {
        let clock = Stopwatch()
        var options = job.options
        var report = RunReport(
            status: .failed, exit: .failure, startedAt: Date(), wallSeconds: 0,
            versions: (JobRunner.version, FFmpegVersions.release, FFmpegVersions.libraries),
            options: options, minFree: job.minFree, settings: JobRunner.settings(of: job), outputPath: job.output, inputPaths: job.inputs)
        var outcome = JobOutcome(report: report)
        var probes: [InputProbe] = []
        var edits: [InputEdit] = []
        do {
            let resolved = try resolveInputs(job)
            edits = resolved.map(\.edit)
            let inputs = resolved.map(\.path)
            report.inputPaths = inputs
            if let veto, let reason = veto(inputs) {
                outcome.vetoed = reason
                return outcome
            }
            if keyed {
                let key = JobKey.make(inputs: resolved, root: job.keyRoot, options: options, salt: job.keySalt)
                options.jobKey = key
                // Only this very job's output counts as done; any other file under the name (another
                // job's output, or one with other inputs or options) is refused below unless -y.
                if !job.dryRun && FileKind.at(job.output) == .regular && Probe.recordedJobKey(at: job.output) == key {
                    (report.status, report.exit) = (.skipped, .success)
                    report.wallSeconds = clock.seconds
                    outcome.report = report
                    outcome.skipped = true
                    return outcome
                }
            }
            var merger = Merger(options: options, report: onDiagnostic, progress: onProgress)
            merger.temporaryTag = temporaryTag
            merger.alternativeOutput = job.alternativeOutput
            // Not onto a video, nor onto the input list (-y or not).
            try merger.checkOutput(job.output, inputs: inputs + [job.inputsFrom].compactMap { $0 == "-" ? nil : $0 })
            // Leftovers of a run of this output that was killed (-9, power cut) on this machine.
            let (folder, name) = SafeFile.split(job.output)
            TemporaryFile.sweep(folder: folder, target: name)
            let plan = try merger.makePlan(probing: resolved, into: &probes)
            outcome.plan = plan
            try FreeSpace.check(
                output: job.output, durationMicros: plan.durationMicros, options: options, required: job.minFree)
            if job.dryRun {
                (report.status, report.exit) = (.dryRun, .success)
            } else {
                let result = try merger.write(plan, to: job.output, clock: clock)
                outcome.result = result
                outcome.plan = result.plan  // with what was measured on the way (--loudness)
                report.output = result.output
                (report.status, report.exit) = (.ok, .success)
                if job.deleteSources { report.deletedSources = deleteSources(of: plan, output: result.output) }
            }
        } catch {
            let vmergeError = error as? VMergeError
            outcome.failure = vmergeError ?? .io(file: job.output, message: "\(error)")
            switch vmergeError {
            case .nothingToMerge?: (report.status, report.exit) = (.nothingToMerge, .nothingToMerge)
            case let .cancelled(signal)?: (report.status, report.exit) = (.cancelled, .cancelled(signal: signal))
            default: (report.status, report.exit) = (.failed, .failure)
            }
            report.error = (vmergeError?.file, vmergeError?.description ?? "\(error)")
        }
        report.plan = outcome.plan ?? (probes.isEmpty ? nil : MergePlan(probes: probes, edits: edits, options: options))
        report.wallSeconds = clock.seconds
        outcome.report = report
        return outcome
    }

    /// --delete-sources, once the output is published: checks it, then deletes what it consumed;
    /// returns what was deleted. What is kept, and why, is reported as a warning.
    private func deleteSources(of plan: MergePlan, output: OutputSummary) -> [String] {
        let frame = plan.timeline.micros(ofFrame: 1)
        if let problem = SourceRemoval.problem(
            withOutput: output.path, expectedMicros: output.durationMicros, frameMicros: frame)
        {
            onDiagnostic(
                Diagnostic(.warning, file: output.path, "the sources are kept: the output does not read back whole: \(problem)"))
            return []
        }
        let (deleted, kept) = SourceRemoval.remove(SourceRemoval.consumed(plan, outputMicros: output.durationMicros))
        for (path, reason) in kept { onDiagnostic(Diagnostic(.warning, file: path, reason)) }
        return deleted
    }

    /// Run settings recorded in the report next to the merge options.
    static func settings(of job: Job) -> [(String, JSON)] {
        [
            ("sort", .string(job.order.rawValue)),
            ("inputs_from", .string(job.inputsFrom)),
            ("dry_run", .bool(job.dryRun)),
            ("delete_sources", .bool(job.deleteSources)),
        ]
    }

    /// Named inputs plus --inputs-from, folders expanded, in the order asked for; each with
    /// its edit.
    public func resolveInputs(_ job: Job) throws -> [JobInput] {
        var named = job.namedInputs
        if let list = job.inputsFrom {
            let text: String
            if list == "-" {
                text = try readStandardInput()
            } else {
                text = String(decoding: try SafeFile.read(list, limit: InputList.maxListBytes), as: UTF8.self)
            }
            let listed = InputList.parse(text)
            if listed.count > InputList.maxListed {
                throw VMergeError.invalidInput(
                    file: list, reason: "lists \(listed.count) inputs; at most \(InputList.maxListed)")
            }
            if listed.isEmpty && named.isEmpty {
                throw VMergeError.invalidInput(file: list, reason: "input list names no files")
            }
            named += listed.map { JobInput($0) }
        }
        return try InputList.expand(named, order: job.order, confinedTo: job.options.confinement)
    }
}
