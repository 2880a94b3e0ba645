import Foundation
import VMergeAV
import VMergeCore

extension JobRunner {
    /// The job's outcome: how it ended, and its report rendered from that. A published report
    /// that must now name the sources deleted or kept is written again; if that fails, the set
    /// stays as published and the publication says why.
    func finish(
        _ job: Job, _ resolved: ResolvedJob, _ end: JobEnd, _ start: RunStart, folders: PublishFolders? = nil
    ) -> JobOutcome {
        var end = end
        var inputs = (try? resolved.inputs.get().map(\.path)) ?? job.inputPaths
        if case let .upToDate(done) = end, done.madeEarlier { inputs = job.inputPaths }
        let report = makeReport(job, inputs: inputs, end, start)
        if case var .published(publication) = end {
            publication.folder = folders?.output
            publication.reportPublished = reportTarget?.joined ?? false
            let consumed = publication.consumption
            // One not joined (a bucket's beside a local video) is written after the run, whole.
            if let reportTarget, reportTarget.joined,
                !(consumed?.deleted ?? []).isEmpty || !(consumed?.ledger.kept ?? []).isEmpty
            {
                do {
                    try reportTarget.rewrite(report.json)
                } catch {
                    publication.reportFailure = VMergeError.of(error) { .io(file: reportTarget.path, message: $0) }
                }
            }
            end = .published(publication)
        }
        sayEnded(job, end, report: report)
        return JobOutcome(end: end, report: report)
    }

    /// The run's report, as the job ended: what it did, or what stopped it and what it left.
    func makeReport(_ job: Job, inputs: [FileName], _ end: JobEnd, _ start: RunStart) -> RunReport {
        var report = RunReport(
            status: end.status, exit: end.exit, startedAt: start.date, wallSeconds: start.clock.seconds,
            versions: (JobRunner.version, FFmpegVersions.release, FFmpegVersions.libraries),
            options: job.options, minFree: job.minFree, settings: JobRunner.settings(of: job), outputPath: job.output,
            inputPaths: inputs)
        report.plan = end.plan
        report.deletedSources = end.consumption?.deleted ?? []
        report.keptSources = end.consumption?.keptSources ?? []
        switch end {
        case .refused, .upToDate: break
        case let .planned(_, preflight):
            report.preflight = preflight
            // The first problem the merge would meet, as its own report would say it.
            report.error = preflight.problems.first.map { ($0.file, $0.description) }
        case let .published(publication):
            report.output = publication.result.output
        case let .nothingToMerge(failure), let .cancelled(failure), let .failed(failure):
            report.error = failure.reported
            report.keptOutput = OutputOnDisk.kept(by: job)
        }
        return report
    }

    /// Run settings recorded in the report next to the merge options.
    static func settings(of job: Job) -> [(String, JSON)] {
        [
            ("sort", .string(job.order.rawValue)),
            ("inputs_from", .string(job.inputsFrom?.named)),
            ("dry_run", .bool(job.dryRun)),
            ("delete_sources", .bool(job.deleteSources)),
        ]
    }
}
