import CVMergeSupport
import Foundation
import VMergeAV
import VMergeCore

/// Settings of a watch folder.
public struct WatchSettings: Sendable {
    public var inbox: String
    public var outbox: String
    /// A loose file is a job once its size and modification time held still this long.
    public var settle: Double = 5
    /// A subfolder is a job once it holds this file (or a job.json).
    public var marker = ".ready"
    public var deleteSources = false
    /// Retries after a transient error (disk full, write errors), with doubling waits.
    public var retries = 2
    public var poll = false
    public var once = false
    public var statusFile: String?
    public var options: MergeOptions
    /// Free space OUTBOX must have before a job starts (default 1 MiB; each job also checks
    /// for its own estimated size).
    public var minFree: Int64?
    /// Reads a job.json's "options" over the watch-wide options, with the command line's checks.
    public var jobOptions: @Sendable ([String: Any], MergeOptions) throws -> MergeOptions = { _, options in options }

    public init(inbox: String, outbox: String, options: MergeOptions) {
        self.inbox = inbox
        self.outbox = outbox
        self.options = options
    }
}

/// An exclusive lock on a claim's lock file, held while a worker works on the claim; the
/// kernel drops it when the worker exits or dies, which is how other workers tell a live claim
/// from a dead one.
final class ClaimLock {
    let path: String
    private let fd: Int32

    /// Takes the lock, creating the file if needed; nil if another worker holds it.
    init?(path: String) {
        // The lock must be on the file that is at `path` now: another worker may remove a stale
        // lock file between our open and our lock, and a lock on the removed file guards nothing.
        for _ in 0..<3 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return nil }
            guard vm_try_lock(fd) == 0 else {
                close(fd)
                return nil
            }
            var held = stat(), current = stat()
            if fstat(fd, &held) == 0 && stat(path, &current) == 0 && held.st_ino == current.st_ino
                && held.st_dev == current.st_dev
            {
                self.path = path
                self.fd = fd
                return
            }
            close(fd)
        }
        return nil
    }

    /// Releases the lock and removes its file (the claim it guarded has left .processing).
    func release() {
        unlink(path)
    }

    deinit { close(fd) }
}

/// One job in the inbox.
struct InboxJob {
    enum Kind { case folder, file }
    var name: String
    var kind: Kind
}

/// `vmerge watch`: finds jobs in an inbox, claims each by an atomic rename into .processing/
/// (so any number of workers, on one machine or several sharing the folder, never take the same
/// job), merges it, publishes the output and its report into OUTBOX, and moves the sources to
/// .done/ (or deletes them) or, on failure, to .failed/ with an error.json. A worker killed at
/// any moment leaves its claim locked only while it lives; the next worker to start recovers it.
public final class WatchFolder: @unchecked Sendable {
    public let settings: WatchSettings
    private let log: @Sendable (String) -> Void
    private let onDiagnostic: @Sendable (Diagnostic) -> Void
    private let host = shortHostName
    private var processing: String { settings.inbox + "/.processing" }
    private var done: String { settings.inbox + "/.done" }
    private var failedFolder: String { settings.inbox + "/.failed" }
    /// Loose files seen, with the size and time they had and since when (monotonic seconds).
    private var seen: [String: (size: Int64, mtime: Int64, since: Double)] = [:]
    private let clock = Stopwatch()
    private var status = WatchStatus()
    /// Set when a job was put back for lack of space: the next scan waits before claiming.
    private var spaceWait = false

    public private(set) var jobsDone = 0
    public private(set) var jobsFailed = 0

    public init(
        settings: WatchSettings, log: @escaping @Sendable (String) -> Void,
        onDiagnostic: @escaping @Sendable (Diagnostic) -> Void
    ) {
        self.settings = settings
        self.log = log
        self.onDiagnostic = onDiagnostic
    }

    /// Runs until SIGINT/SIGTERM (or, with `once`, until the jobs ready now are done).
    public func run() throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: settings.inbox, isDirectory: &isFolder), isFolder.boolValue
        else { throw VMergeError.io(file: settings.inbox, message: "inbox folder does not exist") }
        for folder in [settings.outbox, processing, done, failedFolder] {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw VMergeError.io(file: folder, message: "cannot create this folder")
            }
        }
        var inboxInfo = stat(), outboxInfo = stat()
        if stat(settings.inbox, &inboxInfo) == 0, stat(settings.outbox, &outboxInfo) == 0,
            inboxInfo.st_dev == outboxInfo.st_dev, inboxInfo.st_ino == outboxInfo.st_ino
        {
            // Every output would be a new loose file in the inbox: a loop.
            throw VMergeError.io(file: settings.outbox, message: "the output folder must not be the inbox")
        }
        // Sources a worker was deleting when it died (--delete-sources): already out of the way.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: done)) ?? []
        where name.hasPrefix(".deleting-") {
            try? FileManager.default.removeItem(atPath: done + "/" + name)
        }
        let watcher = settings.poll ? -1 : vm_watch_open()
        defer { if watcher >= 0 { close(watcher) } }
        if watcher >= 0 { _ = vm_watch_add(watcher, settings.inbox) }
        status.started = Date()
        writeStatus(state: "idle")
        while Merger.pendingSignal == 0 {
            recoverDeadClaims()
            var wait = settings.poll || watcher < 0 ? 2.0 : 30.0
            let (ready, nextSettle) = scan(watcher: watcher)
            if let nextSettle { wait = min(wait, max(0.05, nextSettle)) }
            if spaceWait {
                spaceWait = false
                wait = 30
            }
            for job in ready where Merger.pendingSignal == 0 && !spaceWait {
                guard hasRoomForAJob() else {
                    wait = min(wait, 5)
                    break
                }
                // The list may be a whole job old by now: a file must still be as it settled.
                guard job.kind == .folder || isStillSettled(job.name) else { continue }
                if let claim = claim(job) { process(claim) }
            }
            if settings.once { break }
            writeStatus(state: "idle")
            if Merger.pendingSignal != 0 { break }
            // A change in the inbox (or a signal) ends the wait early; settling files and a
            // periodic rescan (nothing is missed even if an event is) bound it.
            _ = vm_watch_wait(watcher, Int32(wait * 1000))
        }
        writeStatus(state: "stopped")
    }

    // MARK: finding jobs

    /// Jobs ready now, in natural name order, and the seconds until the next loose file may
    /// settle.
    private func scan(watcher: Int32) -> ([InboxJob], Double?) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: settings.inbox)) ?? []
        var ready: [InboxJob] = []
        var nextSettle: Double?
        let now = clock.seconds
        var stillThere: Set<String> = []
        for name in names.sorted(by: { InputList.naturalCompare($0, $1) < 0 }) where !WatchFolder.isIgnored(name) {
            let path = settings.inbox + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                if watcher >= 0 { _ = vm_watch_add(watcher, path) }
                let marker = FileManager.default.fileExists(atPath: path + "/" + settings.marker)
                let jobFile = FileManager.default.fileExists(atPath: path + "/job.json")
                if marker || jobFile { ready.append(InboxJob(name: name, kind: .folder)) }
            case S_IFREG:
                guard InputList.videoExtensions.contains((name as NSString).pathExtension.lowercased()) else {
                    continue
                }
                stillThere.insert(name)
                let size = Int64(info.st_size)
                let mtime = modificationNanos(info)
                if settings.once {
                    // No time to watch it: settled if untouched for --settle by its own clock.
                    let age = Date().timeIntervalSince1970 - Double(mtime) / 1e9
                    if age >= settings.settle { ready.append(InboxJob(name: name, kind: .file)) }
                    continue
                }
                if let previous = seen[name], previous.size == size, previous.mtime == mtime {
                    let still = now - previous.since
                    if still >= settings.settle {
                        ready.append(InboxJob(name: name, kind: .file))
                    } else {
                        nextSettle = min(nextSettle ?? .infinity, settings.settle - still)
                    }
                } else {
                    seen[name] = (size, mtime, now)
                    nextSettle = min(nextSettle ?? .infinity, settings.settle)
                }
            default: continue
            }
        }
        seen = seen.filter { stillThere.contains($0.key) }
        return (ready, nextSettle)
    }

    private func isStillSettled(_ name: String) -> Bool {
        var info = stat()
        guard lstat(settings.inbox + "/" + name, &info) == 0 else { return false }
        if settings.once {
            return Date().timeIntervalSince1970 - Double(modificationNanos(info)) / 1e9 >= settings.settle
        }
        guard let previous = seen[name] else { return false }
        return previous.size == Int64(info.st_size) && previous.mtime == modificationNanos(info)
            && clock.seconds - previous.since >= settings.settle
    }

    /// Hidden files (vmerge's own folders and temporaries included) and the usual partial-
    /// download names are never jobs.
    static func isIgnored(_ name: String) -> Bool {
        if name.hasPrefix(".") || name.hasSuffix("~") { return true }
        let suffixes = [".tmp", ".part", ".partial", ".crdownload", ".download", ".filepart", ".swp"]
        return suffixes.contains { name.lowercased().hasSuffix($0) }
    }

    private func hasRoomForAJob() -> Bool {
        let needed = settings.minFree ?? FreeSpace.margin
        guard let available = FreeSpace.available(inFolderOf: settings.outbox + "/x"), available < needed else {
            return true
        }
        if status.state != "waiting-for-space" {
            log(
                "waiting: \(ByteSize.format(available)) free in \(settings.outbox), "
                    + "--min-free asks for \(ByteSize.format(needed))")
            writeStatus(state: "waiting-for-space")
        }
        return false
    }

    // MARK: claims

    struct Claim {
        var id: String
        /// Names the claim's temporary files, so a dead worker's can be found.
        var token: String
        var name: String
        var kind: InboxJob.Kind
        var lock: ClaimLock
        var folder: String
    }

    /// Claims a job by renaming it into .processing/<name>@<token>, with the claim's lock taken
    /// first, so no other worker ever sees the claim unlocked. nil if another worker won.
    private func claim(_ job: InboxJob) -> Claim? {
        let token = "\(host)-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        let id = job.name + "@" + token
        guard let lock = ClaimLock(path: processing + "/." + id + ".lock") else { return nil }
        let source = settings.inbox + "/" + job.name
        let folder = processing + "/" + id
        switch job.kind {
        case .folder:
            guard rename(source, folder) == 0 else {
                lock.release()
                return nil
            }
        case .file:
            // A folder with the file in it (a claim without marker or job.json is a loose file).
            guard mkdir(folder, 0o755) == 0 else {
                lock.release()
                return nil
            }
            guard rename(source, folder + "/" + job.name) == 0 else {
                try? FileManager.default.removeItem(atPath: folder)
                lock.release()
                return nil
            }
        }
        log("claimed \(job.name)")
        return Claim(id: id, token: token, name: job.name, kind: job.kind, lock: lock, folder: folder)
    }

    /// Claims whose worker is gone (their lock can be taken) are finished here: leftovers of
    /// their temporary files removed, then processed as if just claimed.
    private func recoverDeadClaims() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: processing)) ?? []
        for name in names.sorted() where !name.hasPrefix(".") && Merger.pendingSignal == 0 {
            guard let at = name.lastIndex(of: "@") else { continue }
            guard let lock = ClaimLock(path: processing + "/." + name + ".lock") else { continue }  // alive
            let folder = processing + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                lock.release()  // finished just now by its owner
                continue
            }
            let token = String(name[name.index(after: at)...])
            removeTemporaries(of: token)
            let jobName = String(name[..<at])
            let isFolderJob =
                FileManager.default.fileExists(atPath: folder + "/" + settings.marker)
                || FileManager.default.fileExists(atPath: folder + "/job.json")
            if !isFolderJob && !FileManager.default.fileExists(atPath: folder + "/" + jobName) {
                // Died between making the claim folder and moving the file in: nothing was taken.
                try? FileManager.default.removeItem(atPath: folder)
                lock.release()
                continue
            }
            let claim = Claim(
                id: name, token: token, name: jobName, kind: isFolderJob ? .folder : .file, lock: lock, folder: folder)
            // A job that keeps killing its worker (a decoder crash, the OOM killer) is poison too.
            let crashes = recordCrash(claim)
            if crashes >= WatchFolder.crashLimit {
                fail(
                    claim,
                    error: .io(file: jobName, message: "its worker stopped \(crashes) times while working on it"),
                    report: nil, attempts: crashes)
                continue
            }
            log(
                "recovered \(name) from a worker that stopped (recovery \(crashes) of at most \(WatchFolder.crashLimit - 1))"
            )
            process(claim)
        }
        // Lock files whose claim is gone (a worker died between moving it out and unlinking).
        for name in names where name.hasPrefix(".") && name.hasSuffix(".lock") {
            let claim = String(name.dropFirst().dropLast(5))
            if !FileManager.default.fileExists(atPath: processing + "/" + claim),
                let lock = ClaimLock(path: processing + "/" + name)
            {
                lock.release()
            }
        }
    }

    /// Recoveries before a claim counts as poison: high enough that restarts during a long job
    /// (deploys, reboots) do not fail it, low enough that a file that crashes FFmpeg cannot stall
    /// the inbox for ever.
    static let crashLimit = 5

    /// Counts the recoveries of a claim in a file inside it; returns the count.
    private func recordCrash(_ claim: Claim) -> Int {
        let path = claim.folder + "/.vmerge-recoveries"
        let count =
            (FileManager.default.contents(atPath: path).flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0) + 1
        try? AtomicFile.write("\(count)", to: path, tag: claim.token)
        return count
    }

    private func removeTemporaries(of token: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: settings.outbox)) ?? []
        for name in names where name.hasPrefix(".") && name.hasSuffix(".vmerge-\(token).tmp") {
            unlink(settings.outbox + "/" + name)
        }
    }

    // MARK: processing

    private func process(_ claim: Claim) {
        let started = Date()
        status.job = claim.name
        status.jobStarted = started
        writeStatus(state: "working")
        var job: Job
        do {
            job = try makeJob(claim)
        } catch {
            fail(
                claim, error: (error as? VMergeError) ?? .io(file: claim.name, message: "\(error)"), report: nil,
                attempts: 0)
            return
        }
        var runner = JobRunner(onDiagnostic: onDiagnostic) { [self] progress in
            guard progress.phase == .encoding else { return }
            status.percent = (progress.fraction * 1000).rounded() / 10
            writeStatus(state: "working", throttled: true)
        }
        runner.keyed = true
        runner.temporaryTag = claim.token
        var attempt = 0
        while true {
            let outcome = runner.run(job)
            let report = outcome.report
            switch report.status {
            case .ok, .skipped:
                succeed(claim, job: job, outcome: outcome)
                return
            case .cancelled:
                release(claim)
                return
            default:
                let failure = outcome.failure ?? .io(file: job.output, message: report.error?.message ?? "failed")
                if failure.description.contains("not enough free space") {
                    // Not the job's fault: back to the inbox until there is room (the --min-free
                    // guard holds new jobs back meanwhile).
                    log("\(claim.name): \(failure.description); back to the inbox")
                    release(claim, quiet: true)
                    spaceWait = true
                    return
                }
                if attempt < settings.retries && isTransient(failure, output: job.output) {
                    attempt += 1
                    let delay = min(60, pow(2, Double(attempt)))
                    log(
                        "retrying \(claim.name) in \(formatSeconds(delay)) s (attempt \(attempt + 1) of "
                            + "\(settings.retries + 1)): \(failure.description)")
                    _ = vm_watch_wait(-1, Int32(delay * 1000))
                    if Merger.pendingSignal != 0 {
                        release(claim)
                        return
                    }
                    // A name taken meanwhile or a changed free-space picture: decide afresh.
                    if let fresh = try? makeJob(claim) { job = fresh }
                    continue
                }
                fail(claim, error: failure, report: report, attempts: attempt + 1)
                return
            }
        }
    }

    /// The job a claim holds: a folder's videos in natural order (or what its job.json says),
    /// or the one loose file; the output named after it in OUTBOX.
    private func makeJob(_ claim: Claim) throws -> Job {
        var inputs = [claim.folder]
        var baseName = claim.kind == .file ? (claim.name as NSString).deletingPathExtension : claim.name
        var options = settings.options
        let jobFile = claim.folder + "/job.json"
        if claim.kind == .folder, let data = FileManager.default.contents(atPath: jobFile) {
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw VMergeError.invalidInput(file: "job.json", reason: "not a JSON object")
            }
            if let listed = object["inputs"] as? [String] {
                inputs = listed.map { $0.hasPrefix("/") ? $0 : claim.folder + "/" + $0 }
            }
            if let output = object["output"] as? String {
                let stem = ((output as NSString).lastPathComponent as NSString).deletingPathExtension
                guard !stem.isEmpty, !stem.hasPrefix(".") else {
                    throw VMergeError.invalidInput(
                        file: "job.json", reason: "'output' must name a file, such as trip.mp4")
                }
                baseName = stem
            }
            if let values = object["options"] {
                guard let values = values as? [String: Any] else {
                    throw VMergeError.invalidInput(file: "job.json", reason: "'options' must be an object")
                }
                options = try settings.jobOptions(values, options)
            }
        }
        let key = JobKey.make(
            inputs: (try? InputList.expand(inputs, order: .none)) ?? inputs, root: claim.folder, options: options)
        var job = Job(name: claim.name, inputs: inputs, output: freeOutputName(baseName, key: key), options: options)
        job.keyRoot = claim.folder
        job.minFree = settings.minFree
        return job
    }

    /// "<name>.mp4" in OUTBOX, or "<name>-2.mp4"... when the name holds another job's output;
    /// an output of this very job (a worker died before moving its sources) is reused.
    private func freeOutputName(_ base: String, key: String) -> String {
        var candidate = settings.outbox + "/" + base + ".mp4"
        var n = 2
        while FileManager.default.fileExists(atPath: candidate) && Probe.recordedJobKey(at: candidate) != key {
            candidate = settings.outbox + "/" + base + "-\(n).mp4"
            n += 1
        }
        return candidate
    }

    /// Output-side problems (disk full, write errors) may pass; a bad input never will.
    private func isTransient(_ error: VMergeError, output: String) -> Bool {
        switch error {
        // Another worker published under the same name meanwhile ("trip.mov" and "trip/" both
        // make trip.mp4): the retry picks the next free name.
        case .outputExists: return true
        case let .io(file, _), let .ffmpeg(file, _, _):
            let folder = (output as NSString).deletingLastPathComponent
            return file == output || file.hasPrefix(folder + "/")
        default: return false
        }
    }

    private func succeed(_ claim: Claim, job: Job, outcome: JobOutcome) {
        // The output is already published (temporary file + link/rename); its report goes
        // beside it, then the sources leave .processing.
        // A recovered job whose output was already published keeps the report written with it.
        if !(outcome.skipped && FileManager.default.fileExists(atPath: job.output + ".json")) {
            do {
                try AtomicFile.write(
                    outcome.report.json.text(pretty: true) + "\n", to: job.output + ".json", tag: claim.token)
            } catch {
                log("warning: \(claim.name): \((error as? VMergeError)?.description ?? "\(error)")")
            }
        }
        if settings.deleteSources {
            // Out of .processing first (one rename), so a crash mid-delete can never make the
            // job look unfinished; leftovers of such a crash are cleared at start-up.
            let doomed = done + "/.deleting-" + claim.id
            if rename(claim.folder, doomed) == 0 {
                try? FileManager.default.removeItem(atPath: doomed)
            } else {
                log("warning: \(claim.name): cannot remove the sources: \(String(cString: strerror(errno)))")
            }
        } else if rename(claim.folder, done + "/" + claim.id) != 0 {
            log("warning: \(claim.name): cannot move the sources to .done: \(String(cString: strerror(errno)))")
        }
        claim.lock.release()
        jobsDone += 1
        status.done = jobsDone
        let report = outcome.report
        if outcome.skipped {
            log("done \(claim.name) -> \(job.output) (already there from an earlier run)")
        } else {
            let media = Double(report.output?.durationMicros ?? 0) / 1e6
            log(
                String(
                    format: "done %@ -> %@ (%@ s of video in %.1f s, %.1fx)", claim.name, job.output,
                    formatSeconds(media), report.wallSeconds, media / max(report.wallSeconds, 1e-3)))
        }
        status.job = nil
        writeStatus(state: "idle")
    }

    private func fail(_ claim: Claim, error: VMergeError, report: RunReport?, attempts: Int) {
        let note = JSON.object([
            ("job", .string(claim.name)),
            ("error", .string(error.description)),
            ("file", .string(error.file)),
            ("attempts", .int(attempts)),
            ("failed_at", .string(ISO8601DateFormatter().string(from: Date()))),
            ("worker", .string("\(host) pid \(getpid())")),
            ("report", report?.json ?? .null),
        ])
        try? AtomicFile.write(note.text(pretty: true) + "\n", to: claim.folder + "/error.json", tag: claim.token)
        let destination = failedFolder + "/" + claim.id
        let moved = rename(claim.folder, destination) == 0
        let why = moved ? "" : String(cString: strerror(errno))
        claim.lock.release()
        jobsFailed += 1
        status.failed = jobsFailed
        log(
            "failed \(claim.name): \(error.description); "
                + (moved ? "moved to .failed/\(claim.id)" : "left in .processing (cannot move to .failed: \(why))"))
        status.job = nil
        writeStatus(state: "idle")
    }

    /// Stopped by a signal mid-job: the job goes back to the inbox untouched, for later.
    private func release(_ claim: Claim, quiet: Bool = false) {
        let home = settings.inbox + "/" + claim.name
        var restored = false
        if !FileManager.default.fileExists(atPath: home) {
            switch claim.kind {
            case .folder:
                restored = rename(claim.folder, home) == 0
            case .file:
                restored = rename(claim.folder + "/" + claim.name, home) == 0
                if restored { try? FileManager.default.removeItem(atPath: claim.folder) }
            }
        }
        if restored {
            claim.lock.release()
            if !quiet { log("stopped: \(claim.name) put back in the inbox") }
        } else {
            // Left claimed; the next worker to start recovers it.
            log("stopped: \(claim.name) stays in .processing for the next worker")
        }
    }

    // MARK: status file

    struct WatchStatus {
        var state = "starting"
        var job: String?
        var jobStarted: Date?
        var percent: Double?
        var done = 0
        var failed = 0
        var started = Date()
        var lastWrite = -1.0
    }

    private func writeStatus(state: String, throttled: Bool = false) {
        guard let path = settings.statusFile else {
            status.state = state
            return
        }
        let now = clock.seconds
        if throttled && status.lastWrite >= 0 && now - status.lastWrite < 2 { return }
        status.lastWrite = now
        status.state = state
        if status.job == nil { status.percent = nil }
        let formatter = ISO8601DateFormatter()
        let json = JSON.object([
            ("pid", .int(Int64(getpid()))),
            ("host", .string(host)),
            ("inbox", .string(settings.inbox)),
            ("outbox", .string(settings.outbox)),
            ("state", .string(state)),
            ("job", .string(status.job)),
            ("job_started_at", .string(status.job == nil ? nil : status.jobStarted.map(formatter.string))),
            ("percent", .number(status.percent)),
            ("jobs_done", .int(status.done)),
            ("jobs_failed", .int(status.failed)),
            ("started_at", .string(formatter.string(from: status.started))),
            ("updated_at", .string(formatter.string(from: Date()))),
        ])
        try? AtomicFile.write(json.text(pretty: true) + "\n", to: path)
    }
}
