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
    public var exitCode: Int32 { report.exitCode }
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
            status: .failed, exitCode: 1, startedAt: Date(), wallSeconds: 0,
            versions: (JobRunner.version, FFmpegVersions.release, FFmpegVersions.libraries),
            options: options, settings: JobRunner.settings(of: job), outputPath: job.output, inputPaths: job.inputs)
        var outcome = JobOutcome(report: report)
        var probes: [InputProbe] = []
        do {
            let inputs = try resolveInputs(job)
            report.inputPaths = inputs
            if let veto, let reason = veto(inputs) {
                outcome.vetoed = reason
                return outcome
            }
            if keyed {
                let key = JobKey.make(inputs: inputs, root: job.keyRoot, options: options)
                options.jobKey = key
                if !job.dryRun && FileManager.default.fileExists(atPath: job.output) {
                    switch Probe.recordedJobKey(at: job.output) {
                    case key?:
                        report.status = .skipped
                        report.exitCode = 0
                        report.wallSeconds = clock.seconds
                        outcome.report = report
                        outcome.skipped = true
                        return outcome
                    case _?:
                        options.overwrite = true  // an earlier result of this job, from other inputs
                    case nil:
                        break  // not ours: refused below unless overwrite was asked for
                    }
                }
            }
            var merger = Merger(options: options, report: onDiagnostic, progress: onProgress)
            merger.temporaryTag = temporaryTag
            try merger.checkOutput(job.output, inputs: inputs)
            let plan = try merger.makePlan(probing: inputs, into: &probes)
            outcome.plan = plan
            try FreeSpace.check(
                output: job.output, durationMicros: plan.durationMicros, options: options, required: job.minFree)
            if job.dryRun {
                report.status = .dryRun
                report.exitCode = 0
            } else {
                let result = try merger.write(plan, to: job.output, clock: clock)
                outcome.result = result
                report.output = result.output
                report.status = .ok
                report.exitCode = 0
            }
        } catch {
            let vmergeError = error as? VMergeError
            outcome.failure = vmergeError ?? .io(file: job.output, message: "\(error)")
            switch vmergeError {
            case .nothingToMerge?: (report.status, report.exitCode) = (.nothingToMerge, 3)
            case let .cancelled(signal)?: (report.status, report.exitCode) = (.cancelled, 128 + signal)
            default: (report.status, report.exitCode) = (.failed, 1)
            }
            report.error = (vmergeError?.file, vmergeError?.description ?? "\(error)")
        }
        report.plan = outcome.plan ?? (probes.isEmpty ? nil : MergePlan(probes: probes, options: options))
        report.wallSeconds = clock.seconds
        outcome.report = report
        return outcome
    }

    /// Run settings recorded in the report next to the merge options.
    static func settings(of job: Job) -> [(String, JSON)] {
        [
            ("min_free", .int(job.minFree)),
            ("sort", .string(job.order.rawValue)),
            ("inputs_from", .string(job.inputsFrom)),
            ("dry_run", .bool(job.dryRun)),
        ]
    }

    /// Named inputs plus --inputs-from, folders expanded, in the order asked for.
    public func resolveInputs(_ job: Job) throws -> [String] {
        var named = job.inputs
        if let list = job.inputsFrom {
            let text: String
            if list == "-" {
                text = try readStandardInput()
            } else {
                guard let data = FileManager.default.contents(atPath: list) else {
                    throw VMergeError.io(file: list, message: "cannot read this input list")
                }
                text = String(decoding: data, as: UTF8.self)
            }
            let listed = InputList.parse(text)
            if listed.isEmpty && named.isEmpty {
                throw VMergeError.invalidInput(file: list, reason: "input list names no files")
            }
            named += listed
        }
        return try InputList.expand(named, order: job.order)
    }
}
