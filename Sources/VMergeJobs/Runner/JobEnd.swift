import Foundation
import VMergeAV
import VMergeCore

/// How a job ended, as its steps found it (see `JobRunner.run`): what every door switches on
/// (`JobOutcome.end`), and what its report is rendered from, once (`JobRunner.makeReport`).
package enum JobEnd: Sendable {
    /// Refused before any work, leaving no report: its report would overwrite an input.
    case refused(String)
    /// The output already holds this very job: nothing was made.
    case upToDate(UpToDate)
    /// A dry run: what would be made, and what the merge would meet (see `JobRunner.dryRun`).
    case planned(MergePlan, Preflight)
    /// Made and published.
    case published(Publication)
    /// No clip left to merge (exit 3).
    case nothingToMerge(JobFailure)
    /// Stopped by a signal or the caller's cancel (exit 130/143).
    case cancelled(JobFailure)
    /// Stopped by anything else.
    case failed(JobFailure)

    /// Found done (`upToDate`): said by the report as "skipped".
    package struct UpToDate: Sendable {
        /// What the output was found to hold, when its inputs could be probed again.
        package var plan: MergePlan?
        /// With --delete-sources: what was judged from it.
        package var consumption: Consumption?
        /// A keyed job's output made earlier from files some of which are gone since (an earlier
        /// run's --delete-sources): done, never made again from what is left. Its report names
        /// the inputs as the job does and no plan (what is left is not what it holds).
        package var madeEarlier = false
    }

    /// What a published job made: the names actually published (another run may have taken
    /// the planned one: see `AlternativeOutputs`), and with --delete-sources what was judged.
    package struct Publication: Sendable {
        package var result: MergeResult
        package var consumption: Consumption?
        /// The folder the output was published in, opened when the job started: what is written
        /// beside the output afterwards (watch's report) goes there, not wherever its name leads now.
        package var folder: OutputFolder?
        /// merge --report: the report was published with the output; and, when rewriting it
        /// afterwards (to name the deleted sources) failed, why.
        package var reportPublished = false
        package var reportFailure: VMergeError?
    }

    /// The clips probed so far, if any; the plan of a run that made or found its output.
    package var plan: MergePlan? {
        switch self {
        case .refused: nil
        case let .upToDate(done): done.plan
        case let .planned(plan, _): plan
        case let .published(publication): publication.result.plan
        case let .nothingToMerge(failure), let .cancelled(failure), let .failed(failure): failure.probed
        }
    }

    /// With --delete-sources, once the output is published or found done: every input file, and
    /// whether the output read back holds all of it.
    package var consumption: Consumption? {
        switch self {
        case let .upToDate(done): done.consumption
        case let .published(publication): publication.consumption
        default: nil
        }
    }

    /// What stopped the job, when something did.
    package var failure: JobFailure? {
        switch self {
        case let .nothingToMerge(failure), let .cancelled(failure), let .failed(failure): failure
        default: nil
        }
    }

    /// The word for it, as the report and the batch's counts give it.
    package var status: RunReport.Status {
        switch self {
        case .refused, .failed: .failed
        case .upToDate: .skipped
        case .planned: .dryRun
        case .published: .ok
        case .nothingToMerge: .nothingToMerge
        case .cancelled: .cancelled
        }
    }

    /// The exit status it gives.
    package var exit: Exit {
        switch self {
        case .refused: .failure
        case .upToDate, .published: .success
        case let .planned(_, preflight): preflight.exit
        case .nothingToMerge: .nothingToMerge
        case let .cancelled(failure):
            if case let .cancelled(signal) = failure.error { .cancelled(signal: signal) } else { .failure }
        // Found once a folder or a list is expanded, but the command's mistake all the same.
        case let .failed(failure):
            if case .outputIsInput = failure.error { .usage } else { .failure }
        }
    }

    /// The job's output is there: made now, or found made.
    package var isDone: Bool {
        switch self {
        case .published, .upToDate: true
        default: false
        }
    }

    /// How an error stops a job whose output is `output` and inputs `inputs`.
    static func stopped(by error: any Error, output: String, inputs: [FileName], probed: MergePlan?) -> JobEnd {
        var failure = JobFailure(
            error: VMergeError.of(error) { .io(file: output, message: $0) }, probed: probed, forGood: false,
            reported: ((error as? VMergeError)?.file, VMergeError.message(of: error)))
        switch failure.error {
        case .nothingToMerge:
            failure.forGood = true
            return .nothingToMerge(failure)
        case .cancelled: return .cancelled(failure)
        default:
            failure.forGood = !failure.error.isOnOutputSide(of: output, inputs: inputs)
            return .failed(failure)
        }
    }
}

/// What stopped a job.
package struct JobFailure: Sendable {
    package var error: VMergeError
    /// What was probed before it stopped.
    package var probed: MergePlan?
    /// The job failed for a reason of its own, which a retry meets again: an input that cannot be
    /// used, nothing to merge, an output name the rules refuse or a file there the job did not
    /// write. Not an output-side error (a full disk, a write error: these may pass; the queue's
    /// workers retry the same ones), nor a cancel.
    package var forGood: Bool
    /// The file and the text the report gives: the error's own, also when it is not a
    /// `VMergeError` (then `error` names the output).
    var reported: (file: String?, message: String)
}

/// --delete-sources, from an output published or found done: the ledger of what it holds, and
/// what was deleted by it (nothing when the caller deletes: see `JobRunner.Door`).
package struct Consumption: Sendable {
    package var ledger: SourceLedger
    package var deleted: [String] = []

    /// The files kept, with why, as the report lists them.
    var keptSources: [(path: String, reason: String)] { ledger.kept.map { ($0.path, $0.keptBecause ?? "kept") } }
}

/// A step ending the job before the last one.
struct EndedEarly: Error {
    let end: JobEnd
    init(_ end: JobEnd) { self.end = end }
}
