import Foundation
import VMergeAV
import VMergeCore

/// One job's place in a batch and how it ended.
public struct BatchEntry: Sendable {
    public var index: Int
    public var job: Job
    public var outcome: JobOutcome?
}

/// `vmerge batch`: many independent jobs, N at a time. A failing job never stops the others; a
/// job whose output already holds its result (same job key) is skipped, so re-running a batch
/// after a crash does only what is missing; `shard` spreads one batch over machines.
public final class Batch: @unchecked Sendable {
    public let jobs: [Job]
    public let parallel: Int
    /// (index, count): only jobs whose position modulo `count` is `index`.
    public let shard: (index: Int, count: Int)?
    /// One line per job event: started, done, skipped, failed.
    private let log: @Sendable (String) -> Void
    private let onDiagnostic: @Sendable (Diagnostic) -> Void
    private let lock = NSLock()
    private var next = 0
    private var entries: [BatchEntry] = []

    public init(
        jobs: [Job], parallel: Int, shard: (index: Int, count: Int)?, log: @escaping @Sendable (String) -> Void,
        onDiagnostic: @escaping @Sendable (Diagnostic) -> Void
    ) {
        self.jobs = jobs
        self.parallel = max(1, parallel)
        self.shard = shard
        self.log = log
        self.onDiagnostic = onDiagnostic
    }

    /// A sensible number of jobs at once: one per core, at most 8. A job alone leaves cores idle
    /// (clip starts, x264's serial parts): on 2 cores, 2 jobs at once finished 8 small jobs 10%
    /// sooner and 4 jobs of 1080p clips 16% sooner than 1 (see README); more than 8 mostly adds
    /// memory.
    public static var defaultParallel: Int { max(1, min(8, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Each subfolder of `folder` (not hidden, natural order) is a job: its video files, merged
    /// into `out/<subfolder>.mp4`.
    /// The output folder itself is never a job, when it sits inside `folder`.
    public static func jobs(fromFolder folder: String, out: String, settings: JobSettings) throws -> [Job] {
        var outInfo = stat()
        let outExists = stat(out, &outInfo) == 0
        let listed = FileDescriptor(open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard listed.raw >= 0, let (names, undecodable) = SafeFile.listing(of: listed) else {
            throw VMergeError.io(file: folder, message: "cannot list this folder")
        }
        // A job folder no String can name would be left out silently.
        if let raw = undecodable.first(where: { $0.first != UInt8(ascii: ".") }) {
            throw VMergeError.invalidInput(
                file: folder, reason: "holds \(SafeFile.printable(raw)), whose name is not valid UTF-8; rename it")
        }
        var subfolders = names.filter { name in
            var isFolder: ObjCBool = false
            var info = stat()
            if outExists && stat(folder + "/" + name, &info) == 0 && info.st_dev == outInfo.st_dev
                && info.st_ino == outInfo.st_ino
            {
                return false
            }
            return !name.hasPrefix(".")
                && FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder)
                && isFolder.boolValue
        }
        subfolders = InputList.naturallySorted(subfolders) { $0 }
        // A newline in a job's name would split its log lines and its output's name.
        if let bad = subfolders.first(where: { (try? JobFile.checkedName($0, field: "name")) == nil }) {
            throw VMergeError.invalidInput(
                file: folder,
                reason: "holds \(SafeFile.printable(Array(bad.utf8))), whose name has a control character; rename it")
        }
        return subfolders.map { name in
            Job(name: name, inputs: [folder + "/" + name], output: out + "/" + name + ".mp4", settings: settings)
        }
    }

    /// The positions of the jobs this shard runs.
    public var selected: [Int] {
        jobs.indices.filter { shard == nil || $0 % shard!.count == shard!.index }
    }

    /// Runs the selected jobs; returns them with their outcomes, in job order.
    public func run() -> [BatchEntry] {
        let chosen = selected
        let folders = Set(
            chosen.map { (jobs[$0].output as NSString).deletingLastPathComponent }.map { $0.isEmpty ? "." : $0 })
        let swept = folders.reduce(0) { $0 + TemporaryFile.sweep(folder: $1) }
        if swept > 0 { log("removed \(swept) temporary file\(swept == 1 ? "" : "s") left by a run that was killed") }
        entries = chosen.map { BatchEntry(index: $0, job: jobs[$0]) }
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
            var runner = JobRunner(onDiagnostic: onDiagnostic)
            runner.keyed = true
            let outcome = runner.run(entry.job)
            lock.lock()
            entries[slot].outcome = outcome
            lock.unlock()
            log(Batch.describe(entry, outcome, of: jobs.count))
        }
    }

    static func describe(_ entry: BatchEntry, _ outcome: JobOutcome, of total: Int) -> String {
        "[\(entry.index + 1)/\(total)] \(entry.job.name): " + outcome.summary(output: entry.job.output)
    }

    /// The batch report: every job's outcome, its own report included.
    public static func report(
        _ entries: [BatchEntry], total: Int, shard: (index: Int, count: Int)?, wallSeconds: Double, exit: Exit,
        status: String
    ) -> JSON {
        let count = { (wanted: Set<String>) in
            entries.filter { wanted.contains($0.outcome?.report.status.rawValue ?? "not-run") }.count
        }
        return .object([
            ("schema_version", .int(1)),
            ("kind", .string("batch")),
            ("status", .string(status)),
            ("exit_code", .int(Int64(exit.status))),
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
                            ("output", .string(entry.job.output)),
                            ("status", .string(entry.outcome?.report.status.rawValue ?? "not-run")),
                            ("exit_code", entry.outcome.map { JSON.int(Int64($0.exit.status)) } ?? .null),
                            ("error", .string(entry.outcome?.report.error?.message)),
                            ("report", entry.outcome?.report.json ?? .null),
                        ])
                    })
            ),
        ])
    }
}
