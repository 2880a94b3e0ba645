import Foundation
import VMergeAV
import VMergeCore

/// Runs one job: resolve inputs, check the output, probe and plan, check free space, write.
/// Whatever happens, the outcome carries a complete report. Used by the command line, batch
/// and watch alike.
package struct JobRunner {
    package static let version = "0.1.0"

    package var onDiagnostic: (Diagnostic) -> Void
    package var onProgress: ((MergeProgress) -> Void)?
    /// Reads "-" for --inputs-from.
    package var readStandardInput: () throws -> String = { "" }
    /// Called once the inputs are known; a message refuses the job without a report.
    package var veto: (([String]) -> String?)?
    /// Record the job key in the output, and skip the job when the output already holds it.
    package var keyed = false
    /// What every job's run carries (its cancel token, the temporary's tag, tests' hooks); each
    /// job's own context adds its confinement, key and names (`context(of:key:names:)`).
    package var context = MergeContext()
    /// With --delete-sources: false leaves the deleting to the caller, which gets the ledger
    /// (a batch decides across its jobs, watch deletes from its claim).
    package var deletesSources = true
    /// The run's JSON report (merge's --report): published with the output as one set, before
    /// it, with what it may replace; the poster may not take its place.
    package var report: (path: String, replace: ReplacePolicy)?

    package init(onDiagnostic: @escaping (Diagnostic) -> Void, onProgress: ((MergeProgress) -> Void)? = nil) {
        self.onDiagnostic = onDiagnostic
        self.onProgress = onProgress
    }

    package func run(_ job: Job) -> JobOutcome {
        let clock = Stopwatch()
        let options = job.options
        var report = RunReport(
            status: .failed, exit: .failure, startedAt: Date(), wallSeconds: 0,
            versions: (JobRunner.version, FFmpegVersions.release, FFmpegVersions.libraries),
            options: options, minFree: job.minFree, settings: JobRunner.settings(of: job), outputPath: job.output, inputPaths: job.inputPaths)
        var outcome = JobOutcome(report: report)
        var probes: [InputProbe] = []
        var edits: [InputEdit] = []
        var key: String?
        do {
            let names = JobKey.names(
                inputs: job.namesInputs ?? job.inputs, root: job.keyRoot, options: options, salt: job.keySalt)
            if keyed && !job.dryRun && madeEarlierFromFilesGoneSince(job, names: names) {
                consumeWhatIsLeft(of: job, &outcome, &report, &probes)
                return skipped(outcome, report, clock)
            }
            let resolved = try resolveInputs(job)
            edits = resolved.map(\.edit)
            let inputs = resolved.map(\.path)
            report.inputPaths = inputs
            if let veto, let reason = veto(inputs) {
                outcome.vetoed = reason
                return outcome
            }
            key = keyed ? JobKey.make(inputs: resolved, root: job.keyRoot, options: options, salt: job.keySalt) : nil
            // Only this very job's output counts as done; any other file under the name (another
            // job's output, or one with other inputs or options) is refused below unless -y.
            if let key, !job.dryRun && OutputOnDisk.holds(job.output, key: key) {
                finishDone(job, options: options, key: key, resolved: resolved, &outcome, &report, &probes)
                return skipped(outcome, report, clock)
            }
            let merger = makeMerger(
                job, options: options, key: key, names: names, resolved: resolved, report: report, clock: clock)
            try checkAndSweep(job, merger: merger, options: options, inputs: inputs)
            let plan = try merger.makePlan(probing: resolved, into: &probes)
            outcome.plan = plan
            try FreeSpace.check(
                output: job.output, durationMicros: plan.durationMicros, options: options, required: job.minFree)
            if job.dryRun {
                (report.status, report.exit) = (.dryRun, .success)
            } else {
                let result = try merger.write(plan, to: job.output, clock: clock)
                CrashPoint.here("after-video")
                published(result, of: job, clock: clock, &outcome, &report)
            }
        } catch let error where JobRunner.isPublishedMeanwhile(error, output: job.output, key: key) {
            report.plan = outcome.plan
            return skipped(outcome, report, clock)
        } catch {
            JobRunner.record(error, of: job, &outcome, &report)
        }
        // What was probed before the run stopped, for the report.
        report.plan = outcome.plan ?? (probes.isEmpty ? nil : MergePlan(
            probes: probes, edits: edits, options: options, capabilities: context.capabilities))
        report.wallSeconds = clock.seconds
        outcome.report = report
        return outcome
    }

    /// A keyed job whose output was made earlier from these very names and options, and some of
    /// whose inputs are gone since (an earlier run's --delete-sources), is done: never redone from
    /// what is left, not even with -y (the output may be the only copy).
    private func madeEarlierFromFilesGoneSince(_ job: Job, names: String) -> Bool {
        guard OutputOnDisk.isOurs(job.output), MP4Layout.isWhole(job.output),
            let tag = Probe.recordedJobTag(at: job.output), tag.names == names, holdsFilesGoneSince(tag, job)
        else { return false }
        onDiagnostic(
            Diagnostic(
                .note, file: job.output,
                "made earlier from these inputs, some of which are gone since; it is the only copy of them, so "
                    + "it is not made again (move it away to make it from what is left)"))
        return true
    }

    /// With --delete-sources, of a job made earlier: each file the output vouches for goes, the
    /// rest stays, saying why.
    private func consumeWhatIsLeft(
        of job: Job, _ outcome: inout JobOutcome, _ report: inout RunReport, _ probes: inout [InputProbe]
    ) {
        guard job.deleteSources, let resolved = try? resolveInputs(job) else { return }
        var quiet = Merger(options: job.options, context: context(of: job, key: nil, names: nil), report: { _ in })
        quiet.options.skipInvalid = true
        if let plan = try? quiet.makePlan(probing: resolved, into: &probes) {
            outcome.plan = plan
            consumeSources(of: plan, output: job.output, writtenMicros: nil, into: &outcome, &report)
        }
    }

    /// The output already holds this very job: its poster is made again if it is missing, and with
    /// --delete-sources the sources a run that published it and then stopped (killed, power cut)
    /// left are judged by the same ledger, from the output as it reads back.
    private func finishDone(
        _ job: Job, options: MergeOptions, key: String, resolved: [JobInput], _ outcome: inout JobOutcome,
        _ report: inout RunReport, _ probes: inout [InputProbe]
    ) {
        let context = context(of: job, key: key, names: nil)
        let repairer = Merger(options: options, context: context, report: { _ in })
        do {
            if let done = try repairer.repairPoster(forOutput: job.output) {
                onDiagnostic(Diagnostic(.note, file: job.output, done))
            }
        } catch {
            onDiagnostic(
                Diagnostic(
                    .warning, file: job.output,
                    "its poster could not be made again: \(VMergeError.reason(of: error))"))
        }
        if job.deleteSources {
            let quiet = Merger(options: options, context: context, report: { _ in })
            if let plan = try? quiet.makePlan(probing: resolved, into: &probes) {
                outcome.plan = plan
                consumeSources(of: plan, output: job.output, writtenMicros: nil, into: &outcome, &report)
            }
        }
        report.plan = outcome.plan
    }

    /// The merger for this job: its context (key and names), the report published with the
    /// video, and the last check before publishing.
    private func makeMerger(
        _ job: Job, options: MergeOptions, key: String?, names: String, resolved: [JobInput], report: RunReport,
        clock: Stopwatch
    ) -> Merger {
        // The poster carries a key even where the video does not (a merge): a run of the same
        // job takes a poster its killed predecessor left as its own.
        let posterKey = key ?? JobKey.make(inputs: resolved, root: job.keyRoot, options: options, salt: job.keySalt)
        var merger = Merger(
            options: options, context: context(of: job, key: posterKey, names: names), report: onDiagnostic,
            progress: onProgress)
        if let target = self.report {
            let inputsNamed = resolved.map(\.path)
            merger.companions = { [report] summary, plan in
                var finished = report
                finished.inputPaths = inputsNamed
                (finished.status, finished.exit) = (.ok, .success)
                finished.output = summary
                finished.plan = plan
                finished.wallSeconds = clock.seconds
                let file = try TemporaryFile(beside: target.path)
                try file.write(Array((finished.json.text(pretty: true) + "\n").utf8))
                try file.sync()
                return [(file, target.replace)]
            }
        }
        if let names = job.alternativeOutputs { merger.alternativeOutput = { names.name($0) } }
        if let key {
            // Another run of this very job (a queue worker whose lease ran out while it was
            // stopped) may have published it meanwhile: never a second time, not even with -y.
            merger.beforePublish = {
                if OutputOnDisk.holds(job.output, key: key) { throw PublishedMeanwhile() }
            }
        }
        return merger
    }

    /// The runner's context with this job's: where it may read, its key (recorded in the output
    /// by a keyed run) and names.
    private func context(of job: Job, key: String?, names: String?) -> MergeContext {
        var context = self.context
        context.confinement = job.confinement
        context.outputFolder = job.outputFolder
        context.jobKey = key
        context.recordsJobKey = keyed
        context.jobNames = names
        return context
    }

    /// Not onto a video, nor onto the input list (-y or not); then the leftovers of a run of this
    /// output that was killed (-9, power cut) on this machine. The poster's and the report's too:
    /// a file they replaced, kept aside until the video was published (see PublishSet), is a
    /// leftover once its run is dead.
    private func checkAndSweep(_ job: Job, merger: Merger, options: MergeOptions, inputs: [String]) throws {
        // Another user's file under the name is not done whatever tag it carries, and is not
        // replaced without -y: said as such, not as a plain "output exists".
        if !options.overwrite, let owner = OutputOnDisk.foreignOwner(of: job.output) {
            throw VMergeError.outputNotOurs(file: job.output, owner: owner)
        }
        try merger.checkOutput(
            job.output, inputs: inputs + [job.inputsFrom].compactMap { $0 == "-" ? nil : $0 }, report: self.report?.path)
        for path in [job.output, options.posterPath(forOutput: job.output), self.report?.path].compactMap({ $0 }) {
            let (folder, name) = SafeFile.split(path)
            TemporaryFile.sweep(folder: folder, target: name)
        }
    }

    /// The output is published: the outcome says so, and with --delete-sources the sources it
    /// holds whole go, the published report then naming them.
    private func published(
        _ result: MergeResult, of job: Job, clock: Stopwatch, _ outcome: inout JobOutcome, _ report: inout RunReport
    ) {
        outcome.result = result
        outcome.plan = result.plan  // with what was measured on the way (--loudness)
        report.output = result.output
        (report.status, report.exit) = (.ok, .success)
        outcome.reportPublished = self.report != nil
        guard job.deleteSources else { return }
        consumeSources(
            of: result.plan, output: result.output.path, writtenMicros: result.output.durationMicros,
            into: &outcome, &report)
        guard let target = self.report, !report.deletedSources.isEmpty else { return }
        // The published report names what was deleted; if it cannot be rewritten, the set stays
        // as published and the run says so.
        report.plan = outcome.plan
        report.wallSeconds = clock.seconds
        do {
            try SafeFile.write(
                report.json.text(pretty: true) + "\n", to: target.path, replace: .ifStartsWith(RunReport.signatures))
        } catch {
            outcome.reportFailure = .io(
                file: target.path, message: "cannot write the report: \(VMergeError.reason(of: error))")
        }
    }

    /// What stopped the job, in the outcome and the report.
    private static func record(_ error: any Error, of job: Job, _ outcome: inout JobOutcome, _ report: inout RunReport) {
        let vmergeError = error as? VMergeError
        outcome.failure = vmergeError ?? .io(file: job.output, message: "\(error)")
        switch vmergeError {
        case .nothingToMerge?: (report.status, report.exit) = (.nothingToMerge, .nothingToMerge)
        case let .cancelled(signal)?: (report.status, report.exit) = (.cancelled, .cancelled(signal: signal))
        // Found once a folder or a list is expanded, but the command's mistake all the same.
        case .outputIsInput?: (report.status, report.exit) = (.failed, .usage)
        default: (report.status, report.exit) = (.failed, .failure)
        }
        report.error = (vmergeError?.file, vmergeError?.description ?? "\(error)")
        report.keptOutput = OutputOnDisk.kept(by: job)
    }

    /// Whether the output holds a file that is gone from the job's inputs since (deleted, or put
    /// in another file's place): by the files its tag records, or, for an older tag, by a named
    /// input that is missing.
    private func holdsFilesGoneSince(_ tag: JobTag, _ job: Job) -> Bool {
        guard let files = tag.files else { return job.inputs.contains { FileKind.at($0.path) == .missing } }
        let current = Set(((try? resolveInputs(job)) ?? []).compactMap { JobTag.who(ofFileAt: $0.path) })
        return files.contains { $0 != "-" && !current.contains(JobTag.who($0)) }
    }

    /// Found just before publishing: the output holds this job's result already.
    private struct PublishedMeanwhile: Error {}

    /// The job's output was published by another run of it while this one ran: found just before
    /// publishing, or when publishing found the name taken.
    private static func isPublishedMeanwhile(_ error: Error, output: String, key: String?) -> Bool {
        if error is PublishedMeanwhile { return true }
        guard let key, case .outputExists? = error as? VMergeError else { return false }
        return OutputOnDisk.holds(output, key: key)
    }

    /// The outcome of a job whose output already holds its result: nothing was done.
    private func skipped(_ outcome: JobOutcome, _ report: RunReport, _ clock: Stopwatch) -> JobOutcome {
        var outcome = outcome, report = report
        (report.status, report.exit) = (.skipped, .success)
        report.wallSeconds = clock.seconds
        outcome.report = report
        outcome.skipped = true
        return outcome
    }

    /// --delete-sources, once the output is published: reads it back, makes the ledger and (unless
    /// the caller deletes) deletes what it consumed. What is kept, and why, is a note; what is
    /// deleted says so.
    private func consumeSources(
        of plan: MergePlan, output: String, writtenMicros: Int64?, into outcome: inout JobOutcome,
        _ report: inout RunReport
    ) {
        let frame = plan.timeline.micros(ofFrame: 1)
        var ledger: SourceLedger
        switch SourceRemoval.readBack(output, expectedMicros: writtenMicros, frameMicros: frame) {
        case let .success(micros):
            ledger = SourceRemoval.ledger(plan, outputMicros: min(micros, writtenMicros ?? micros))
            // Found done (written by an earlier run): only what its tag vouches for, file by file.
            // Its tag is only as good as whoever wrote the file: anyone who may write the folder can
            // compute a key, so an output this user does not own vouches for nothing.
            if writtenMicros == nil {
                var info = stat()
                if POSIX.lstat(output, &info) == 0, info.st_uid == geteuid() {
                    SourceRemoval.vouch(&ledger, plan, by: Probe.recordedJobTag(at: output))
                } else {
                    ledger.keepAll(because: "kept: its output was not written by this user (owner uid \(info.st_uid))")
                }
            }
        case let .failure(problem):
            onDiagnostic(
                Diagnostic(.warning, file: output, "the sources are kept: the output does not read back whole: \(problem.text)"))
            ledger = SourceRemoval.ledger(plan, outputMicros: 0)
            ledger.keepAll(because: "kept: the output does not read back whole")
            outcome.ledger = ledger
            return
        }
        outcome.ledger = ledger
        guard deletesSources else { return }
        for entry in ledger.kept { onDiagnostic(Diagnostic(.note, file: entry.path, entry.keptBecause ?? "kept")) }
        report.deletedSources = JobRunner.delete(ledger.consumed, report: onDiagnostic)
    }

    /// Deletes consumed files (see `SourceRemoval.remove`), saying so for each; returns the paths.
    package static func delete(_ entries: [SourceLedger.Entry], report: (Diagnostic) -> Void) -> [String] {
        let (deleted, notDeleted) = SourceRemoval.remove(entries)
        for path in deleted { report(Diagnostic(.deleted, file: path, "deleted (--delete-sources: the output holds all of it)")) }
        for (path, reason) in notDeleted { report(Diagnostic(.warning, file: path, reason)) }
        return deleted
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

    /// Named inputs plus --inputs-from, folders expanded, in the order asked for; each with
    /// its edit.
    package func resolveInputs(_ job: Job) throws -> [JobInput] {
        var named = job.inputs
        if let list = job.inputsFrom {
            let text: String
            if list == "-" {
                text = try readStandardInput()
            } else {
                text = FileName.decode(try SafeFile.read(list, limit: InputList.maxListBytes))
            }
            let listed = InputList.parse(text)
            do throws(JobOptionError) {
                try JobFile.checkInputCount(named.count + listed.count)
            } catch {
                throw VMergeError.invalidInput(file: list, reason: error.description)
            }
            if listed.isEmpty && named.isEmpty {
                throw VMergeError.invalidInput(file: list, reason: "input list names no files")
            }
            named += listed.map { JobInput($0) }
        }
        return try InputList.expand(named, order: job.order, confinedTo: job.confinement)
    }
}
