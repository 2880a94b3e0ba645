import CVMergeSupport
import Foundation
import VMergeAV
import VMergeCore

/// `vmerge watch`: finds jobs in an inbox (`InboxScanner`), claims each (`ClaimStore`), merges
/// it, publishes the output and its report into OUTBOX, and moves the sources to .done/ (or
/// deletes them) or, on failure, to .failed/ with an error note beside it. A worker killed at
/// any moment leaves its claim locked only while it lives; the next worker recovers it.
package final class WatchFolder: @unchecked Sendable {
    package let settings: WatchSettings
    let log: DiagnosticSink
    /// What it has done, for --metrics-listen.
    package let metrics: RunMetrics
    let clock = Stopwatch()
    /// The inbox's claims, with its worker folders (`claims.folders`): opened with the watcher,
    /// and again, fresh, when a removed inbox comes back.
    var claims: ClaimStore
    var scanner: InboxScanner
    var status: WatchStatusFile
    /// Events owed to receivers (--notify), in the inbox's .events.
    let outbox: WatchOutbox
    /// Ends the events' thread.
    let deliveryStop = StopFlag()
    /// Jobs put back for lack of space: not claimed again before `until` (monotonic seconds);
    /// the wait doubles each time (30 s up to 10 min), and other jobs go on meanwhile.
    var deferred: [String: (until: Double, delay: Double)] = [:]
    /// Claims this worker finished but could not move out of .processing (a producer made its
    /// folder read-only, say): kept, with their locks held, so no worker recovers them in a loop.
    var stuck: [String: Claim] = [:]
    /// inotify watches on job folders in the inbox, by name (removed once a folder leaves).
    var watches: [String: Int32] = [:]
    /// The last reason a re-made inbox could not be taken up (said once).
    var lastInboxProblem: String?
    /// Inbox entries already said to be no job (links, devices), so each is said once.
    var mentioned: Set<String> = []

    package internal(set) var jobsDone = 0
    package internal(set) var jobsFailed = 0
    /// Jobs put back in the inbox (no space) and claims or moves that failed: work not done.
    package internal(set) var jobsNotDone = 0

    /// Opens the inbox and its worker folders, and checks the status file's folder and what the
    /// jobs need (`WatchPreflight`): a watcher that cannot work says so before it starts.
    package init(
        settings: WatchSettings, diagnostics log: DiagnosticSink, metrics: RunMetrics = RunMetrics()
    ) throws {
        self.settings = settings
        self.log = log
        self.metrics = metrics
        let clock = clock
        scanner = InboxScanner(settle: settings.settle, once: settings.once, now: { clock.seconds })
        status = WatchStatusFile(settings: settings, now: { clock.seconds }, log: log)
        try status.check()
        claims = try WatchFolder.open(settings, log: log)
        outbox = WatchOutbox(claims.folders)
        try WatchPreflight.check(settings, inbox: claims.folders)
    }

    /// Runs until SIGINT/SIGTERM (or, with `once`, until the jobs ready now are done).
    package func run() throws {
        let watcher = settings.poll ? -1 : vm_watch_open()
        defer { if watcher >= 0 { close(watcher) } }
        if watcher >= 0 { _ = POSIX.named(FileName(settings.inbox), failure: -1) { vm_watch_add(watcher, $0) } }
        status.state.started = Date()
        status.write("idle")
        log(startLine(inotify: watcher >= 0))
        let delivering = startDelivering()
        while VMergeProcess.pendingSignal == 0 {
            guard try inboxIsThere(watcher: watcher) else {
                _ = vm_watch_wait(-1, Int32(WatchSettings.pollInterval * 1000))
                continue
            }
            recoverDeadClaims()
            var wait = settings.poll || watcher < 0 ? WatchSettings.pollInterval : WatchSettings.rescanInterval
            let (ready, nextSettle) = scanner.scan(inboxEntries(watcher: watcher))
            metrics.heartbeat()
            if let nextSettle { wait = min(wait, max(0.05, nextSettle)) }
            // An idle watcher's status is rewritten this often too: a dashboard tells a stopped one by its age.
            if status.path != nil { wait = min(wait, WatchStatusFile.idleRewrite) }
            let now = clock.seconds
            deferred = deferred.filter { name, _ in ready.contains { $0.name == name } }
            if let next = deferred.values.map(\.until).min() { wait = min(wait, max(0.05, next - now)) }
            takeUp(ready, wait: &wait)
            if settings.once { break }
            status.write("idle")
            if VMergeProcess.pendingSignal != 0 { break }
            // A change in the inbox (or a signal) ends the wait early; settling files and a
            // periodic rescan (nothing is missed even if an event is) bound it.
            _ = vm_watch_wait(watcher, Int32(wait * 1000))
        }
        finishDelivering(delivering)
        status.write("stopped")
        log(stopLine())
    }

    /// What is watched, where outputs go and how a job is recognised: said once at start.
    func startLine(inotify: Bool) -> String {
        let settle = formatSeconds(settings.settle)
        return
            "watching \(settings.inbox) (a folder with \(settings.marker) or a job.json, or a video file unchanged for "
            + "\(settle) s) into \(settings.outbox), one job at a time"
            + (inotify ? "" : ", looking every \(formatSeconds(WatchSettings.pollInterval)) s")
            + (settings.once ? "; the jobs ready now, then stopping" : "; until SIGINT or SIGTERM")
    }

    /// Why it stopped and what it did.
    func stopLine() -> String {
        "stopped\(VMergeProcess.stopNote): \(jobsDone) done, \(jobsFailed) failed"
            + (jobsNotDone > 0 ? ", \(jobsNotDone) not done" : "")
    }

    /// Claims and runs the jobs found ready, in order, unless put back for a while, the outbox
    /// has no room, or the name cannot be a job's; `wait` shortens when a job is held back.
    func takeUp(_ ready: [InboxJob], wait: inout Double) {
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
                    job.name,
                    why: "its name contains a control character (a newline, a tab...); rename it and put it back")
                continue
            }
            guard FileName.bytes(of: job.name).count <= claims.maxNameBytes else {
                setAside(
                    job.name,
                    why:
                        "its name is \(FileName.bytes(of: job.name).count) bytes long (too long); job names may be at most "
                        + "\(claims.maxNameBytes)")
                continue
            }
            // The list may be a whole job old by now: a file must still be as it settled.
            if job.kind == .file {
                guard let entry = entry(job.name), scanner.isStillSettled(entry) else { continue }
            }
            if let claim = claims.claim(job) {
                process(claim)
            } else if settings.once, SafeFile.kind(of: job.name, in: claims.folders.inbox) != .missing {
                jobsNotDone += 1  // still there and not claimed: said in the log
            }
        }
    }

    /// The inbox's worker folders and their claims, with what a stopped worker left half deleted
    /// cleared.
    static func open(_ settings: WatchSettings, log: DiagnosticSink) throws -> ClaimStore {
        let claims = ClaimStore(folders: try WatchFolders(inbox: settings.inbox), marker: settings.marker, log: log)
        claims.clearAbandonedDeletions()
        return claims
    }

    /// Whether the inbox is (still, or again) there; a removed inbox is waited for and a new one
    /// taken up with fresh worker folders. With --once a missing inbox is an error.
    func inboxIsThere(watcher: Int32) throws -> Bool {
        if claims.folders.inboxIsCurrent { return true }
        var info = stat()
        guard POSIX.stat(FileName(settings.inbox), &info) == 0 else {
            if settings.once { throw VMergeError.io(file: settings.inbox, message: "inbox folder disappeared") }
            if status.state.state != "waiting-for-inbox" {
                log.error("the inbox \(settings.inbox) disappeared; waiting for it to come back")
                status.write("waiting-for-inbox")
            }
            return false
        }
        do {
            claims = try WatchFolder.open(settings, log: log)
            outbox.moved(to: claims.folders)
        } catch {
            // Often a removal still under way (the folder is there, its contents going): look again
            // soon; a lasting problem (a foreign folder planted in the new inbox) is said once.
            let message = VMergeError.message(of: error)
            if message != lastInboxProblem { log.error("the inbox is back but cannot be used yet: \(message)") }
            lastInboxProblem = message
            return false
        }
        lastInboxProblem = nil
        for (_, watch) in watches { vm_watch_remove(watcher, watch) }
        watches = [:]
        if watcher >= 0 { _ = POSIX.named(FileName(settings.inbox), failure: -1) { vm_watch_add(watcher, $0) } }
        log("the inbox \(settings.inbox) is back; watching it again")
        return true
    }

    // MARK: processing

    /// The claim's job, deleting its sources with --delete-sources.
    private func makeJob(_ claim: Claim) -> Result<Job, VMergeError> {
        do {
            var job = try WatchJob.make(claim, settings: settings)
            job.deleteSources = settings.deleteSources
            return .success(job)
        } catch {
            return .failure(VMergeError.of(error) { .io(file: claim.name, message: $0) })
        }
    }

    /// A keyed runner that leaves deleting to the claim, names its temporary files after the
    /// claim, and keeps the status file's percentage.
    private func runner(for claim: Claim, job: Job) -> JobRunner {
        // Every message names its job, as its log lines do, and its files as the log names them.
        let diagnostics = log.tagged("watch: \(claim.name)").namingFiles(claim.showing)
        var runner = JobRunner(
            .watch(claimToken: claim.token), context: MergeContext(hooks: settings.hooks), diagnostics: diagnostics
        ) { [self] progress in
            // The file named as the log names it (the claim folder moves on).
            var shown = progress
            shown.file = progress.file.map(claim.shown)
            status.state.progress = shown
            if progress.phase == .encoding { status.state.percent = (progress.fraction * 1000).rounded() / 10 }
            status.write("working", throttled: true)
        }
        runner.events = events(for: job, of: claim)
        return runner
    }

    /// The claim's job, its start said; nil (the claim failed, and said so) when it cannot be read.
    private func start(_ claim: Claim) -> Job? {
        let made = makeJob(claim)
        status.started(claim.name, inputs: ((try? made.get())?.inputs ?? []).map { claim.shown($0.path.escaped) })
        status.write("working")
        switch made {
        case let .success(job): return job
        case let .failure(error):
            sayUnreadable(claim, error: error)
            fail(claim, error: error, report: nil, attempts: 0)
            return nil
        }
    }

    func process(_ claim: Claim) {
        guard var job = start(claim) else { return }
        let runner = runner(for: claim, job: job)
        var attempt = 0
        while true {
            let outcome = runner.run(job)
            let report = outcome.report
            let failure: VMergeError
            switch outcome.end {
            case .published, .upToDate:
                succeed(claim, job: job, outcome: outcome)
                return
            case .cancelled:
                metrics.finished(.cancelled)
                release(claim)
                return
            case let .failed(stopped), let .nothingToMerge(stopped): failure = stopped.error
            // Not run by a watch folder (no dry run, no report of its own to clash).
            case .planned, .refused:
                failure = .io(file: job.output.escaped, message: outcome.summary(output: job.output.escaped))
            }
            let decision = RetryPolicy(retries: settings.retries).decide(
                failure, attempt: attempt, output: job.output.escaped, inputs: report.inputPaths,
                lastDelay: deferred[claim.name]?.delay)
            switch decision {
            case let .backToInbox(delay):
                // The --min-free guard holds new jobs back meanwhile.
                deferred[claim.name] = (clock.seconds + delay, delay)
                log.error(
                    "\(claim.name): \(failure.description); back to the inbox, again in \(formatSeconds(delay)) s")
                release(claim, quiet: true)
                jobsNotDone += 1
                return
            case let .retry(delay):
                attempt += 1
                log(
                    "retrying \(claim.name) in \(formatSeconds(delay)) s (attempt \(attempt + 1) of "
                        + "\(settings.retries + 1)): \(failure.description)")
                _ = vm_watch_wait(-1, Int32(delay * 1000))
                if VMergeProcess.pendingSignal != 0 {
                    metrics.finished(.cancelled)
                    release(claim)
                    return
                }
                // A name taken meanwhile or a changed free-space picture: decide afresh.
                job = (try? makeJob(claim).get()) ?? job
                continue
            case .fail:
                break
            }
            fail(claim, error: failure, report: report, attempts: attempt + 1)
            return
        }
    }
}
