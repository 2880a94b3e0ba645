import CVMergeSupport
import Foundation
import VMergeAV
import VMergeCore

/// `vmerge watch`: finds jobs in an inbox (`InboxScanner`), claims each (`ClaimStore`), merges
/// it, publishes the output and its report into OUTBOX, and moves the sources to .done/ (or
/// deletes them) or, on failure, to .failed/ with an error note beside it. A worker killed at
/// any moment leaves its claim locked only while it lives; the next worker recovers it.
public final class WatchFolder: @unchecked Sendable {
    public let settings: WatchSettings
    private let output: @Sendable (WorkerLogLine) -> Void
    private let onDiagnostic: @Sendable (Diagnostic) -> Void
    private let clock = Stopwatch()
    private var folders: WatchFolders!
    private var claims: ClaimStore!
    private var scanner: InboxScanner
    private var status: WatchStatusFile
    /// Jobs put back for lack of space: not claimed again before `until` (monotonic seconds);
    /// the wait doubles each time (30 s up to 10 min), and other jobs go on meanwhile.
    private var deferred: [String: (until: Double, delay: Double)] = [:]
    /// Claims this worker finished but could not move out of .processing (a producer made its
    /// folder read-only, say): kept, with their locks held, so no worker recovers them in a loop.
    private var stuck: [String: Claim] = [:]
    /// inotify watches on job folders in the inbox, by name (removed once a folder leaves).
    private var watches: [String: Int32] = [:]
    /// The last reason a re-made inbox could not be taken up (said once).
    private var lastInboxProblem: String?
    /// Inbox entries already said to be no job (links, devices), so each is said once.
    private var mentioned: Set<String> = []

    public private(set) var jobsDone = 0
    public private(set) var jobsFailed = 0
    /// Jobs put back in the inbox (no space) and claims or moves that failed: work not done.
    public private(set) var jobsNotDone = 0

    public init(
        settings: WatchSettings, log: @escaping @Sendable (WorkerLogLine) -> Void,
        onDiagnostic: @escaping @Sendable (Diagnostic) -> Void
    ) {
        self.settings = settings
        output = log
        self.onDiagnostic = onDiagnostic
        let clock = clock
        scanner = InboxScanner(settle: settings.settle, once: settings.once, now: { clock.seconds })
        status = WatchStatusFile(settings: settings, now: { clock.seconds }, log: log)
    }

    private func log(_ text: String) { output(WorkerLogLine(level: .info, text: text)) }
    private func problem(_ text: String) { output(WorkerLogLine(level: .problem, text: text)) }

    /// Runs until SIGINT/SIGTERM (or, with `once`, until the jobs ready now are done).
    public func run() throws {
        try status.check()
        try openFolders()
        var outboxInfo = stat()
        if stat(settings.outbox, &outboxInfo) != 0 {
            do {
                try FileManager.default.createDirectory(atPath: settings.outbox, withIntermediateDirectories: true)
            } catch {
                throw VMergeError.io(file: settings.outbox, message: "cannot create this folder")
            }
        }
        guard stat(settings.outbox, &outboxInfo) == 0, FileKind(mode: outboxInfo.st_mode) == .directory else {
            throw VMergeError.io(file: settings.outbox, message: "is not a folder")
        }
        if let inbox = folders.inbox.info, inbox.st_dev == outboxInfo.st_dev, inbox.st_ino == outboxInfo.st_ino {
            // Every output would be a new loose file in the inbox: a loop.
            throw VMergeError.io(file: settings.outbox, message: "the output folder must not be the inbox")
        }
        for allowed in settings.allowedInputs {
            guard let folder = resolvedPath(allowed) else { continue }
            // Jobs could read other producers' files (their job folders, .processing, .done).
            if folders.inboxPath == folder || folders.inboxPath.hasPrefix(folder + "/")
                || folder.hasPrefix(folders.inboxPath + "/")
            {
                throw VMergeError.io(
                    file: allowed, message: "--allow-inputs may not hold the inbox or lie inside it: jobs could read other producers' files")
            }
        }
        if let outbox = resolvedPath(settings.outbox), outbox.hasPrefix(folders.inboxPath + "/") {
            // Producers could rename it and put a link in its place: outputs would go anywhere.
            throw VMergeError.io(
                file: settings.outbox, message: "the output folder must not be inside the inbox, which producers can write")
        }
        let watcher = settings.poll ? -1 : vm_watch_open()
        defer { if watcher >= 0 { close(watcher) } }
        if watcher >= 0 { _ = vm_watch_add(watcher, settings.inbox) }
        status.state.started = Date()
        status.write("idle")
        while VMergeProcess.pendingSignal == 0 {
            guard try inboxIsThere(watcher: watcher) else {
                _ = vm_watch_wait(-1, Int32(WatchSettings.pollInterval * 1000))
                continue
            }
            recoverDeadClaims()
            var wait = settings.poll || watcher < 0 ? WatchSettings.pollInterval : WatchSettings.rescanInterval
            let (ready, nextSettle) = scanner.scan(inboxEntries(watcher: watcher))
            if let nextSettle { wait = min(wait, max(0.05, nextSettle)) }
            let now = clock.seconds
            deferred = deferred.filter { name, _ in ready.contains { $0.name == name } }
            if let next = deferred.values.map(\.until).min() { wait = min(wait, max(0.05, next - now)) }
            for job in ready where VMergeProcess.pendingSignal == 0 {
                if let later = deferred[job.name], clock.seconds < later.until {
                    if settings.once { jobsNotDone += 1 }
                    continue
                }
                guard hasRoomForAJob() else {
                    wait = min(wait, 5)
                    if settings.once { jobsNotDone += 1 }
                    break
                }
                if (try? JobFile.checkedName(job.name, field: "name")) == nil {
                    setAside(
                        Array(job.name.utf8),
                        why: "its name contains a control character (a newline, a tab...); rename it and put it back")
                    continue
                }
                guard job.name.utf8.count <= claims.maxNameBytes else {
                    setAside(
                        Array(job.name.utf8),
                        why: "its name is \(job.name.utf8.count) bytes long (too long); job names may be at most "
                            + "\(claims.maxNameBytes)")
                    continue
                }
                // The list may be a whole job old by now: a file must still be as it settled.
                if job.kind == .file {
                    guard let entry = entry(job.name), scanner.isStillSettled(entry) else { continue }
                }
                if let claim = claims.claim(job) {
                    process(claim)
                } else if settings.once, SafeFile.kind(of: job.name, in: folders.inbox) != .missing {
                    jobsNotDone += 1  // still there and not claimed: said in the log
                }
            }
            if settings.once { break }
            status.write("idle")
            if VMergeProcess.pendingSignal != 0 { break }
            // A change in the inbox (or a signal) ends the wait early; settling files and a
            // periodic rescan (nothing is missed even if an event is) bound it.
            _ = vm_watch_wait(watcher, Int32(wait * 1000))
        }
        status.write("stopped")
    }

    private func openFolders() throws {
        folders = try WatchFolders(inbox: settings.inbox)
        claims = ClaimStore(folders: folders, marker: settings.marker, log: output)
        claims.clearAbandonedDeletions()
    }

    /// Whether the inbox is (still, or again) there; a removed inbox is waited for and a new one
    /// taken up with fresh worker folders. With --once a missing inbox is an error.
    private func inboxIsThere(watcher: Int32) throws -> Bool {
        if folders.inboxIsCurrent { return true }
        var info = stat()
        guard stat(settings.inbox, &info) == 0 else {
            if settings.once { throw VMergeError.io(file: settings.inbox, message: "inbox folder disappeared") }
            if status.state.state != "waiting-for-inbox" {
                problem("the inbox \(settings.inbox) disappeared; waiting for it to come back")
                status.write("waiting-for-inbox")
            }
            return false
        }
        do {
            try openFolders()
        } catch {
            // Often a removal still under way (the folder is there, its contents going): look again
            // soon; a lasting problem (a foreign folder planted in the new inbox) is said once.
            let message = VMergeError.message(of: error)
            if message != lastInboxProblem { problem("the inbox is back but cannot be used yet: \(message)") }
            lastInboxProblem = message
            return false
        }
        lastInboxProblem = nil
        for (_, watch) in watches { vm_watch_remove(watcher, watch) }
        watches = [:]
        if watcher >= 0 { _ = vm_watch_add(watcher, settings.inbox) }
        log("the inbox \(settings.inbox) is back; watching it again")
        return true
    }

    // MARK: scan and settle

    /// Whether an entry known only by its bytes would be a job: a video file, or a folder with
    /// the marker or a job.json.
    private func isJob(_ raw: [UInt8]) -> Bool {
        if raw.first == UInt8(ascii: ".") { return false }
        let kind = { (path: [UInt8]) -> FileKind in
            var info = stat()
            let found = (path + [0]).withUnsafeBufferPointer { bytes in
                bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    fstatat(self.folders.inbox.raw, $0, &info, AT_SYMLINK_NOFOLLOW) == 0
                }
            }
            return found ? FileKind(mode: info.st_mode) : .missing
        }
        switch kind(raw) {
        case .regular:
            let tail = String(decoding: raw.suffix(5), as: UTF8.self).lowercased()
            return InputList.videoExtensions.contains { tail.hasSuffix("." + $0) }
        case .directory:
            return [settings.marker, "job.json"].contains { kind(raw + Array(("/" + $0).utf8)) != .missing }
        default: return false
        }
    }

    private func entry(_ name: String) -> InboxEntry? {
        var info = stat()
        guard fstatat(folders.inbox.raw, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        var entry = InboxEntry(
            name: name, kind: FileKind(mode: info.st_mode), size: Int64(info.st_size), mtime: modificationNanos(info))
        if entry.kind == .directory {
            entry.isReadyFolder =
                SafeFile.kind(of: name + "/" + settings.marker, in: folders.inbox) != .missing
                || SafeFile.kind(of: name + "/job.json", in: folders.inbox) != .missing
        }
        return entry
    }

    /// The inbox's entries, from one reading of it; names no String can address again are set
    /// aside on the way (said once).
    private func inboxEntries(watcher: Int32) -> [InboxEntry] {
        guard let (names, undecodable) = SafeFile.listing(of: folders.inbox) else {
            problem("cannot list the inbox \(settings.inbox): \(SafeFile.errorText())")
            if settings.once { jobsNotDone += 1 }
            return []
        }
        for raw in undecodable where isJob(raw) {
            setAside(raw, why: "its name is not valid UTF-8; rename it and put it back")
        }
        var entries: [InboxEntry] = []
        for name in names where !InboxScanner.isIgnored(name) {
            guard let entry = entry(name) else { continue }
            if entry.kind == .directory && watcher >= 0 && watches[name] == nil {
                watches[name] = vm_watch_add(watcher, folders.inboxPath + "/" + name)
            }
            if ![.directory, .regular].contains(entry.kind) && InboxScanner.isVideo(name) && !mentioned.contains(name) {
                mentioned.insert(name)
                problem("ignored \(name): it is \(entry.kind.phrase), not a file")
            }
            entries.append(entry)
        }
        mentioned = mentioned.intersection(names)
        // Folders that left the inbox (claimed here or elsewhere) are watched no more.
        let present = Set(entries.filter { $0.kind == .directory }.map(\.name))
        for (name, watch) in watches where !present.contains(name) {
            vm_watch_remove(watcher, watch)
            watches[name] = nil
        }
        return entries
    }

    private func hasRoomForAJob() -> Bool {
        let needed = settings.settings.minFree ?? FreeSpace.margin
        guard let available = FreeSpace.available(inFolderOf: settings.outbox + "/x"), available < needed else {
            return true
        }
        if status.state.state != "waiting-for-space" {
            log(
                "waiting: \(ByteSize.format(available)) free in \(settings.outbox), "
                    + "--min-free asks for \(ByteSize.format(needed))")
            status.write("waiting-for-space")
        }
        return false
    }

    /// A name that cannot be claimed (too long for the claim's derived names, or not UTF-8): moved
    /// aside to .failed once, with a note, so it never loops.
    private func setAside(_ raw: [UInt8], why: String) {
        let name = SafeFile.printable(raw)
        jobsFailed += 1
        status.state.failed = jobsFailed
        guard let id = claims.setAside(raw) else {
            problem("failed \(name): \(why); cannot move it to .failed: \(SafeFile.errorText())")
            return
        }
        writeNote(id: id, job: name, error: .invalidInput(file: name, reason: why), report: nil, attempts: 0)
        problem("failed \(name): \(why); moved to .failed/\(id)")
    }

    // MARK: recovery

    /// Claims whose worker is gone are finished here: their temporary files removed, then
    /// processed as if just claimed, unless they keep killing their workers.
    private func recoverDeadClaims() {
        let dead = claims.deadClaims()
        dead.cleared.forEach(removeTemporaries)
        for (claim, recoveries) in dead.found where VMergeProcess.pendingSignal == 0 {
            removeTemporaries(of: claim.token)
            let crashes = recoveries + 1
            claim.lock.setRecoveries(crashes)
            if crashes >= WatchSettings.crashLimit {
                fail(
                    claim, error: .io(file: claim.name, message: "its worker stopped \(crashes) times while working on it"),
                    report: nil, attempts: crashes)
                continue
            }
            log(
                "recovered \(claim.id) from a worker that stopped (recovery \(crashes) of at most "
                    + "\(WatchSettings.crashLimit - 1))")
            process(claim)
        }
    }

    /// A dead claim's temporaries in OUTBOX (regular files only; a planted link is left alone).
    private func removeTemporaries(of token: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: settings.outbox)) ?? []
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") && name.contains(".vmerge-\(token)-") {
            let path = settings.outbox + "/" + name
            if FileKind.at(path) == .regular { unlink(path) }
        }
    }

    // MARK: processing

    private func process(_ claim: Claim) {
        status.state.job = claim.name
        status.state.jobStarted = Date()
        status.write("working")
        var job: Job
        do {
            job = try WatchJob.make(claim, settings: settings)
            job.deleteSources = settings.deleteSources
        } catch {
            fail(claim, error: (error as? VMergeError) ?? .io(file: claim.name, message: "\(error)"), report: nil, attempts: 0)
            return
        }
        var runner = JobRunner(onDiagnostic: onDiagnostic) { [self] progress in
            guard progress.phase == .encoding else { return }
            status.state.percent = (progress.fraction * 1000).rounded() / 10
            status.write("working", throttled: true)
        }
        runner.keyed = true
        runner.deletesSources = false
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
                if case .noSpace = failure {
                    // Not the job's fault: back to the inbox until there is room (the --min-free
                    // guard holds new jobs back meanwhile).
                    let delay = min(600, (deferred[claim.name]?.delay ?? 15) * 2)
                    deferred[claim.name] = (clock.seconds + delay, delay)
                    problem("\(claim.name): \(failure.description); back to the inbox, again in \(formatSeconds(delay)) s")
                    release(claim, quiet: true)
                    jobsNotDone += 1
                    return
                }
                if attempt < settings.retries && WatchJob.isTransient(failure, output: job.output, inputs: report.inputPaths) {
                    attempt += 1
                    let delay = min(60, pow(2, Double(attempt)))
                    log(
                        "retrying \(claim.name) in \(formatSeconds(delay)) s (attempt \(attempt + 1) of "
                            + "\(settings.retries + 1)): \(failure.description)")
                    _ = vm_watch_wait(-1, Int32(delay * 1000))
                    if VMergeProcess.pendingSignal != 0 {
                        release(claim)
                        return
                    }
                    // A name taken meanwhile or a changed free-space picture: decide afresh.
                    if var fresh = try? WatchJob.make(claim, settings: settings) {
                        fresh.deleteSources = settings.deleteSources
                        job = fresh
                    }
                    continue
                }
                fail(claim, error: failure, report: report, attempts: attempt + 1)
                return
            }
        }
    }

    // MARK: publishing

    private func succeed(_ claim: Claim, job: Job, outcome: JobOutcome) {
        // The output is already published (temporary file + no-replace rename); its report goes
        // beside it, then the sources leave .processing. A recovered job whose output was already
        // published keeps the report written with it.
        // The name it got (another worker may have taken the planned one meanwhile).
        let output = outcome.result?.output.path ?? job.output
        let reportPath = output + ".json"
        if !(outcome.skipped && FileKind.at(reportPath) == .regular) {
            do {
                try SafeFile.write(
                    outcome.report.json.text(pretty: true) + "\n", to: reportPath,
                    replace: .ifStartsWith(RunReport.signatures), tag: claim.token)
            } catch {
                problem("warning: \(claim.name): \(VMergeError.message(of: error))")
            }
        }
        // What the job consumed: the files the output, read back, holds wholly (the job runner's
        // ledger, the same for a recovered job whose output was already published); never an
        // unreadable one or one the output holds only part of: those stay in .done.
        var consumed: [SourceLedger.Entry] = []
        if settings.deleteSources {
            if let ledger = outcome.ledger {
                consumed = ledger.consumed
                if ledger.consumed.isEmpty && !ledger.entries.isEmpty {
                    log("\(claim.name): no source is held wholly by the output; all stay in .done")
                }
            } else {
                problem("warning: \(claim.name): the sources are kept in .done: they could not be probed again")
            }
        }
        let deleteSources = !consumed.isEmpty
        let (moved, note, deleted) = claims.finish(claim, deleteSources: deleteSources, consumed: consumed)
        if let note { problem("warning: \(claim.name): \(note)\(moved ? "" : "; it stays in .processing")") }
        if !deleted.isEmpty {
            // Said as a merge says it (a line per file, a count with -q), and named in the report.
            let prefix = claim.folder + "/"
            for path in deleted {
                let shown = claim.name + "/" + String(path.dropFirst(prefix.count))
                onDiagnostic(Diagnostic(.deleted, file: shown, "deleted (--delete-sources: the output holds all of it)"))
            }
            // A recovered job keeps the report of the run that published its output.
            if !outcome.skipped {
                var report = outcome.report
                report.deletedSources = deleted
                do {
                    try SafeFile.write(
                        report.json.text(pretty: true) + "\n", to: reportPath,
                        replace: .ifStartsWith(RunReport.signatures), tag: claim.token)
                } catch {
                    problem("warning: \(claim.name): \(VMergeError.message(of: error))")
                }
            }
        }
        if !moved { stuck[claim.id] = claim }
        jobsDone += 1
        status.state.done = jobsDone
        let report = outcome.report
        if outcome.skipped {
            log("done \(claim.name) -> \(output) (already there from an earlier run)")
        } else {
            let media = Double(report.output?.durationMicros ?? 0) / 1e6
            log(
                String(
                    format: "done %@ -> %@ (%@ s of video in %.1f s, %.1fx)", claim.name, output,
                    formatSeconds(media), report.wallSeconds, media / max(report.wallSeconds, 1e-3)))
        }
        status.state.job = nil
        status.write("idle")
    }

    private func fail(_ claim: Claim, error: VMergeError, report: RunReport?, attempts: Int) {
        jobsFailed += 1
        status.state.failed = jobsFailed
        switch claims.moveToFailed(claim) {
        case let .success(place):
            // The note goes beside the job's folder in .failed (the worker's own), never into the
            // folder itself (the producer's).
            writeNote(id: claim.id, job: claim.name, error: error, report: report, attempts: attempts)
            claim.lock.release()
            problem("failed \(claim.name): \(error.description); moved to \(place)")
        case let .failure(trouble):
            // Kept locked while this worker lives, so it is not recovered and failed again in a loop;
            // the next worker recovers it (and counts that).
            stuck[claim.id] = claim
            problem("failed \(claim.name): \(error.description); left in .processing (\(trouble.reason))")
        }
        status.state.job = nil
        status.write("idle")
    }

    /// ".failed/<id>.error.json": what went wrong, for the producer and the operator.
    private func writeNote(id: String, job: String, error: VMergeError, report: RunReport?, attempts: Int) {
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
                note.text(pretty: true) + "\n", to: folders.failedPath + "/" + id + ".error.json", replace: .never,
                in: folders.failed)
        } catch {
            problem("warning: \(job): cannot write its error note: \(VMergeError.message(of: error))")
        }
    }

    /// Stopped by a signal (or no space): the job goes back to the inbox untouched, for later.
    private func release(_ claim: Claim, quiet: Bool = false) {
        if claims.putBack(claim) {
            if !quiet { log("stopped: \(claim.name) put back in the inbox") }
        } else {
            // Left claimed; the next worker to start recovers it.
            log("stopped: \(claim.name) stays in .processing for the next worker")
        }
        status.state.job = nil
    }
}
