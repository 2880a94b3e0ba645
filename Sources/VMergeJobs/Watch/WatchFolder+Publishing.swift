import CVMergeSupport
import Foundation
import VMergeAV
import VMergeCore

/// A job's end: its output and report published and its sources moved, or its failure noted.
extension WatchFolder {
    // MARK: publishing

    func succeed(_ claim: Claim, job: Job, outcome: JobOutcome) {
        // The output is already published (temporary file + no-replace rename); its report goes
        // beside it, then the sources leave .processing. A recovered job whose output was already
        // published keeps the report written with it.
        // The name it got (another worker may have taken the planned one meanwhile).
        let publication: JobEnd.Publication?
        if case let .published(published) = outcome.end { publication = published } else { publication = nil }
        let output = publication?.result.output.path ?? job.output.escaped
        let reportPath = output + ".json"
        if !(publication == nil && FileKind.at(FileName(reportPath)) == .regular) {
            writeReport(outcome.report, to: reportPath, of: claim, in: publication?.folder)
        }
        let consumed = consumedSources(of: claim, outcome: outcome)
        let (moved, note, deleted) = claims.finish(claim, deleteSources: !consumed.isEmpty, consumed: consumed)
        if let note { log.warning("\(claim.name): \(note)\(moved ? "" : "; it stays in .processing")") }
        if !deleted.isEmpty {
            // Said as a merge says it (a line per file, a count with -q), and named in the report.
            let prefix = claim.folder + "/"
            for path in deleted {
                let shown = claim.name + "/" + String(path.dropFirst(prefix.count))
                log(Diagnostic(.deleted, file: shown, "deleted (--delete-sources: the output holds all of it)"))
            }
            // A recovered job keeps the report of the run that published its output.
            if let publication {
                var outcome = outcome
                outcome.recordDeleted(deleted)
                writeReport(outcome.report, to: reportPath, of: claim, in: publication.folder)
            }
        }
        if !moved { stuck[claim.id] = claim }
        jobsDone += 1
        metrics.finished(.done)
        metrics.wrote(outcome)
        metrics.deleted(deleted.count)
        status.state.done = jobsDone
        let report = outcome.report
        if let publication {
            let media = Double(publication.result.output.durationMicros) / 1e6
            log(
                String(
                    format: "done %@ -> %@ (%@ s of video in %.1f s, %.1fx)", claim.name, output,
                    formatSeconds(media), report.wallSeconds, media / max(report.wallSeconds, 1e-3)))
        } else {
            log("done \(claim.name) -> \(output) (already there from an earlier run)")
        }
        status.finished(
            WatchStatus.Finished(
                name: claim.name, result: .done, output: FileName(output).lastComponent.escaped,
                outputBytes: report.output?.bytes ?? sizeOfFile(at: output)))
        status.write("idle")
    }

    /// The size of an output already there (a job found done), without following a link.
    private func sizeOfFile(at path: String) -> Int64? {
        var info = stat()
        guard POSIX.lstat(FileName(path), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// The job's report beside its output, over nothing but an earlier vmerge report; a failure
    /// is a warning (the output is published either way). In `folder`, the one the output was
    /// published in, when the run published it (a job found done has none: by its name).
    private func writeReport(_ report: RunReport, to path: String, of claim: Claim, in folder: OutputFolder? = nil) {
        do {
            try SafeFile.write(
                report.json.text(pretty: true) + "\n", to: path, replace: .ifStartsWith(RunReport.signatures),
                tag: claim.token, in: folder?.descriptor)
        } catch {
            log.warning("\(claim.name): \(VMergeError.message(of: error))")
        }
    }

    /// With --delete-sources, what the job consumed: the files the output, read back, holds
    /// wholly (the job runner's ledger, the same for a recovered job whose output was already
    /// published); never an unreadable one or one the output holds only part of: those stay in
    /// .done.
    private func consumedSources(of claim: Claim, outcome: JobOutcome) -> [SourceLedger.Entry] {
        guard settings.deleteSources else { return [] }
        guard let ledger = outcome.ledger else {
            log.warning("\(claim.name): the sources are kept in .done: they could not be probed again")
            return []
        }
        if ledger.consumed.isEmpty && !ledger.entries.isEmpty {
            log("\(claim.name): no source is held wholly by the output; all stay in .done")
        }
        return ledger.consumed
    }

    /// `reason`: for the metrics, when the error does not tell it.
    func fail(
        _ claim: Claim, error: VMergeError, report: RunReport?, attempts: Int, reason: RunMetrics.FailureReason? = nil
    ) {
        jobsFailed += 1
        metrics.finished(
            .failed,
            reason: reason
                ?? RunMetrics.FailureReason(error, output: report?.outputPath.escaped, inputs: report?.inputPaths ?? []))
        status.state.failed = jobsFailed
        switch claims.moveToFailed(claim) {
        case let .success(place):
            // The note goes beside the job's folder in .failed (the worker's own), never into the
            // folder itself (the producer's).
            writeNote(id: claim.id, job: claim.name, error: error, report: report, attempts: attempts)
            claim.lock.release()
            log.error("failed \(claim.name): \(claim.shown(error.description)); moved to \(place)")
        case let .failure(trouble):
            // Kept locked while this worker lives, so it is not recovered and failed again in a loop;
            // the next worker recovers it (and counts that).
            stuck[claim.id] = claim
            log.error("failed \(claim.name): \(claim.shown(error.description)); left in .processing (\(trouble.reason))")
        }
        status.finished(WatchStatus.Finished(name: claim.name, result: .failed, error: claim.shown(error.description)))
        status.write("idle")
    }

    /// ".failed/<id>.error.json": what went wrong, for the producer and the operator.
    func writeNote(id: String, job: String, error: VMergeError, report: RunReport?, attempts: Int) {
        let note = JSON.object([
            ("job", .string(job)),
            ("error", .string(error.description)),
            ("file", .string(error.file)),
            ("attempts", .int(attempts)),
            ("failed_at", .string(ISO8601DateFormatter().string(from: Date()))),
            ("worker", .string("\(shortHostName) pid \(getpid())")),
            ("report", report?.json ?? .null),
        ])
        do {
            try SafeFile.write(
                note.text(pretty: true) + "\n", to: claims.folders.failedPath + "/" + id + ".error.json", replace: .never,
                in: claims.folders.failed)
        } catch {
            log.warning("\(job): cannot write its error note: \(VMergeError.message(of: error))")
        }
    }

    /// Stopped by a signal (or no space): the job goes back to the inbox untouched, for later.
    func release(_ claim: Claim, quiet: Bool = false) {
        if claims.putBack(claim) {
            if !quiet { log("stopped: \(claim.name) put back in the inbox") }
        } else {
            // Left claimed; the next worker to start recovers it.
            log("stopped: \(claim.name) stays in .processing for the next worker")
        }
        status.finished(WatchStatus.Finished(name: claim.name, result: .putBack))
    }
}
