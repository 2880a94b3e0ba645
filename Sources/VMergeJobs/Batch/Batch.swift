import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// One job's place in a batch and how it ended.
package struct BatchEntry: Sendable {
    package var index: Int
    package var job: Job
    package var outcome: JobOutcome?
}

/// What a batch tells a display while it runs, from its worker threads.
package enum BatchEvent: Sendable {
    /// A job's progress; `job` is its position in the list.
    case progress(job: Int, MergeProgress)
    /// A job ended, in the word its report gives.
    case finished(job: Int, RunReport.Status)
}

/// `vmerge batch`: many independent jobs, N at a time. A failing job never stops the others; a
/// job whose output already holds its result (same job key) is skipped, so re-running a batch
/// after a crash does only what is missing; `shard` spreads one batch over machines.
package final class Batch: @unchecked Sendable {
    package let jobs: [Job]
    package let parallel: Int
    /// (index, count): only jobs whose position modulo `count` is `index`.
    package let shard: (index: Int, count: Int)?
    /// Tests' switches, for every job (see the CLI's TestHooks).
    package var hooks = MergeHooks()
    /// --notify: each job's events go to its targets and to the job's own `notify`; after the
    /// last job, what is owed is waited for up to `notifyWait` seconds.
    package var notifier: Notifier?
    package var notifyWait = 30.0
    /// The signal that stopped the jobs (0: none), as it was when the last job ended.
    package private(set) var jobsStoppedBy: Int32 = 0
    /// Each running job's progress and each job's end, for a display.
    package var onEvent: (@Sendable (BatchEvent) -> Void)?
    /// One line per job event: started, done, skipped, failed.
    private let log: DiagnosticSink
    private let lock = NSLock()
    private var next = 0
    private var entries: [BatchEntry] = []
    /// --delete-sources across the jobs (see `BatchDeletion`).
    private var deletion: BatchDeletion?

    package init(
        jobs: [Job], parallel: Int, shard: (index: Int, count: Int)?, diagnostics: DiagnosticSink
    ) {
        self.jobs = jobs
        self.parallel = max(1, parallel)
        self.shard = shard
        self.log = diagnostics
    }

    /// A sensible number of jobs at once: one per core, at most 8. A job alone leaves cores idle
    /// (clip starts, x264's serial parts): on 2 cores, 2 jobs at once finished 8 small jobs 10%
    /// sooner and 4 jobs of 1080p clips 16% sooner than 1 (see BENCH.md); more than 8 mostly adds
    /// memory.
    package static var defaultParallel: Int { max(1, min(8, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Each subfolder of `folder` (not hidden, natural order) is a job: its video files, merged
    /// into `out/<subfolder>.mp4`.
    /// The output folder itself is never a job, when it sits inside `folder`.
    package static func jobs(fromFolder folder: String, out: String, settings: JobSettings) throws -> [Job] {
        var outInfo = stat()
        let outExists = POSIX.stat(FileName(out), &outInfo) == 0
        let listed = FileDescriptor(POSIX.open(FileName(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard listed.raw >= 0, let names = SafeFile.names(in: listed) else {
            throw VMergeError.io(file: folder, message: "cannot list this folder")
        }
        var subfolders = names.filter { name in
            var info = stat()
            if outExists && POSIX.stat(FileName(FileName.joined(folder, name)), &info) == 0
                && info.st_dev == outInfo.st_dev
                && info.st_ino == outInfo.st_ino
            {
                return false
            }
            return !name.hasPrefix(".")
                && POSIX.stat(FileName(FileName.joined(folder, name)), &info) == 0
                && FileKind(mode: info.st_mode) == .directory
        }
        subfolders = InputList.naturallySorted(subfolders) { $0 }
        // A newline in a job's name would split its log lines and its output's name.
        if let bad = subfolders.first(where: { (try? JobFile.checkedName($0, field: "name")) == nil }) {
            throw VMergeError.invalidInput(
                file: folder,
                reason: "holds \(VisibleText.of(bad)), whose name has a control character; rename it")
        }
        return subfolders.map { name in
            Job(
                name: name, inputs: [JobInput(FileName.joined(folder, name))],
                output: FileName(out).appending(FileName(name + ".mp4")), settings: settings)
        }
    }

    /// The positions of the jobs this shard runs.
    package var selected: [Int] {
        jobs.indices.filter { shard == nil || $0 % shard!.count == shard!.index }
    }

    /// Runs the selected jobs; returns them with their outcomes, in job order.
    package func run() -> [BatchEntry] {
        let chosen = selected
        let folders = Set(
            chosen.map { jobs[$0].output.folder.escaped }.map { $0.isEmpty ? "." : $0 })
        let swept = folders.reduce(0) { $0 + TemporaryFile.sweep(folder: $1) }
        if swept > 0 { log("removed \(swept) temporary file\(swept == 1 ? "" : "s") left by a run that was killed") }
        entries = chosen.map { BatchEntry(index: $0, job: jobs[$0]) }
        if jobs.contains(where: \.deleteSources) { deletion = BatchDeletion(jobs: jobs, shard: chosen, hooks: hooks) }
        let workers = min(parallel, max(1, chosen.count))
        let group = DispatchGroup()
        for _ in 0..<workers {
            group.enter()
            let thread = Thread { [self] in
                work()
                group.leave()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        group.wait()
        if let deletion { apply(deletion.settle(log: jobLog), finishing: nil) }
        // A signal during the wait for receivers stops the wait, not the batch: its jobs are over.
        jobsStoppedBy = VMergeProcess.pendingSignal
        if let notifier {
            // Each job's report says what became of its events; none changes a result.
            let sent = notifier.finish(within: notifyWait, saying: log)
            for index in entries.indices {
                let job = entries[index].index
                entries[index].outcome?.record(sent.filter { $0.job == job }.map(\.record))
            }
        }
        return entries
    }

    private func work() {
        while true {
            lock.lock()
            let slot = next
            next += 1
            let entry = slot < entries.count ? entries[slot] : nil
            lock.unlock()
            guard let entry, VMergeProcess.pendingSignal == 0 else { return }
            // Every message names its job: with -j 2, two jobs' warnings interleave.
            var runner = JobRunner(
                .batch, context: MergeContext(hooks: hooks), diagnostics: jobLog(entry.index),
                onProgress: onEvent.map { onEvent in { onEvent(.progress(job: entry.index, $0)) } })
            if let notifier {
                // Checked when the list was read: a job's own receivers are https URLs.
                let own = entry.job.notify.compactMap {
                    try? NotifyTarget.parse($0, access: entry.job.remoteAccess).get()
                }
                runner.events = JobEvents(metadata: entry.job.metadata) {
                    notifier.send($0, also: own, job: entry.index)
                }
            }
            let ran = runner.run(entry.job)
            onEvent?(.finished(job: entry.index, ran.end.status))
            lock.lock()
            entries[slot].outcome = ran
            if entry.job.deleteSources, let deletion {
                let failed = ran.end.isDone ? nil : ran.end.status.rawValue
                apply(
                    deletion.finish(entry.index, ledger: ran.ledger, failed: failed, log: jobLog),
                    finishing: entry.index)
            }
            let outcome = entries[slot].outcome ?? ran
            lock.unlock()
            // A job that did not succeed is a problem: said with -q too.
            let line = Batch.describe(entry, outcome, of: jobs.count)
            if outcome.end.isDone { log(line) } else { log.error(line) }
        }
    }

    /// Records what --delete-sources decided in the outcomes (called under the lock): the
    /// deletions in the finishing job's, each kept source in every job that merged it whole.
    private func apply(_ decisions: BatchDeletion.Decisions, finishing job: Int?) {
        for index in entries.indices {
            let number = entries[index].index
            if number == job { entries[index].outcome?.recordDeleted(decisions.deleted) }
            for kept in decisions.kept where kept.job == number {
                entries[index].outcome?.recordKept(key: kept.key, because: kept.reason)
            }
        }
    }

    /// Job `index`'s scope of the log: its every message starts with "batch: [2/5] <name>", since
    /// with -j 2 two jobs' messages interleave.
    private func jobLog(_ index: Int) -> DiagnosticSink {
        log.tagged("batch: [\(index + 1)/\(jobs.count)] \(jobs[index].name)")
    }

    static func describe(_ entry: BatchEntry, _ outcome: JobOutcome, of total: Int) -> String {
        "[\(entry.index + 1)/\(total)] \(entry.job.name): " + outcome.summary(output: entry.job.output.escaped)
    }

    /// The batch report: every job's outcome, its own report included.
    package static func report(
        _ entries: [BatchEntry], total: Int, shard: (index: Int, count: Int)?, wallSeconds: Double, exit: Exit,
        status: String, error: (file: String?, message: String)? = nil
    ) -> JSON {
        let count = { (wanted: Set<String>) in
            entries.filter { wanted.contains($0.outcome?.end.status.rawValue ?? "not-run") }.count
        }
        return .object([
            ("schema_version", .int(1)),
            ("kind", .string("batch")),
            ("status", .string(status)),
            ("exit_code", .int(Int64(exit.status))),
            // What stopped the batch before any job (a job list that cannot be used); null otherwise.
            ("error", error.map { .object([("file", .string($0.file)), ("message", .string($0.message))]) } ?? .null),
            ("jobs_total", .int(total)),
            ("shard", shard.map { .string("\($0.index)/\($0.count)") } ?? .null),
            ("succeeded", .int(count(["ok"]))),
            ("skipped", .int(count(["skipped"]))),
            ("failed", .int(count(["failed", "nothing-to-merge", "cancelled"]))),
            ("not_run", .int(count(["not-run"]))),
            ("wall_seconds", .number((wallSeconds * 1000).rounded() / 1000)),
            (
                "jobs",
                .array(
                    entries.map { entry in
                        .object([
                            ("index", .int(entry.index)),
                            ("name", .string(entry.job.name)),
                            ("output", .string(entry.job.output.escaped)),
                            ("status", .string(entry.outcome?.end.status.rawValue ?? "not-run")),
                            ("exit_code", entry.outcome.map { JSON.int(Int64($0.exit.status)) } ?? .null),
                            // Whether running the job again would fail it the same (--bad-jobs-ok).
                            ("failed_for_good", .bool(entry.outcome?.end.failure?.forGood ?? false)),
                            ("error", .string(entry.outcome?.report.error?.message)),
                            ("report", entry.outcome?.report.json ?? .null),
                        ])
                    })
            ),
        ])
    }
}
