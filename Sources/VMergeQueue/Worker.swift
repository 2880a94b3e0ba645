import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeRemote

/// How a worker runs (`vmerge worker`).
package struct WorkerSettings: Sendable, Equatable {
    package static let defaultLease = JobQueue.defaultLease
    package static let defaultPollInterval = 2.0
    package static var defaultName: String { TemporaryFile.processTag }

    /// The queue's database, as libpq reads it.
    package var conninfo: String
    /// This worker in the queue (`worker` column); with the claim's number, the fence of its leases.
    package var name: String
    /// Jobs run at once.
    package var parallel: Int
    /// Seconds a claim lasts without a heartbeat; heartbeats come every third of it.
    package var lease: Double
    /// Seconds between looks for work while there is none.
    package var pollInterval: Double
    /// Stop once nothing is queued or running (instead of at SIGINT/SIGTERM only).
    package var once: Bool
    /// Tests' switches, for every job (see the CLI's TestHooks).
    package var hooks = MergeHooks()
    /// Whether running jobs' progress is written to their rows (off only to measure what it
    /// costs: VMERGE_TEST_NO_PROGRESS).
    package var publishesProgress = true
    /// The objects and https resources queued jobs may name (--allow-remote): a spec is anyone's
    /// with the table, so only under the operator's prefixes.
    package var remoteAccess = RemoteAccess(listingRequired: true)
    /// --notify: every job's events go here too, besides the job's own `notify`.
    package var notify: [String] = []
    /// --notify-secret-file's secret: with it, this worker delivers the outbox's events.
    package var notifySecret: WebhookSecret?
    /// With `once`: how long its end waits for the events still owed.
    package var notifyWait = 30.0

    package init(
        conninfo: String, name: String = WorkerSettings.defaultName, parallel: Int = Batch.defaultParallel,
        lease: Double = WorkerSettings.defaultLease, pollInterval: Double = WorkerSettings.defaultPollInterval,
        once: Bool = false
    ) {
        self.conninfo = conninfo
        self.name = name
        self.parallel = parallel
        self.lease = lease
        self.pollInterval = pollInterval
        self.once = once
    }
}

/// `vmerge worker`: claims jobs from the queue and runs them with the job runner batch uses,
/// `parallel` at once, until SIGINT/SIGTERM (or, with `once`, until nothing is queued or
/// running).
///
/// - A claim is a lease, renewed every third of it by a heartbeat thread on a connection of
///   its own. A job cancelled in the queue, or whose lease was lost (another worker took it
///   after it ran out), is stopped through its own cancel token; the other jobs go on.
/// - Exactly once: the runner publishes the output atomically with the job key in it, and only
///   then is the job recorded done. A worker that dies between the two leaves the job running
///   until its lease runs out; the next claim finds the output holding the key and records it
///   done without work. A run that finds its output published meanwhile (by another run of the
///   same job) takes its own back unpublished.
/// - The database going away stops nothing: calls go through `QueueLink`s that reconnect with
///   backoff, running merges go on, and what they ended with is kept and recorded once the
///   database is back. A heartbeat that cannot reach the database stops no job; only a definite
///   "cancelled" or "lost" does.
/// - A paused queue (`queue pause`): the running jobs go on to their end, their leases renewed,
///   and nothing new is claimed; the worker says so once, and once when the queue is resumed.
///   With `once` it waits for the resume while jobs are queued.
/// - SIGINT/SIGTERM: no more claims; the running jobs are cancelled (their temporaries removed)
///   and put back, queued, without using an attempt.
package final class Worker: @unchecked Sendable {
    package let settings: WorkerSettings
    let log: DiagnosticSink
    /// What it has done, for --metrics-listen.
    package let metrics: RunMetrics
    private let clock = Stopwatch()
    /// Guards `held`, each held job's `ending` and `stopped`, and `finished`.
    let lock = NSLock()
    /// Claims this worker holds: running, or ended and not yet recorded. By job id.
    var held: [Int64: HeldJob] = [:]
    /// Set when the loop is over: the heartbeat and delivery threads end.
    var finished = false
    /// Whether the loop last found the queue paused (only the loop reads and writes it).
    private var sawPause = false
    /// Signalled when a job ends, so the loop records it (and claims the next) at once.
    private let wake = DispatchSemaphore(value: 0)

    /// Jobs this worker recorded done (merged, or found done already), and failed for good.
    package internal(set) var jobsDone = 0
    package internal(set) var jobsFailed = 0

    /// How long a stopping worker waits for the database to put its jobs back.
    static let stopGrace = 10.0

    /// A running job's progress is written to its row at most this often (seconds), with a
    /// renewal of its lease, on the heartbeat's connection.
    package static let progressInterval = 1.0

    package init(
        settings: WorkerSettings, diagnostics: DiagnosticSink, metrics: RunMetrics = RunMetrics()
    ) {
        self.settings = settings
        self.log = diagnostics
        self.metrics = metrics
    }

    /// A claimed job, its token, and how it ended.
    final class HeldJob: @unchecked Sendable {
        let claim: Claim
        let token: CancelToken
        /// The job's output, for messages ("" when its spec could not be read).
        var output = ""
        var ending: Ending?
        /// Set by the heartbeat: why the job was stopped.
        var stopped: JobQueue.Heartbeat?
        /// The merge's latest progress, and the one last written to the row (and when: the
        /// worker's clock).
        var progress: MergeProgress?
        var published: MergeProgress?
        var publishedAt = -Double.infinity
        /// When its last `job.progress` event was written (the worker's clock).
        var progressEventAt = -Double.infinity
        /// What this worker said about the job, and the run's report (JSON), for its row.
        var log: JobLog
        var report: String?
        /// The job's own `notify` and `metadata` (its events' receivers, and what they carry back).
        var notify: [String] = []
        var metadata: JSON?

        init(_ claim: Claim, token: CancelToken) {
            self.claim = claim
            self.token = token
            log = JobLog(worker: claim.worker)
        }

        var label: String { "job \(claim.id) \(claim.name)" }
    }

    /// What a job ended with, as the queue records it.
    enum Ending {
        /// Merged, or its output held its result already: the runner's summary line.
        case done(String)
        case cancelled
        /// With the inputs the job read, which an error naming one of them is about (never the
        /// output's side, wherever they lie).
        case failed(VMergeError, inputs: [FileName])
    }

    /// Runs until SIGINT/SIGTERM, or with `once` until nothing is queued or running. Throws only
    /// when the queue cannot be used at start (unreachable, refused, no queue there): later
    /// outages are waited out.
    package func run() throws {
        let first = try JobQueue(connecting: settings.conninfo)
        // Said, not needed: an older queue (before schema 8) has no row for it.
        try? first.workerStarted(settings.name, lease: settings.lease)
        let outage = QueueLink.Outage(log: log)
        let link = QueueLink(conninfo: settings.conninfo, queue: first, outage: outage)
        let beats = QueueLink(conninfo: settings.conninfo, queue: nil, outage: outage)
        log(
            "\(settings.name) on \(first.connection.target): \(settings.parallel) job\(settings.parallel == 1 ? "" : "s") "
                + "at once, lease \(formatSeconds(settings.lease)) s")
        let heartbeatDone = DispatchSemaphore(value: 0)
        Thread { [self] in
            beat(on: beats)
            heartbeatDone.signal()
        }.start()
        let deliveryDone = startDelivering(outage: outage)
        defer {
            lock.withLock { finished = true }
            heartbeatDone.wait()
            deliveryDone?.wait()
        }
        var stopDeadline: Double?
        while true {
            if let refusal = link.refusal ?? beats.refusal { try stop(refusedWith: refusal) }
            record(on: link)
            let (running, waiting) = lock.withLock {
                (held.values.filter { $0.ending == nil }.count, held.values.filter { $0.ending != nil }.count)
            }
            if VMergeProcess.pendingSignal != 0 {
                if isDoneStopping(running: running, waiting: waiting, deadline: &stopDeadline) { break }
            } else if running < settings.parallel && link.isReady, let token = newToken() {
                let claimed = link.attempt({ try $0.claim(worker: settings.name, lease: settings.lease) })
                if claimed != nil { metrics.heartbeat() }
                switch claimed {
                case let .some(.some(claim)):
                    note(pause: nil)
                    start(claim, token: token)
                    sayStarted(claim.id, on: link)
                    continue
                case .some(.none):
                    if isDoneWhenIdle(on: link, holding: running + waiting) {
                        waitForEvents(on: link)
                        _ = link.attempt { try $0.workerStopped(settings.name) }
                        log(stopLine())
                        return
                    }
                case .none:
                    break  // the database cannot be reached; said, and tried again after a backoff
                }
            }
            waitForWork()
        }
        _ = link.attempt { try $0.workerStopped(settings.name) }
        log(stopLine())
    }

    /// Nothing to claim now: says once that the queue is paused (or, later, resumed); with `once`,
    /// whether nothing is left to wait for. Queued jobs of a paused queue are waited for (a pause
    /// holds work back, it does not end it), as are jobs backing off or held by other workers.
    private func isDoneWhenIdle(on link: QueueLink, holding: Int) -> Bool {
        if let pause = link.attempt({ try $0.paused() }) { note(pause: pause) }
        guard settings.once && holding == 0, let counts = link.attempt({ try $0.counts() }),
            counts[.queued, default: 0] == 0 && counts[.running, default: 0] == 0
        else { return false }
        log("nothing queued or running: stopping")
        return true
    }

    /// Says when the queue is found paused, and when it is found resumed: once each, not at every
    /// look.
    private func note(pause: QueueSnapshot.Pause?) {
        switch (pause, sawPause) {
        case let (pause?, false):
            log(
                "the queue is paused (since \(pause.sinceText) by \(VisibleText.of(pause.by))): running jobs go on, "
                    + "nothing new is claimed until 'vmerge queue resume'")
        case (nil, true): log("the queue is resumed: claiming jobs again")
        default: break
        }
        sawPause = pause != nil
    }

    /// Why it stopped and what it did, said last.
    private func stopLine() -> String {
        "\(settings.name) stopped\(VMergeProcess.stopNote): \(jobsDone) done, \(jobsFailed) failed"
    }

    /// Once stopping: done when no job is left, or when only jobs whose end is not yet recorded
    /// are, and the database stayed away for `stopGrace` (their leases run out, and other
    /// workers take them).
    private func isDoneStopping(running: Int, waiting: Int, deadline: inout Double?) -> Bool {
        if running + waiting == 0 { return true }
        guard running == 0 else { return false }
        let until = deadline ?? clock.seconds + Worker.stopGrace
        deadline = until
        guard clock.seconds >= until else { return false }
        log.error(
            "stopping with \(waiting) job\(waiting == 1 ? "" : "s") not put back: the database cannot "
                + "be reached; \(waiting == 1 ? "its lease runs" : "their leases run") out and another "
                + "worker takes \(waiting == 1 ? "it" : "them")")
        return true
    }

    /// The database refused a call for good (a role that may not write, a changed schema): no
    /// retry can help, so the worker stops running jobs (their leases run out: another worker,
    /// one the database lets write, takes them) and ends with one line and exit 1, instead of
    /// "trying again" for ever.
    private func stop(refusedWith refusal: (message: String, state: String)) throws -> Never {
        let jobs = lock.withLock { Array(held.values) }
        for job in jobs where job.ending == nil { job.token.cancel() }
        let deadline = clock.seconds + 10
        while clock.seconds < deadline && lock.withLock({ held.values.contains { $0.ending == nil } }) {
            _ = wake.wait(timeout: .now() + 0.1)
        }
        throw WorkerRefused(
            description: "\(refusal.message) (SQLSTATE \(refusal.state)): the database refuses this worker; stopping"
                + (jobs.isEmpty ? "" : " (\(jobs.count) job\(jobs.count == 1 ? "" : "s") left to their leases)"))
    }

    /// Sleeps until a job ends, a signal comes, or the poll interval has passed; once stopping,
    /// a tenth of a second at most (the jobs winding down, or the database awaited).
    private func waitForWork() {
        let deadline = clock.seconds + (VMergeProcess.pendingSignal == 0 ? settings.pollInterval : 0.1)
        while true {
            let left = deadline - clock.seconds
            if left <= 0 { return }
            // Short slices: the signal handler only sets a flag.
            if wake.wait(timeout: .now() + min(left, 0.1)) == .success { return }
            if VMergeProcess.pendingSignal != 0 { return }
        }
    }

    /// A token for the next job, made before it is claimed (a claim must never be dropped).
    private func newToken() -> CancelToken? {
        do {
            return try CancelToken()
        } catch {
            log.error("\(VMergeError.message(of: error)); claiming no job now")
            return nil
        }
    }

    /// Runs a claimed job on a thread of its own; a job whose spec cannot be read ends at once.
    private func start(_ claim: Claim, token: CancelToken) {
        let job = HeldJob(claim, token: token)
        lock.withLock { held[claim.id] = job }
        say("claimed (attempt \(claim.attempt) of \(claim.maxAttempts))", of: job)
        var spec: Job
        do {
            spec = try claim.job()
        } catch {
            let failure = VMergeError.of(error) { .invalidInput(file: "job \(claim.id)", reason: $0) }
            lock.withLock { job.ending = .failed(failure, inputs: []) }
            return
        }
        job.output = spec.output.escaped
        lock.withLock { (job.notify, job.metadata) = (spec.notify, spec.metadata) }
        spec.remoteAccess = settings.remoteAccess
        let thread = Thread { [self, spec] in
            // Every message names its job, as its log lines do: with -j 2 two jobs' warnings interleave.
            // Per frame: only kept here; the heartbeat thread writes it at most once a second.
            let progress: ((MergeProgress) -> Void)? =
                settings.publishesProgress ? { [self] progress in lock.withLock { job.progress = progress } } : nil
            let runner = JobRunner(
                .worker, context: MergeContext(cancel: token, hooks: settings.hooks),
                diagnostics: log.tagged("worker: \(job.label)").recording { [self] diagnostic in
                    lock.withLock { job.log.append(diagnostic) }
                }, onProgress: progress)
            let outcome = runner.run(spec)
            metrics.wrote(outcome)
            metrics.deleted(outcome.end.consumption?.deleted.count ?? 0)
            let ending: Ending
            switch outcome.end {
            case .published, .upToDate: ending = .done(outcome.summary(output: spec.output.escaped))
            case .cancelled: ending = .cancelled
            case let .failed(failure), let .nothingToMerge(failure):
                ending = .failed(failure.error, inputs: outcome.report.inputPaths)
            // Not run by a worker (no dry run, no report of its own to clash).
            case .planned, .refused:
                ending = .failed(
                    .io(file: spec.output.escaped, message: outcome.summary(output: spec.output.escaped)),
                    inputs: outcome.report.inputPaths)
            }
            let report = outcome.report.json.text()
            lock.withLock { (job.ending, job.report) = (ending, report) }
            wake.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Renews the lease of every job held, every third of the lease, until the loop is over; a
    /// job whose merge has moved on since its row last said so gets its renewal early, with its
    /// progress, at most once a `progressInterval` (one statement either way). A job cancelled in
    /// the queue or lost to another claim is stopped; a database that cannot be reached stops
    /// nothing (the next round tries again).
    private func beat(on link: QueueLink) {
        let interval = settings.lease / 3
        var next = clock.seconds + interval
        var pruned = -Double.infinity
        while !lock.withLock({ finished }) {
            usleep(50_000)
            let now = clock.seconds
            let renewal = now >= next
            if renewal {
                next = now + interval
                // Alive, busy or idle: the page tells an idle worker from one that is gone.
                _ = link.attempt { try $0.workerAlive(settings.name) }
                // Once an hour: attempt ends older than the page shows are forgotten.
                if now - pruned > 3600, link.attempt({ try $0.pruneAttemptEnds() }) != nil { pruned = now }
            }
            let due = lock.withLock {
                held.values.compactMap { job -> (HeldJob, MergeProgress?)? in
                    guard job.stopped == nil else { return nil }
                    let fresh = job.progress != job.published ? job.progress : nil
                    guard renewal || (fresh != nil && now - job.publishedAt >= Worker.progressInterval) else {
                        return nil
                    }
                    return (job, fresh)
                }
            }
            for (job, fresh) in due {
                let text = fresh.map { $0.json.text() }
                guard let answer = link.attempt({ try $0.heartbeat(job.claim, lease: settings.lease, progress: text) })
                else { break }
                metrics.heartbeat()
                if let fresh {
                    lock.withLock { (job.published, job.publishedAt) = (fresh, now) }
                    sayProgress(fresh, of: job, now: now, on: link)
                }
                guard answer != .renewed else { continue }
                lock.withLock { job.stopped = answer }
                job.token.cancel()
            }
        }
    }
}
