import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// A job found done, and step 6: what its output holds of its sources, and with --delete-sources
/// deleting what it holds whole.
extension JobRunner {
    /// A keyed job whose output was made earlier from these very names and options, and some of
    /// whose inputs are gone since (an earlier run's --delete-sources), is done: never redone from
    /// what is left, not even with -y (the output may be the only copy).
    func madeEarlierFromFilesGoneSince(_ job: Job, _ resolved: ResolvedJob) -> Bool {
        guard OutputOnDisk.isOurs(job.output.escaped), MP4Layout.isWhole(job.output.escaped),
            let tag = Probe.recordedJobTag(at: job.output.escaped), tag.names == resolved.names,
            holdsFilesGoneSince(tag, job, resolved)
        else { return false }
        diagnostics(
            Diagnostic(
                .note, file: job.output.escaped,
                "made earlier from these inputs, some of which are gone since; it is the only copy of them, so "
                    + "it is not made again (move it away to make it from what is left)"))
        return true
    }

    /// Whether the output holds a file that is gone from the job's inputs since (deleted, or put
    /// in another file's place): by the files its tag records, or, for an older tag, by a named
    /// input that is missing.
    private func holdsFilesGoneSince(_ tag: JobTag, _ job: Job, _ resolved: ResolvedJob) -> Bool {
        guard let files = tag.files else { return job.inputs.contains { FileKind.at($0.path) == .missing } }
        let current = Set(
            ((try? resolved.inputs.get()) ?? []).compactMap { JobTag.who(ofInput: $0.path, sources: resolved.sources) })
        return files.contains { $0 != "-" && !current.contains(JobTag.who($0)) }
    }

    /// With --delete-sources, of a job made earlier: each file the output vouches for goes, the
    /// rest stays, saying why.
    func consumeWhatIsLeft(of job: Job, _ resolved: ResolvedJob) -> JobEnd {
        guard job.deleteSources, let inputs = try? resolved.inputs.get() else {
            return .upToDate(.init(madeEarlier: true))
        }
        var options = job.options
        options.skipInvalid = true
        let quiet = Merger(
            options: options, context: context(of: job, key: nil, names: nil, sources: resolved.sources),
            diagnostics: .silent)
        guard let plan = quiet.quietPlan(probing: inputs) else { return .upToDate(.init(madeEarlier: true)) }
        return .upToDate(
            .init(
                consumption: consume(
                    plan, output: job.output.escaped, writtenMicros: nil, of: job, sources: resolved.sources),
                madeEarlier: true))
    }

    /// The output already holds this very job: its poster is made again if it is missing, and with
    /// --delete-sources the sources a run that published it and then stopped (killed, power cut)
    /// left are judged by the same ledger, from the output as it reads back.
    func finishDone(_ job: Job, _ work: JobWork) -> JobEnd {
        // A poster beside an object is not remade: a done object's set was uploaded whole. Nor are
        // its sources judged again: the object is not read back, so they stay.
        if work.remoteOutput != nil {
            if job.deleteSources {
                diagnostics(
                    Diagnostic(
                        .note, file: job.output.escaped,
                        "made earlier; its sources are kept (an object is judged only by the run that uploads it)"))
            }
            return .upToDate(.init())
        }
        do {
            if let poster = try work.merger.remadePoster(forOutput: job.output.escaped) {
                try poster.file.publish(replace: poster.replace)
                diagnostics(Diagnostic(.note, file: job.output.escaped, poster.note))
            }
        } catch {
            diagnostics(
                Diagnostic(
                    .warning, file: job.output.escaped,
                    "its poster could not be made again: \(VMergeError.reason(of: error))"))
        }
        guard job.deleteSources, let plan = work.merger.quietPlan(probing: work.inputs) else {
            return .upToDate(.init())
        }
        return .upToDate(
            .init(
                plan: plan,
                consumption: consume(
                    plan, output: job.output.escaped, writtenMicros: nil, of: job,
                    sources: work.merger.context.sources as? RemoteInputs)))
    }

    /// 6. --delete-sources, once the output is published (`writtenMicros` long) or found done (nil):
    /// reads it back (an object: the very file uploaded, whose size its HEAD showed), makes the
    /// ledger and (unless the caller deletes) deletes what it consumed, objects of `sources` too.
    /// What is kept, and why, is a note; what is deleted says so.
    func consume(
        _ plan: MergePlan, output: String, uploadedThrough remote: RemoteOutput? = nil, writtenMicros: Int64?,
        of job: Job,
        sources: RemoteInputs?
    ) -> Consumption? {
        guard job.deleteSources else { return nil }
        let frame = plan.timeline.micros(ofFrame: 1)
        var ledger: SourceLedger
        switch heldMicros(output, staged: remote, writtenMicros: writtenMicros, frameMicros: frame, job: job) {
        case let .success(micros):
            ledger = SourceRemoval.ledger(plan, outputMicros: micros)
            ledger.recordVersions(sources)
            // Found done (written by an earlier run): only what its tag vouches for, file by file.
            // Its tag is only as good as whoever wrote the file: anyone who may write the folder can
            // compute a key, so an output this user does not own vouches for nothing.
            if writtenMicros == nil {
                var info = stat()
                if POSIX.lstat(FileName(output), &info) == 0, info.st_uid == geteuid() {
                    SourceRemoval.vouch(&ledger, plan, by: Probe.recordedJobTag(at: output), sources: sources)
                } else {
                    ledger.keepAll(because: "kept: its output was not written by this user (owner uid \(info.st_uid))")
                }
            }
            SourceRemoval.account(&ledger, plan, sources: sources)
        case let .failure(unreadable):
            diagnostics(
                Diagnostic(
                    .warning, file: unreadable.file,
                    "the sources are kept: the output does not read back whole: \(unreadable.problem.text)"))
            ledger = SourceRemoval.ledger(plan, outputMicros: 0)
            ledger.keepAll(because: "kept: the output does not read back whole")
            return Consumption(ledger: ledger)
        }
        guard deletesSources else { return Consumption(ledger: ledger) }
        for entry in ledger.kept { diagnostics(Diagnostic(.note, file: entry.path, entry.keptBecause ?? "kept")) }
        let removal = JobRunner.delete(ledger.consumed, naming: context.naming, objects: connector, saying: diagnostics)
        // One that could not be deleted is kept, with why, in the report too.
        for (path, reason) in removal.notDeleted { ledger.keep(path: path, because: reason) }
        return Consumption(ledger: ledger, deleted: removal.deleted)
    }

    /// How much of the timeline every file of the job holds, read back: the output and each
    /// rendition beside it (for a bucket, the very files uploaded, in `staged`'s folder), the
    /// shortest of them (--max-size ends each on its own); or the first that does not read back
    /// whole, and why.
    private func heldMicros(
        _ output: String, staged: RemoteOutput?, writtenMicros: Int64?, frameMicros: Int64, job: Job
    ) -> Result<Int64, UnreadableOutput> {
        var held = writtenMicros ?? Int64.max
        let renditions = job.options.renditions.map { $0.fileName(besideOutput: FileName(output)).escaped }
        for path in [output] + renditions {
            // The job's own video is held to the length written; each rendition to what it holds.
            let expected = path == output ? writtenMicros : nil
            switch SourceRemoval.readBack(
                staged?.staged(path) ?? path, expectedMicros: expected, frameMicros: frameMicros)
            {
            case let .success(micros): held = min(held, micros)
            case let .failure(problem): return .failure(UnreadableOutput(file: path, problem: problem))
            }
        }
        return .success(held)
    }

    /// Deletes consumed files (see `SourceRemoval.remove`), saying so for each; returns what was
    /// deleted, and what was not with why.
    package static func delete(
        _ entries: [SourceLedger.Entry], naming: OptionNaming = .commandLine, objects: RemoteConnector? = nil,
        saying diagnostics: DiagnosticSink
    ) -> (deleted: [String], notDeleted: [(path: String, reason: String)]) {
        let (deleted, notDeleted) = SourceRemoval.remove(entries, objects: objects)
        let why = "deleted (\(naming.word("delete-sources")): the output holds all of it)"
        for path in deleted { diagnostics(Diagnostic(.deleted, file: path, why)) }
        for (path, reason) in notDeleted { diagnostics(Diagnostic(.warning, file: path, reason)) }
        return (deleted, notDeleted)
    }
}

/// A file of the job that does not read back whole, and why (see `JobRunner.heldMicros`).
struct UnreadableOutput: Error {
    let file: String
    let problem: SourceRemoval.Problem
}
