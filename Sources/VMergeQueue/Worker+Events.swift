import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// A worker's events (`--notify`, a job's `notify`): written to the queue's outbox with the state
/// they tell of (so a worker killed after recording a job still has its event sent), then
/// delivered, signed, by a thread of their own in any worker that has the secret, each tried
/// again with backoff for three days. A delivery never changes a job.
extension Worker {
    /// The events of `kind` for `job`, one for each receiver (the worker's --notify, then the
    /// job's own), each with its own webhook-id.
    func outboxEvents(_ kind: JobEvent.Kind, of job: HeldJob, data: [(String, JSON)] = []) -> [OutboxEvent] {
        let (urls, metadata, output) = lock.withLock { (settings.notify + job.notify, job.metadata, job.output) }
        guard !urls.isEmpty else { return [] }
        return OutboxEvent.each(
            JobEvent(kind, job: job.claim.name, output: output, queueID: job.claim.id, metadata: metadata, data: data),
            to: urls)
    }

    /// The report's JSON, as an event's data.
    func reportData(of job: HeldJob) -> [(String, JSON)] {
        [("report", lock.withLock { job.report }.map { .raw($0) } ?? .null)]
    }

    /// `job.started` for the job just claimed (on its own: a start that is not said is no loss
    /// to the job).
    func sayStarted(_ id: Int64, on link: QueueLink) {
        guard let job = lock.withLock({ held[id] }) else { return }
        let events = outboxEvents(.started, of: job)
        guard !events.isEmpty else { return }
        _ = link.attempt { try $0.enqueueEvents(events, job: id) }
    }

    /// `job.progress` for a running job, 30 s after its first progress and at most every 30 s
    /// after that (a short job says none); on its own, as `job.started` is.
    func sayProgress(_ progress: MergeProgress, of job: HeldJob, now: Double, on link: QueueLink) {
        let every = settings.hooks.progressEventSeconds ?? 30
        let due = lock.withLock {
            if job.progressEventAt == -.infinity { job.progressEventAt = now }
            return now - job.progressEventAt >= every
        }
        guard due else { return }
        let events = outboxEvents(.progress, of: job, data: [("progress", progress.json)])
        guard !events.isEmpty else { return }
        lock.withLock { job.progressEventAt = now }
        _ = link.attempt { try $0.enqueueEvents(events, job: job.claim.id) }
    }

    /// Starts the delivery thread when the worker has the secret; what to wait on for its end.
    func startDelivering(outage: QueueLink.Outage) -> DispatchSemaphore? {
        guard let secret = settings.notifySecret else { return nil }
        let done = DispatchSemaphore(value: 0)
        let link = QueueLink(conninfo: settings.conninfo, queue: nil, outage: outage)
        let sender = WebhookSender(secret: secret, shouldStop: { VMergeProcess.pendingSignal != 0 })
        Thread { [self] in
            var pruned = Date.distantPast
            while !lock.withLock({ finished }) {
                // Once an hour: what was delivered (or given up) a week ago is forgotten.
                if Date().timeIntervalSince(pruned) > 3600, link.attempt({ try $0.pruneEvents() }) != nil {
                    pruned = Date()
                }
                if deliverDue(on: link, sender: sender) == 0 {
                    for _ in 0..<10 where !lock.withLock({ finished }) { usleep(100_000) }
                }
            }
            done.signal()
        }.start()
        return done
    }

    /// Sends the events due now (at most 10), each receiver's in its own lane (`ReceiverLanes`);
    /// how many were taken.
    @discardableResult
    func deliverDue(on link: QueueLink, sender: WebhookSender) -> Int {
        let lease = settings.hooks.eventLeaseSeconds ?? JobQueue.eventLease
        let due = link.attempt({ try $0.takeDueEvents(limit: 10, lease: lease) }) ?? []
        if !due.isEmpty { CrashPoint.here("before-delivery") }
        let access = settings.remoteAccess
        // A stop leaves the rest to their lease's end (any worker with the secret takes them then).
        let tried = ReceiverLanes.deliver(
            due, receiver: \.url, shouldStop: { VMergeProcess.pendingSignal != 0 }
        ) { event in
            switch NotifyTarget.parse(event.url, access: access) {
            case let .success(target): sender.post(id: event.eventID, body: Array(event.payload.utf8), to: target)
            case .failure: "not an https URL vmerge can send to"
            }
        }
        var waits: [String: Double] = [:]
        for (event, problem) in tried {
            // 5 s, 10 s, 20 s ... an hour between tries.
            let wait = min(3600, 5 * pow(2, Double(max(0, event.attempts - 1))))
            _ = link.attempt { try $0.recordDelivery(event.id, error: problem, retryAfter: wait) }
            metrics.delivered(problem == nil)
            if let problem {
                waits[event.url] = wait
                log.warning(
                    "\(event.type) to \(RemoteName.shown(event.url)) not delivered (try \(event.attempts)): \(problem)"
                )
            }
        }
        // Behind a receiver that failed: not tried, and not counted as a try; due with it again.
        if VMergeProcess.pendingSignal == 0 {
            let triedIDs = Set(tried.map(\.event.id))
            for event in due where !triedIDs.contains(event.id) {
                _ = link.attempt { try $0.putBackEvent(event.id, retryAfter: waits[event.url] ?? 5) }
            }
        }
        return due.count
    }

    /// With --once, before it stops: the events still owed, delivered or given up for up to
    /// `notifyWait` seconds; what is left is said (any worker with the secret sends it later).
    func waitForEvents(on link: QueueLink) {
        guard let secret = settings.notifySecret else { return }
        let sender = WebhookSender(secret: secret, shouldStop: { VMergeProcess.pendingSignal != 0 })
        let deadline = Date().addingTimeInterval(settings.notifyWait)
        while Date() < deadline && VMergeProcess.pendingSignal == 0 {
            deliverDue(on: link, sender: sender)
            guard let figures = link.attempt({ try $0.outboxFigures() }), figures.waiting > 0 else { return }
            usleep(200_000)
        }
        if let waiting = link.attempt({ try $0.outboxFigures() })?.waiting, waiting > 0 {
            log.warning("\(waiting) event\(waiting == 1 ? "" : "s") not delivered yet: left in the queue's outbox")
        }
    }
}
