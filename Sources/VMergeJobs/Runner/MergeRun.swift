import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// How a merge with its report ended (see `MergeRun.perform`).
package enum Performed {
    /// The report was named onto the output, an input, the input list or the poster: nothing done.
    case refused(ReportClash)
    /// The report cannot be written where named: found before any work.
    case failedToStart(VMergeError)
    /// The job ran; `reportError` says why its report could not be written afterwards.
    case ran(JobOutcome, reportError: VMergeError?)
}

/// One merge and its JSON report, the way both the Swift API's `MergeSession` and the command line's merge run
/// it: the report's name checked and its temporary file made before any work, the report
/// published with the output when there is one, and on its own when there is not.
package struct MergeRun {
    package var job: Job
    /// A file for the report; nil: none (the command line prints it itself for "-").
    package var reportPath: String?
    /// Reads "-" for --inputs-from.
    package var readStandardInput: () throws -> String = { "" }
    /// --notify: where the run's events go. What is not delivered when the run ends is tried for
    /// up to `notifyWait` seconds more, then said (a warning, and the report's `notifications`);
    /// it never changes the run's result.
    package var notifier: Notifier?
    package var notifyWait = 30.0

    package init(job: Job, reportPath: String?) {
        self.job = job
        self.reportPath = reportPath
    }

    package func perform(
        diagnostics: DiagnosticSink, onProgress: ((MergeProgress) -> Void)?,
        context: MergeContext = MergeContext()
    ) -> Performed {
        let overwrite = job.options.overwrite
        var reportFile: ReportFile?
        if let path = reportPath {
            do {
                let named: [(path: FileName, role: String)] =
                    job.publishedFiles.map { ($0.name, $0.role == "output" ? "the output video" : "the \($0.role)") }
                    + job.inputPaths.map { ($0, "an input video") }
                    + (job.inputsFrom?.file.map { [($0, "the input list")] } ?? [])
                reportFile = try ReportFile(
                    path, against: named, overwrite: overwrite,
                    remote: (JobRunner.connector(for: context), job.remoteAccess))
            } catch let clash as ReportClash {
                return .refused(clash)
            } catch {
                return .failedToStart(VMergeError.of(error) { .io(file: path, message: $0) })
            }
        }
        // The output records the job's key, so a second run (a dry run's too) knows the output
        // for its own and skips it, as a batch does; with --strip-metadata it records nothing
        // (the tag names the inputs), and a second run needs -y. -y asks for the output to be
        // made again, even over this job's own. The report is published with the video, before
        // it: a run leaves the old pair or the new one.
        let door = JobRunner.Door.merge(
            recordsKey: !job.options.stripMetadata, remakesDone: overwrite,
            report: reportFile)
        var runner = JobRunner(door, context: context, diagnostics: diagnostics, onProgress: onProgress)
        runner.readStandardInput = readStandardInput
        if let notifier { runner.events = JobEvents { notifier.send($0) } }
        var outcome = runner.run(job)
        if let notifier { outcome.record(delivered(by: notifier, diagnostics: diagnostics)) }
        switch outcome.end {
        case .refused:
            reportFile?.discard()
            return .ran(outcome, reportError: nil)
        // With the video; only naming the deleted sources afterwards can have failed, and then
        // the published set stays (the name is never left empty). With --notify it is written
        // again to say what was delivered.
        case let .published(publication) where publication.reportPublished:
            if notifier != nil, publication.reportFailure == nil, let reportFile {
                do { try reportFile.rewrite(outcome.report.json) } catch {
                    return .ran(outcome, reportError: VMergeError.of(error) { .io(file: reportFile.path, message: $0) })
                }
            }
            return .ran(outcome, reportError: publication.reportFailure)
        default: break
        }
        if let reportFile {
            do {
                try reportFile.publish(outcome.report.json)
            } catch {
                return .ran(outcome, reportError: VMergeError.of(error) { .io(file: reportFile.path, message: $0) })
            }
        }
        return .ran(outcome, reportError: nil)
    }

    /// Waits for the run's events, then says which were not delivered.
    private func delivered(by notifier: Notifier, diagnostics: DiagnosticSink) -> [NotificationRecord] {
        notifier.finish(within: notifyWait, saying: diagnostics).map(\.record)
    }
}
