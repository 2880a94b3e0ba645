import Foundation
package import VMergeAV
package import VMergeCore
package import VMergeJobs

/// How a merge with its report ended (see `MergeRun.perform`).
package enum Performed {
    /// The report was named onto the output, an input, the input list or the poster: nothing done.
    case refused(ReportClash)
    /// The report cannot be written where named: found before any work.
    case failedToStart(VMergeError)
    /// The job ran; `reportError` says why its report could not be written afterwards.
    case ran(JobOutcome, reportError: VMergeError?)
}

/// One merge and its JSON report, the way both ``MergeSession`` and the command line's merge run
/// it: the report's name checked and its temporary file made before any work, the report
/// published with the output when there is one, and on its own when there is not.
package struct MergeRun {
    package var job: Job
    /// A file for the report; nil: none (the command line prints it itself for "-").
    package var reportPath: String?
    /// Reads "-" for --inputs-from.
    package var readStandardInput: () throws -> String = { "" }

    package init(job: Job, reportPath: String?) {
        self.job = job
        self.reportPath = reportPath
    }

    package func perform(
        onDiagnostic: @escaping (Diagnostic) -> Void, onProgress: ((MergeProgress) -> Void)?,
        context: MergeContext = MergeContext()
    ) -> Performed {
        let overwrite = job.options.overwrite
        var reportFile: TemporaryFile?
        if let path = reportPath {
            do {
                let named =
                    [(job.output, "the output video")] + job.inputPaths.map { ($0, "an input video") }
                    + (job.inputsFrom.map { [($0, "the input list")] } ?? [])
                    + (job.options.posterPath(forOutput: job.output).map { [($0, "the poster")] } ?? [])
                reportFile = try ReportTarget.prepare(path, against: named, overwrite: overwrite)
            } catch let clash as ReportClash {
                return .refused(clash)
            } catch {
                return .failedToStart(VMergeError.of(error) { .io(file: path, message: $0) })
            }
        }
        var runner = JobRunner(onDiagnostic: onDiagnostic, onProgress: onProgress)
        runner.readStandardInput = readStandardInput
        runner.context = context
        // The output records the job's key, so a second run (a dry run's too) knows the output
        // for its own and skips it, as a batch does; with --strip-metadata it records nothing
        // (the tag names the inputs), and a second run needs -y.
        runner.keyed = !job.options.stripMetadata
        // -y asks for the output to be made again, even over this job's own.
        runner.skipsDone = !overwrite
        // Published with the video, before it: a run leaves the old pair or the new one.
        runner.reportTarget = reportPath.map { ($0, ReportTarget.policy(overwrite: overwrite)) }
        let outcome = runner.run(job)
        guard outcome.vetoed == nil else { return .ran(outcome, reportError: nil) }
        if outcome.reportPublished {
            // With the video; only naming the deleted sources afterwards can have failed, and
            // then the published set stays (the name is never left empty).
            reportFile?.discard()
            return .ran(outcome, reportError: outcome.reportFailure)
        }
        if let reportFile {
            do {
                try ReportTarget.publish(outcome.report.json, in: reportFile, overwrite: overwrite)
            } catch {
                return .ran(outcome, reportError: VMergeError.of(error) { .io(file: reportFile.target, message: $0) })
            }
        }
        return .ran(outcome, reportError: nil)
    }
}
