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
    /// It takes the events due (not those of a receiver whose lane still runs) and hands them to
    /// their receivers' lanes (`ReceiverLanes`), never waiting for a receiver itself.
    func startDelivering(outage: QueueLink.Outage) -> DispatchSemaphore? {
        guard let secret = settings.notifySecret else { return nil }
        let done = DispatchSemaphore(value: 0)
        let link = DeliveryLink(QueueLink(conninfo: settings.conninfo, queue: nil, outage: outage))
        let sender = WebhookSender(secret: secret, shouldStop: { VMergeProcess.pendingSignal != 0 })
        let lanes = deliveryLanes(sender: sender, link: link)
        Thread { [self] in
            var pruned = Date.distantPast
            while !lock.withLock({ finished }) {
                // Once an hour: what was delivered (or given up) a week ago is forgotten.
                if Date().timeIntervalSince(pruned) > 3600, link.attempt({ try $0.pruneEvents() }) != nil {
                    pruned = Date()
                }
                if deliverDue(on: link, lanes: lanes) == 0 {
                    for _ in 0..<5 where !lock.withLock({ finished }) { usleep(100_000) }
                }
            }
            // A stop ends each lane after its POST (the signal ends that at once).
            lanes.waitUntilIdle(before: Date().addingTimeInterval(Double(WebhookSender.postTimeout + 5)))
            done.signal()
        }.start()
        return done
    }

    /// Lanes that record each try on `link`.
    private func deliveryLanes(sender: WebhookSender, link: DeliveryLink) -> ReceiverLanes<OutboxEvent> {
        let (access, metrics, log) = (settings.remoteAccess, metrics, log)
        return ReceiverLanes(
            receiver: \.url, shouldStop: { VMergeProcess.pendingSignal != 0 },
            post: { event in
                switch NotifyTarget.parse(event.url, access: access) {
                case let .success(target): sender.post(id: event.eventID, body: Array(event.payload.utf8), to: target)
                case .failure: "not an https URL vmerge can send to"
                }
            },
            tried: { event, problem in
                // 5 s, 10 s, 20 s ... an hour between tries.
                let wait = Worker.eventBackoff(afterTry: event.attempts)
                _ = link.attempt { try $0.recordDelivery(event.id, error: problem, retryAfter: wait) }
                metrics.delivered(problem == nil)
                if let problem {
                    log.warning(
                        "\(event.type) to \(RemoteName.shown(event.url)) not delivered (try \(event.attempts)): \(problem)"
                    )
                }
            },
            untried: { event in
                // Behind a receiver that failed: not counted as a try; due with it again.
                _ = link.attempt {
                    try $0.putBackEvent(event.id, retryAfter: Worker.eventBackoff(afterTry: max(1, event.attempts - 1)))
                }
            })
    }

    /// Seconds before the next try of an event tried `attempts` times: 5, 10, 20 ... an hour.
    static func eventBackoff(afterTry attempts: Int) -> Double { min(3600, 5 * pow(2, Double(max(0, attempts - 1)))) }

    /// Takes the events due now (at most 10, none of a receiver whose lane runs) and hands them
    /// to their lanes; how many were taken.
    @discardableResult
    func deliverDue(on link: DeliveryLink, lanes: ReceiverLanes<OutboxEvent>) -> Int {
        let lease = settings.hooks.eventLeaseSeconds ?? JobQueue.eventLease
        let busy = lanes.busy
        let due = link.attempt({ try $0.takeDueEvents(limit: 10, lease: lease, skipping: busy) }) ?? []
        if !due.isEmpty { CrashPoint.here("before-delivery") }
        lanes.send(due)
        return due.count
    }

    /// With --once, before it stops: waits up to `notifyWait` seconds for the events still owed to
    /// be delivered (by the delivery thread) or given up; what is left is said (any worker with
    /// the secret sends it later).
    func waitForEvents(on link: QueueLink) {
        guard settings.notifySecret != nil else { return }
        let deadline = Date().addingTimeInterval(settings.notifyWait)
        while Date() < deadline && VMergeProcess.pendingSignal == 0 {
            guard let figures = link.attempt({ try $0.outboxFigures() }), figures.waiting > 0 else { return }
            usleep(200_000)
        }
        if let waiting = link.attempt({ try $0.outboxFigures() })?.waiting, waiting > 0 {
            log.warning("\(waiting) event\(waiting == 1 ? "" : "s") not delivered yet: left in the queue's outbox")
        }
    }
}

/// The delivery thread's connection, shared with its lanes: one statement at a time.
final class DeliveryLink: @unchecked Sendable {
    private let link: QueueLink
    private let lock = NSLock()

    init(_ link: QueueLink) { self.link = link }

    func attempt<T>(_ body: (JobQueue) throws -> T) -> T? { lock.withLock { link.attempt(body) } }
}
