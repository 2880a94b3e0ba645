import Foundation
import VMergeAV
import VMergeCore

/// How a job ended, as its steps found it (see `JobRunner.run`); its outcome and report are made
/// from this once.
enum JobEnd: Sendable {
    /// Refused before any work, leaving no report: its report would overwrite an input.
    case vetoed(String)
    /// The output already held this very job (found so, or published meanwhile by another run of
    /// it): nothing was made. With --delete-sources, what was judged from it.
    case upToDate(MergePlan?, Consumption?)
    /// A keyed job's output was made earlier from files some of which are gone since (an
    /// earlier run's --delete-sources): done, never made again from what is left. Its report
    /// names the inputs as the job does and no plan (what is left is not what it holds).
    case madeEarlier(Consumption?)
    /// A dry run: what would be made, and what the merge would meet (see `JobRunner.dryRun`).
    case planned(MergePlan, Preflight)
    case published(MergeResult, Consumption?)
    /// With whatever was probed before it stopped.
    case failed(any Error, probed: MergePlan?)
}

/// A step ending the job before the last one.
struct EndedEarly: Error {
    let end: JobEnd
    init(_ end: JobEnd) { self.end = end }
}

/// --delete-sources, from an output published or found done: the ledger of what it holds, and
/// what was deleted by it (nothing when the caller deletes: see `JobRunner.deletesSources`).
struct Consumption: Sendable {
    var ledger: SourceLedger
    var deleted: [String] = []

    /// The files kept, with why, as the report lists them.
    var keptSources: [(path: String, reason: String)] { ledger.kept.map { ($0.path, $0.keptBecause ?? "kept") } }
}

extension JobRunner {
    /// The job's outcome, with its report, from how it ended. A published report that must now
    /// name the sources deleted or kept is written again; if that fails, the set stays as published and
    /// the outcome says why.
    func finish(
        _ job: Job, _ resolved: ResolvedJob, _ end: JobEnd, _ start: RunStart, folders: PublishFolders? = nil
    ) -> JobOutcome {
        var inputs = (try? resolved.inputs.get().map(\.path)) ?? job.inputPaths
        if case .madeEarlier = end { inputs = job.inputPaths }
        var outcome = JobOutcome(report: makeReport(job, inputs: inputs, end, start))
        switch end {
        case let .vetoed(reason):
            outcome.vetoed = reason
        case let .upToDate(plan, consumed):
            (outcome.skipped, outcome.plan, outcome.ledger) = (true, plan, consumed?.ledger)
        case let .madeEarlier(consumed):
            (outcome.skipped, outcome.ledger) = (true, consumed?.ledger)
        case let .planned(plan, _):
            outcome.plan = plan
        case let .published(result, consumed):
            (outcome.result, outcome.plan, outcome.ledger) = (result, result.plan, consumed?.ledger)
            outcome.folder = folders?.output
            outcome.reportPublished = reportTarget != nil
            if let target = reportTarget, !(consumed?.deleted ?? []).isEmpty || !(consumed?.ledger.kept ?? []).isEmpty {
                do {
                    // Where the set was published, whatever the folder's name leads to now.
                    try SafeFile.write(
                        outcome.report.json.text(pretty: true) + "\n", to: target.path,
                        replace: .ifStartsWith(RunReport.signatures), in: folders?.report.descriptor)
                } catch {
                    outcome.reportFailure = .io(
                        file: target.path, message: "cannot write the report: \(VMergeError.reason(of: error))")
                }
            }
        case let .failed(error, probed):
            outcome.failure = VMergeError.of(error) { .io(file: job.output, message: $0) }
            outcome.plan = probed
        }
        return outcome
    }

    /// The run's report, as the job ended: what it did, or what stopped it and what it left.
    func makeReport(_ job: Job, inputs: [String], _ end: JobEnd, _ start: RunStart) -> RunReport {
        var report = RunReport(
            status: .failed, exit: .failure, startedAt: start.date, wallSeconds: start.clock.seconds,
            versions: (JobRunner.version, FFmpegVersions.release, FFmpegVersions.libraries),
            options: job.options, minFree: job.minFree, settings: JobRunner.settings(of: job), outputPath: job.output,
            inputPaths: inputs)
        switch end {
        case .vetoed: break
        case let .upToDate(plan, consumed):
            (report.status, report.exit, report.plan) = (.skipped, .success, plan)
            report.deletedSources = consumed?.deleted ?? []
            report.keptSources = consumed?.keptSources ?? []
        case let .madeEarlier(consumed):
            (report.status, report.exit) = (.skipped, .success)
            report.deletedSources = consumed?.deleted ?? []
            report.keptSources = consumed?.keptSources ?? []
        case let .planned(plan, preflight):
            (report.status, report.exit, report.plan, report.preflight) = (.dryRun, preflight.exit, plan, preflight)
            // The first problem the merge would meet, as its own report would say it.
            report.error = preflight.problems.first.map { ($0.file, $0.description) }
        case let .published(result, consumed):
            (report.status, report.exit, report.plan, report.output) = (.ok, .success, result.plan, result.output)
            report.deletedSources = consumed?.deleted ?? []
            report.keptSources = consumed?.keptSources ?? []
        case let .failed(error, probed):
            let vmergeError = error as? VMergeError
            switch vmergeError {
            case .nothingToMerge?: (report.status, report.exit) = (.nothingToMerge, .nothingToMerge)
            case let .cancelled(signal)?: (report.status, report.exit) = (.cancelled, .cancelled(signal: signal))
            // Found once a folder or a list is expanded, but the command's mistake all the same.
            case .outputIsInput?: (report.status, report.exit) = (.failed, .usage)
            default: (report.status, report.exit) = (.failed, .failure)
            }
            report.error = (vmergeError?.file, VMergeError.message(of: error))
            report.keptOutput = OutputOnDisk.kept(by: job)
            report.plan = probed
        }
        return report
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
}
