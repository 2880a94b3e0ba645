import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// --delete-sources across a batch's jobs: one rule for files and objects. A source goes only once
/// every job of the run that names it has finished and merged all of it (the same version, for an
/// object), deleted by the last of them; one job that keeps it, fails, or runs in another shard
/// keeps it for all, and every job that merged it says why in its report. Who names a source is
/// known three ways: the names each job resolved to before the run (files by device and inode,
/// objects by name), the sources each finished job's ledger read, and, for objects, the prefixes
/// each job names (`s3://b/trip/`), since a prefix may list an object put there after the run
/// began. Not thread-safe: the batch calls it under its lock.
final class BatchDeletion {
    /// What finishing a job decided: the sources it deleted, and each job's sources kept (by
    /// ledger key) with why.
    struct Decisions {
        var deleted: [String] = []
        var kept: [(job: Int, key: String, reason: String)] = []
    }

    private let jobs: [Job]
    private let shard: Set<Int>
    private let objects: RemoteConnector
    /// Before the run: each job's sources by key, the prefixes it names, and the jobs whose
    /// names could not be resolved (an input list not read) that may name any object.
    private let named: [Int: Set<String>]
    private let prefixes: [Int: [String]]
    private let namesAnyObject: Set<Int>
    /// Each source's verdict from every finished job whose ledger read it (nil: consumed), the
    /// version of an object each read, and the entry to delete it by (its latest probe).
    private var verdicts: [String: [Int: String?]] = [:]
    private var versions: [String: [Int: ObjectVersion?]] = [:]
    private var latest: [String: SourceLedger.Entry] = [:]
    private var decided: Set<String> = []
    /// How each finished job ended: nil when it succeeded.
    private var endings: [Int: String?] = [:]

    init(jobs: [Job], shard: [Int], hooks: MergeHooks) {
        self.jobs = jobs
        self.shard = Set(shard)
        let resolver = JobRunner(.batch, context: MergeContext(hooks: hooks), diagnostics: .silent)
        objects = resolver.connector
        var named: [Int: Set<String>] = [:]
        var prefixes: [Int: [String]] = [:]
        var anyObject: Set<Int> = []
        for (index, job) in jobs.enumerated() {
            let resolved = try? resolver.resolveInputs(job)
            if resolved == nil && job.inputsFrom != nil { anyObject.insert(index) }
            named[index] = Set((resolved ?? job.inputs).compactMap { BatchDeletion.key(of: $0.path) })
            prefixes[index] = job.inputs.compactMap {
                guard case let .s3(address)? = RemoteName($0.path.escaped), address.isPrefix else { return nil }
                return address.description
            }
        }
        (self.named, self.prefixes, namesAnyObject) = (named, prefixes, anyObject)
    }

    /// A source's key as a ledger gives it: a file by device and inode (nil: not readable yet; the
    /// job will fail on it and keep it), an object by its name.
    private static func key(of path: FileName) -> String? {
        if RemoteName.looksRemote(path.escaped) { return SourceLedger.key(path: path.escaped, id: nil) }
        var info = stat()
        return POSIX.stat(path, &info) == 0 ? SourceLedger.key(path: path.escaped, id: FileID(info)) : nil
    }

    /// Job `job` ended (`failed`: how, when it did not succeed) with `ledger`: records what it
    /// read, then decides every source whose jobs have all finished, deleting what they all
    /// merged whole. Said through `log(job)`.
    func finish(_ job: Int, ledger: SourceLedger?, failed: String?, log: (Int) -> DiagnosticSink) -> Decisions {
        endings[job] = .some(failed)
        for entry in ledger?.entries ?? [] {
            verdicts[entry.key, default: [:]][job] = .some(entry.keptBecause)
            if RemoteName.looksRemote(entry.path) { versions[entry.key, default: [:]][job] = .some(entry.object) }
            latest[entry.key] = entry
        }
        var decisions = Decisions()
        var doomed: [SourceLedger.Entry] = []
        for key in latest.keys.sorted() where !decided.contains(key) {
            let namers = self.namers(of: key)
            // Deferred: a job of this run that names it (or may) is still to come.
            if namers.contains(where: { shard.contains($0) && endings[$0] == nil }) { continue }
            decided.insert(key)
            if let reason = reason(toKeep: key, namers: namers, decider: job) {
                log(job)(Diagnostic(.note, file: latest[key]!.path, reason))
                decisions.kept += consumers(of: key).map { ($0, key, reason) }
            } else {
                doomed.append(latest[key]!)
            }
        }
        // By name: never in the order of the keys, which follow inode numbers and so change from
        // run to run (a report that lists the same deletions differently each time).
        doomed.sort { $0.path < $1.path }
        let removal = JobRunner.delete(doomed, objects: objects, saying: log(job))
        decisions.deleted = removal.deleted
        for (path, reason) in removal.notDeleted {
            guard let key = doomed.first(where: { $0.path == path })?.key else { continue }
            decisions.kept += consumers(of: key).map { ($0, key, reason) }
        }
        return decisions
    }

    /// Once no job is left to run (the last ended, or a signal stopped the rest): the sources
    /// still waiting for a job that never ran are kept, saying so.
    func settle(log: (Int) -> DiagnosticSink) -> Decisions {
        var decisions = Decisions()
        for key in latest.keys.sorted() where !decided.contains(key) {
            decided.insert(key)
            let waiting = namers(of: key).first { shard.contains($0) && endings[$0] == nil }
            let reason = waiting.map { "kept: job \($0 + 1) (\(jobs[$0].name)) uses it too and did not run" } ?? "kept"
            guard let first = consumers(of: key).first else { continue }
            log(first)(Diagnostic(.note, file: latest[key]!.path, reason))
            decisions.kept += consumers(of: key).map { ($0, key, reason) }
        }
        return decisions
    }

    /// The jobs that name the source `key`, or may: by their names before the run, by their
    /// ledgers, and for an object under a prefix they name (or any object, when their names are
    /// not known).
    private func namers(of key: String) -> [Int] {
        var namers = Set(named.filter { $0.value.contains(key) }.keys).union(verdicts[key].map { Array($0.keys) } ?? [])
        if let path = latest[key]?.path, RemoteName.looksRemote(path) {
            namers.formUnion(namesAnyObject)
            namers.formUnion(prefixes.filter { $0.value.contains { path.hasPrefix($0) } }.keys)
        }
        return namers.sorted()
    }

    /// How a job that did not succeed ended, said after "and".
    private static func ended(_ status: String) -> String {
        switch status {
        case "failed": "failed"
        case "cancelled": "was cancelled"
        case "nothing-to-merge": "had nothing to merge"
        default: "ended \(status)"
        }
    }

    /// The finished jobs whose ledger says they merged all of `key`.
    private func consumers(of key: String) -> [Int] {
        (verdicts[key] ?? [:]).filter { $0.value == nil }.keys.sorted()
    }

    /// Why the source `key` stays although the deciding job merged it whole, or nil when every
    /// job that names it merged all of the same version.
    private func reason(toKeep key: String, namers: [Int], decider: Int) -> String? {
        let path = latest[key]?.path ?? ""
        for namer in namers {
            let job = "job \(namer + 1) (\(jobs[namer].name))"
            // Known to name it only by a prefix (or not known at all): a job that ran and listed it
            // has a verdict; one that succeeded without one did not list it.
            let byPrefixOnly = !(named[namer]?.contains(key) ?? false) && verdicts[key]?[namer] == nil
            if !shard.contains(namer) {
                return byPrefixOnly
                    ? "kept: \(job) of another shard may use it (it names what is under its prefix)"
                    : "kept: \(job) of another shard uses it too"
            }
            if let verdict = verdicts[key]?[namer] {
                if let verdict { return namer == decider ? verdict : "\(verdict) (in \(job))" }
                continue
            }
            switch endings[namer] {
            case .some(.some(let status)):
                return "kept: \(job) \(byPrefixOnly ? "may use" : "uses") it too and \(BatchDeletion.ended(status))"
            case .some(.none) where byPrefixOnly: continue
            default: return "kept: \(job) uses it too and did not merge it in this run"
            }
        }
        guard RemoteName.looksRemote(path) else { return nil }
        let read = Set(namers.compactMap { versions[key]?[$0] })
        if read.count > 1 {
            return "kept: it was replaced while the batch ran (its jobs read \(read.count) versions of it)"
        }
        return nil
    }
}
