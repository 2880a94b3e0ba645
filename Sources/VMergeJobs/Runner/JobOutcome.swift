import Foundation
import VMergeAV
import VMergeCore

/// How a job ended.
package struct JobOutcome: Sendable {
    package var report: RunReport
    package var result: MergeResult?
    package var plan: MergePlan?
    /// The output already held this job's result (same job key): nothing was done.
    package var skipped = false
    /// Set when the job was refused before any work and must leave no report (its report would
    /// overwrite an input: see `JobRunner.reportTarget`).
    package var vetoed: String?
    /// What stopped the job, when something did.
    package var failure: VMergeError?
    /// The run's report was published with the output (see `JobRunner.reportTarget`); and, when
    /// rewriting it afterwards (to name the deleted sources) failed, why.
    package var reportPublished = false
    package var reportFailure: VMergeError?
    /// With --delete-sources, once the output is published (or found up to date): every input
    /// file, and whether the output read back holds all of it (see `SourceLedger`).
    package var ledger: SourceLedger?
    /// The folder the output was published in, opened when the job started: what is written
    /// beside the output afterwards (watch's report) goes there, not wherever its name leads now.
    package var folder: OutputFolder?
    package var exit: Exit { report.exit }

    /// The job failed for a reason of its own, which a retry meets again: an input that cannot be
    /// used, nothing to merge, an output name the rules refuse or a file there the job did not
    /// write. Not an output-side error (a full disk, a write error: these may pass; the queue's
    /// workers retry the same ones), nor a cancel.
    package var failedForGood: Bool {
        switch report.status {
        case .nothingToMerge: return true
        case .failed:
            guard let failure else { return false }
            return !failure.isOnOutputSide(of: report.outputPath, inputs: report.inputPaths)
        default: return false
        }
    }

    /// How the job ended, for a log line: "done -> out.mp4 (31.2 s of video in 4.1 s, 7.6x)",
    /// "skipped, out.mp4 is up to date", "cancelled" or "failed: <why>".
    package func summary(output: String) -> String {
        switch report.status {
        case .ok:
            let media = Double(report.output?.durationMicros ?? 0) / 1e6
            return String(
                format: "done -> %@ (%@ s of video in %.1f s, %.1fx)", output, formatSeconds(media), report.wallSeconds,
                media / max(report.wallSeconds, 1e-3))
        case .skipped: return "skipped, \(output) is up to date"
        case .cancelled: return "cancelled"
        // The report's own word for it, not "failed".
        case .nothingToMerge: return report.error?.message ?? "nothing to merge"
        default: return "failed: \(report.error?.message ?? report.status.rawValue)"
        }
    }
}
