import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// `vmerge batch`: reads the job list (or folder), runs it, prints one line per job and a
/// summary, writes the batch report.
struct BatchCommand {
    let request: BatchRequest
    let console: Console

    func run() -> Exit {
        let printer = MessagePrinter.forRun(console: console, verbosity: request.verbosity)
        let clock = Stopwatch()
        let jobs: [Job]
        var reportFile: TemporaryFile?
        do {
            jobs = try makeJobs().map { job in
                var job = job
                job.deleteSources = request.deleteSources
                return job
            }
            // The report may not land on the job list, an input or an output; checked, and its
            // temporary file made, before any job runs.
            if let path = request.reportPath, path != "-" {
                // Folders as the videos they hold: -y must not let the report replace one of them.
                let named =
                    [(request.source, "the job list")]
                    + jobs.flatMap { job in
                        [(job.output, "an output video")]
                            + (job.options.posterPath(forOutput: job.output).map { [($0, "a job's poster")] } ?? [])
                            + ((try? InputList.expand(job.inputs, order: .none)) ?? job.inputs).map { ($0.path, "an input video") }
                    }
                reportFile = try ReportTarget.prepare(path, against: named, overwrite: request.settings.merge.overwrite)
            }
        } catch let error as ReportClash {
            printer.print(.error, file: nil, error.description)
            return .usage
        } catch {
            printer.print(.error, file: nil, VMergeError.message(of: error))
            return .failure
        }
        let batch = Batch(
            jobs: jobs, parallel: request.parallel ?? Batch.defaultParallel,
            shard: request.shard.map { ($0.index, $0.count) },
            log: { printer.print(.info, file: nil, "batch: " + $0) },
            onDiagnostic: { printer.diagnostic($0) })
        batch.hooks = request.hooks
        let entries = batch.run()
        printer.sayDeletedCount()
        let signal = VMergeProcess.pendingSignal
        let failed = entries.filter { entry in
            guard let status = entry.outcome?.report.status else { return false }
            return status != .ok && status != .skipped
        }
        let notRun = entries.filter { $0.outcome == nil }.count
        let allDone = failed.isEmpty && notRun == 0
        let exit: Exit = signal != 0 ? .cancelled(signal: signal) : allDone ? .success : .failure
        let status = signal != 0 ? "cancelled" : allDone ? "ok" : "failed"
        let done = entries.filter { $0.outcome?.report.status == .ok }.count
        let skipped = entries.filter { $0.outcome?.report.status == .skipped }.count
        var line = "batch: \(done) done, \(skipped) skipped, \(failed.count) failed"
        if notRun > 0 { line += ", \(notRun) not run" }
        line +=
            request.shard.map { " of \(entries.count) jobs in shard \($0.index)/\($0.count)" }
            ?? " of \(entries.count) jobs"
        line += String(format: " in %.1f s", clock.seconds)
        printer.print(allDone ? .info : .error, file: nil, line)
        if let path = request.reportPath {
            let json = Batch.report(
                entries, total: jobs.count, shard: request.shard.map { ($0.index, $0.count) },
                wallSeconds: clock.seconds, exit: exit, status: status)
            if path == "-" {
                console.output(json.text(pretty: true) + "\n")
            } else if let reportFile {
                do {
                    try ReportTarget.publish(json, in: reportFile, overwrite: request.settings.merge.overwrite)
                } catch {
                    printer.print(.error, file: nil, VMergeError.message(of: error))
                    return exit.failingLate
                }
            }
        }
        return exit
    }

    /// The jobs of a folder (one per subfolder) or of a JSONL list, with their own options read
    /// over the batch-wide ones. Any malformed line stops the batch before it starts.
    private func makeJobs() throws -> [Job] {
        if try BatchSource.isFolder(request.source), request.out == nil {
            throw UsageError(description: "batch: a folder of jobs needs '--out <dir>' for the outputs")
        }
        return try BatchSource.jobs(from: request.source, out: request.out, settings: request.settings)
    }
}
