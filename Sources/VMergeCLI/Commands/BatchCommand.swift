import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// `vmerge batch`: reads the job list (or folder), runs it, prints one line per job and a
/// summary, writes the batch report.
struct BatchCommand: CommandSpec {
    static let configuration = CommandConfiguration(
        name: "batch", abstract: "Run many merges from a job list or folder",
        overview: "Run many merges: one per line of a JSONL job list, or one per subfolder of a folder. Jobs "
            + "already done (the output records the same inputs and options) are skipped, so a batch re-run "
            + "after a crash does only what is missing. A failing job does not stop the others.",
        usage: "vmerge batch <jobs.jsonl | folder> [--out <dir>] [options]",
        examples: [
            Help.Example(
                command: "vmerge batch jobs.jsonl -j 2 --report batch.json",
                note: #"a line of jobs.jsonl: {"inputs":["a.mov","b.mov"],"output":"ab.mp4"}"#),
            Help.Example(command: "vmerge batch recordings/ --out merged/ --shard 0/3"),
        ],
        exits: .batch,
        positionals: .path(
            foldersOnly: false, label: "job list or folder", phrase: "a job list (any file) or a folder"),
        mainHelpExample: "vmerge batch jobs.jsonl --report batch.json")

    static let out = CommandOption.text(
        "out", value: "dir",
        help: "Output folder: where a folder batch writes <subfolder>.mp4, and what relative outputs in a "
            + "job list are resolved against (default: the job list's folder).", kind: .directory,
        empty: "batch: '--out' needs a folder name")
    static let shard = CommandOption.text(
        "shard", value: "i/n",
        help: "Run only the jobs whose position modulo n is i (0-based), to spread one batch over "
            + "machines with no coordination."
    ).map { text, spec -> Shard? in
        guard let text else { return nil }
        let parts = text.split(separator: "/").map { Int($0) }
        guard parts.count == 2, let i = parts[0], let n = parts[1], n >= 1, (0..<n).contains(i) else {
            throw UsageError.invalidValue(text, for: spec.long, expected: "i/n with 0 <= i < n, such as 0/3")
        }
        return Shard(index: i, count: n)
    }
    static let report = SharedOptions.report(
        help:
            "Write a JSON report of every job's outcome to this file ('-' = stdout; or an object, s3://bucket/key.json)."
    )
    static let overwrite = SharedOptions.overwrite(
        help: "Replace existing regular files under output names: files vmerge did not write, other "
            + "jobs' outputs, and this job's from changed inputs or options. (Outputs of an earlier run "
            + "of the same job are skipped either way; links, FIFOs and devices are never replaced.)")
    static let badJobsOK = CommandOption.flag(
        "bad-jobs-ok",
        help: "A job that fails for a reason of its own (an input that cannot be used, nothing to merge, an "
            + "output name refused or taken: what a retry meets again) is reported but does not make the "
            + "exit status 1; an output-side error (a full disk, a write error) or a job not run still "
            + "does. For schedulers that retry a failed run (a Kubernetes Job).")

    static let table: [OptionSpec] =
        [
            out.spec, SharedOptions.jobs.spec, shard.spec, report.spec, overwrite.spec, badJobsOK.spec,
            SharedOptions.deleteSources.spec, SharedOptions.allowRemote.spec,
        ] + NotifyOptions.specs + ProgressOptions.specs + JobOptions.specs + VerbosityOptions.specs + [
            SharedOptions.help.spec
        ]

    /// A JSONL job list or a folder of job folders.
    var source: String
    var out: String?
    var parallel: Int?
    var shard: Shard?
    var reportTo: Location?
    var deleteSources = false
    /// --allow-remote; every listed job must keep to it.
    var remoteAccess = RemoteAccess(listingRequired: true)
    /// Jobs failed for good do not fail the batch (--bad-jobs-ok).
    var badJobsOK = false
    /// The batch-wide settings; a job's own options are read over them.
    var settings: JobSettings
    var verbosity: Verbosity
    var progress: ProgressMode = .auto
    var progressFD: Int32?
    var messageForm: MessageForm { MessageForm(progress: progress, fd: progressFD) }
    /// --notify and its secret: every job's events (and those a job's own `notify` names).
    var notify: NotifyOptions.Settings?
    /// Test hooks (TestHooks): applied to every job of the batch.
    var hooks = MergeHooks()

    struct Shard: Equatable {
        var index: Int
        var count: Int
    }

    init(_ parsed: ParsedArguments) throws {
        source = try parsed.single("job list or folder", of: BatchCommand.name)
        settings = try JobOptions.settings(parsed, overwrite: try BatchCommand.overwrite.read(parsed))
        verbosity = try VerbosityOptions.read(parsed)
        reportTo = try BatchCommand.report.read(parsed)
        deleteSources = try SharedOptions.deleteSources.read(parsed)
        remoteAccess = try SharedOptions.remoteAccess(parsed, listingRequired: true)
        badJobsOK = try BatchCommand.badJobsOK.read(parsed)
        (progress, progressFD) = try ProgressOptions.read(parsed)
        try ProgressOptions.checkStdout(report: reportTo, fd: progressFD)
        out = try BatchCommand.out.read(parsed)
        // The prefixes the operator typed (the batch's source, --out) are theirs: its jobs read
        // and write under them without listing them again; what a job list names still needs
        // --allow-remote.
        for typed in [source, out.map { $0.hasSuffix("/") ? $0 : $0 + "/" }].compactMap({ $0 }) {
            if let prefix = RemoteName(typed), prefix.isPrefix { remoteAccess.allow(prefix) }
        }
        // Made when missing; something else under the name is the command's mistake.
        if let out, case let kind = FileKind.following(FileName(out)), kind != .missing, kind != .directory {
            throw UsageError.naming("\(VisibleText.of(out)): '--out' is \(kind.phrase), not a folder")
        }
        parallel = try SharedOptions.jobs.read(parsed)
        shard = try BatchCommand.shard.read(parsed)
        notify = try NotifyOptions.read(parsed, access: remoteAccess, secretAlone: true)
    }

    func run(console: Console, printer: MessagePrinter) throws -> Exit {
        if let fd = progressFD, fcntl(fd, F_GETFD) == -1 {
            throw UsageError.naming("--progress-fd \(fd): no such open file descriptor")
        }
        let clock = Stopwatch()
        let jobs: [Job]
        do {
            // A job list is written by someone else as often as not: its URLs only under the
            // operator's prefixes.
            jobs = try makeJobs(printer: printer).map {
                $0.with(deleteSources: deleteSources, remoteAccess: remoteAccess)
            }
        } catch let error where !(error is UsageError) {
            // A list that cannot be run still gets its report: a pipeline reads why.
            reportUnusableList(error, console: console, seconds: clock.seconds)
            throw error
        }
        let reportFile = try prepareReport(for: jobs)
        let batch = Batch(
            jobs: jobs, parallel: parallel ?? Batch.defaultParallel,
            shard: shard.map { ($0.index, $0.count) },
            diagnostics: printer.sink("batch"))
        batch.hooks = hooks
        (batch.notifier, batch.notifyWait) = (notify?.notifier(), notify?.wait ?? 0)
        let display = BatchProgress.make(
            mode: progress, fd: progressFD, verbosity: verbosity, console: console, printer: printer, jobs: jobs,
            selected: batch.selected)
        if let display { batch.onEvent = { display.handle($0) } }
        let entries = batch.run()
        display?.end()
        printer.sayDeletedCount()
        let signal = batch.jobsStoppedBy
        var (line, allDone, counts) = summary(of: entries, seconds: clock.seconds)
        // With --bad-jobs-ok, what is left for a retry decides: a job failed for good is reported only.
        let retryWanted = entries.contains { entry in
            entry.outcome.map { $0.exit != .success && !($0.end.failure?.forGood ?? false) } ?? true
        }
        let accepted = allDone || (badJobsOK && !retryWanted)
        if !allDone && accepted {
            line += "; every failure is for good, a retry would fail the same: exit 0 (--bad-jobs-ok)"
        }
        let exit: Exit = signal != 0 ? .cancelled(signal: signal) : accepted ? .success : .failure
        printer.summary(
            allDone ? .info : accepted ? .warning : .error, line, fields: counts + [("exit", .int(Int(exit.status)))])
        guard let reportTo else { return exit }
        let json = Batch.report(
            entries, total: jobs.count, shard: shard.map { ($0.index, $0.count) }, wallSeconds: clock.seconds,
            exit: exit, status: signal != 0 ? "cancelled" : allDone ? "ok" : "failed")
        if reportTo == .standardOutput {
            console.output(json.text(pretty: true) + "\n")
        } else if let reportFile {
            do {
                try reportFile.publish(json)
            } catch {
                throw CommandFailure(exit.failingLate, VMergeError.message(of: error))
            }
        }
        return exit
    }

    /// The report of a batch whose job list cannot be read or used: no job, the reason, exit 1.
    /// Best effort: a report that cannot be written either leaves the reason to stderr alone.
    private func reportUnusableList(_ error: any Error, console: Console, seconds: Double) {
        guard let reportTo else { return }
        let json = Batch.report(
            [], total: 0, shard: shard.map { ($0.index, $0.count) }, wallSeconds: seconds, exit: .failure,
            status: "failed",
            error: ((error as? VMergeError)?.file, VMergeError.message(of: error)))
        guard let path = reportTo.writtenName else { return console.output(json.text(pretty: true) + "\n") }
        guard
            let file = try? ReportFile(
                path, against: [(FileName(source), "the job list")], overwrite: settings.merge.overwrite)
        else { return }
        try? file.publish(json)
    }

    /// The report may not land on the job list, an input or an output: checked, and its temporary
    /// file made, before any job runs. Folders count as the videos they hold: -y must not let the
    /// report replace one of them.
    private func prepareReport(for jobs: [Job]) throws -> ReportFile? {
        guard let path = reportTo?.writtenName else { return nil }
        let named: [(path: FileName, role: String)] =
            [(FileName(source), "the job list")]
            + jobs.flatMap { job -> [(path: FileName, role: String)] in
                // By paths alone: a folder with a trim (which the job refuses) still counts as its videos.
                let videos = (try? InputList.expand(job.inputs.map { JobInput($0.path) }, order: .none)) ?? job.inputs
                return [(FileName(job.output.escaped), "an output video")]
                    + (job.options.posterPath(forOutput: job.output.escaped).map { [(FileName($0), "a job's poster")] }
                        ?? [])
                    + videos.map { ($0.path, "an input video") }
            }
        return try ReportFile(path, against: named, overwrite: settings.merge.overwrite)
    }

    /// "batch: 3 done, 1 skipped, 0 failed of 4 jobs in 12.5 s", whether every job is done, and
    /// the counts for a summary event.
    private func summary(of entries: [BatchEntry], seconds: Double) -> (String, Bool, [(String, JSON)]) {
        let failed = entries.filter { entry in entry.outcome.map { !$0.end.isDone } ?? false }
        let notRun = entries.filter { $0.outcome == nil }.count
        let done = entries.filter { $0.outcome?.end.status == .ok }.count
        let skipped = entries.filter { $0.outcome?.end.status == .skipped }.count
        var line = "batch: \(done) done, \(skipped) skipped, \(failed.count) failed"
        // Failed as the report counts them, with the report's words for the ones that did not fail as such.
        let other = [RunReport.Status.nothingToMerge, .cancelled].compactMap { status -> String? in
            let count = failed.filter { $0.outcome?.end.status == status }.count
            return count > 0 ? "\(count) \(status.rawValue)" : nil
        }
        if !other.isEmpty { line += " (\(other.joined(separator: ", ")))" }
        if notRun > 0 { line += ", \(notRun) not run" }
        line +=
            shard.map { " of \(entries.count) jobs in shard \($0.index)/\($0.count)" } ?? " of \(entries.count) jobs"
        line += String(format: " in %.1f s", seconds)
        let counts: [(String, JSON)] = [
            ("jobs", .int(entries.count)), ("done", .int(done)), ("skipped", .int(skipped)),
            ("failed", .int(failed.count)), ("not_run", .int(notRun)),
            ("seconds", .number((seconds * 1000).rounded() / 1000)),
        ]
        return (line, failed.isEmpty && notRun == 0, counts)
    }

    /// The jobs of a folder (one per subfolder) or of a JSONL list, with their own options read
    /// over the batch-wide ones. Any malformed line stops the batch before it starts.
    private func makeJobs(printer: MessagePrinter) throws -> [Job] {
        let folder = try BatchSource.isFolder(source)
        if folder, out == nil {
            throw UsageError(description: "batch: a folder of jobs needs '--out <dir>' for the outputs")
        }
        let jobs = try BatchSource.jobs(from: source, out: out, settings: settings)
        try BatchSource.checkEvents(jobs, source: source, signed: notify != nil)
        guard let out else { return jobs }
        // Before --out is made: a refused command leaves no new folder behind.
        if folder {
            try SharedOptions.checkLooseClips(
                in: source, jobs: jobs.count, out: out, command: "batch", printer: printer)
        }
        try BatchSource.makeOutputFolder(out)
        return jobs
    }

}

extension SharedOptions {
    /// Clips beside a folder's subfolders are in no job: a folder of loose clips and no subfolder
    /// is one merge, not a batch (the command's mistake, said with the merge that was meant), and
    /// loose clips beside subfolders are warned about. For `batch` and `queue add` alike.
    static func checkLooseClips(in source: String, jobs: Int, out: String, command: String, printer: MessagePrinter)
        throws
    {
        // A bucket's prefix is listed by its own jobs' lookups, not as a local folder.
        if RemoteName.looksRemote(source) { return }
        let loose = (try? InputList.expand([JobInput(source)], order: .none).count) ?? 0
        guard loose > 0 else { return }
        let clips = loose == 1 ? "1 clip" : "\(loose) clips"
        if jobs == 0 {
            let name = FileName(resolvedPath(source) ?? absolutePath(source)).lastComponent.escaped
            let merge = ShellWord.command([
                source, "-o", FileName.joined(out, name.isEmpty ? "merged.mp4" : name + ".mp4"),
            ])
            // A merge makes no folder for -o: the command says to make it when it is not there.
            let mkdir = FileKind.following(FileName(out)) == .directory ? "" : "mkdir -p \(ShellWord.quoted(out)) && "
            throw UsageError.naming(
                "\(command): \(VisibleText.of(source)) holds \(clips) and no subfolder; \(command) makes one job "
                    + "per subfolder. To merge these clips into one video: \(mkdir)vmerge \(merge)")
        }
        printer.print(
            .warning, file: source,
            "\(clips) beside its subfolders \(loose == 1 ? "is" : "are") in no job (\(command) merges each subfolder; "
                + "move \(loose == 1 ? "it" : "them") into one)")
    }
}

extension Job {
    /// The job with the batch's --delete-sources and --allow-remote.
    fileprivate func with(deleteSources: Bool, remoteAccess: RemoteAccess) -> Job {
        var job = self
        job.deleteSources = deleteSources
        job.remoteAccess = remoteAccess
        return job
    }
}
