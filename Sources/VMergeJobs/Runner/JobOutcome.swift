import Foundation
import VMergeAV
import VMergeCore

/// What a job's run returns: how it ended, which every door switches on, and its report,
/// rendered from that once (`JobRunner.makeReport`).
package struct JobOutcome: Sendable {
    package private(set) var end: JobEnd
    package private(set) var report: RunReport

    init(end: JobEnd, report: RunReport) {
        (self.end, self.report) = (end, report)
    }

    package var exit: Exit { end.exit }

    /// Records what became of the events the run sent (--notify) in its report.
    package mutating func record(_ notifications: [NotificationRecord]) { report.notifications = notifications }

    /// With --delete-sources, once the output is published or found done: every input file, and
    /// whether the output read back holds all of it (see `SourceLedger`).
    package var ledger: SourceLedger? { end.consumption?.ledger }

    /// The sources a door deleted after the run (a batch decides across its jobs): the ending and
    /// its report say them.
    package mutating func recordDeleted(_ paths: [String]) {
        changeConsumption { $0.deleted = paths }
    }

    /// A source the run consumed that its door keeps all the same (a batch: another job keeps
    /// it, or its deletion failed), with why: the ending and its report say it.
    package mutating func recordKept(key: String, because reason: String) {
        changeConsumption { $0.ledger.keep(key, because: reason) }
    }

    private mutating func changeConsumption(_ change: (inout Consumption) -> Void) {
        guard var consumption = end.consumption else { return }
        change(&consumption)
        switch end {
        case var .published(publication):
            publication.consumption = consumption
            end = .published(publication)
        case var .upToDate(done):
            done.consumption = consumption
            end = .upToDate(done)
        default: break
        }
        report.deletedSources = end.consumption?.deleted ?? []
        report.keptSources = end.consumption?.keptSources ?? []
    }

    /// How the job ended, for a log line: "done -> out.mp4 (31.2 s of video in 4.1 s, 7.6x)",
    /// "skipped, out.mp4 is up to date", "cancelled" or "failed: <why>".
    package func summary(output: String) -> String {
        switch end {
        case let .published(publication):
            let media = Double(publication.result.output.durationMicros) / 1e6
            return String(
                format: "done -> %@ (%@ s of video in %.1f s, %.1fx)", output, formatSeconds(media), report.wallSeconds,
                media / max(report.wallSeconds, 1e-3))
        case let .upToDate(done):
            // Made from inputs some of which are gone since: kept as the only copy, not up to date.
            return done.madeEarlier
                ? "skipped, \(output) is kept: made earlier from inputs that are not all there now"
                : "skipped, \(output) is up to date"
        case .cancelled: return "cancelled"
        // The error's own words, not "failed".
        case let .nothingToMerge(failure): return failure.reported.message
        case let .failed(failure): return "failed: \(failure.reported.message)"
        case let .refused(reason): return "failed: \(reason)"
        case .planned: return "planned (--dry-run)"
        }
    }
}
