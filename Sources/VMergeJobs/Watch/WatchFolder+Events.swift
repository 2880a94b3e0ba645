import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// A watcher's events: kept in the inbox's .events as the runner says them (`WatchOutbox`), and
/// sent, signed, by a thread of their own while the watcher runs. A delivery never changes a job.
extension WatchFolder {
    /// Where the job's events go (the watcher's --notify, then job.json's own); nil: nowhere.
    /// A claim completes once: its job.completed has one webhook-id, also when a watcher killed
    /// after saying it recovers the claim and says it again.
    func events(for job: Job, of claim: Claim) -> JobEvents? {
        let urls = settings.notify.map(\.url.absoluteString) + job.notify
        guard settings.notifySecret != nil, !urls.isEmpty else { return nil }
        let (outbox, log, claimID) = (outbox, log, claim.id)
        return JobEvents(metadata: job.metadata) { event in
            outbox.add(event, to: urls, idSeed: event.kind == .completed ? claimID : nil, log: log)
        }
    }

    /// `job.failed` to the watcher's own receivers for a claim whose job could not even be read
    /// (its job.json refused): its own receivers are not known.
    func sayUnreadable(_ claim: Claim, error: VMergeError) {
        guard settings.notifySecret != nil, !settings.notify.isEmpty else { return }
        let failure: JSON = .object([("file", .string(error.file)), ("message", .string(error.description))])
        outbox.add(
            JobEvent(
                .failed, job: claim.name, output: "", queueID: nil, metadata: nil,
                data: [("error", failure), ("retryable", .bool(false)), ("report", .null)]),
            to: settings.notify.map(\.url.absoluteString), log: log)
    }

    /// Starts sending when the watcher has the secret (any watcher of the inbox sends what any
    /// other kept); what to wait on for the thread's end.
    func startDelivering() -> DispatchSemaphore? {
        guard let secret = settings.notifySecret else { return nil }
        let done = DispatchSemaphore(value: 0)
        let stop = deliveryStop
        let sender = WebhookSender(secret: secret, shouldStop: { VMergeProcess.pendingSignal != 0 || stop.isSet })
        let (outbox, log, metrics, access) = (outbox, log, metrics, settings.remoteAccess)
        let thread = Thread {
            while !stop.isSet && VMergeProcess.pendingSignal == 0 {
                let tried = outbox.deliverDue(sender: sender, access: access, log: log, metrics: metrics)
                let (waiting, age) = outbox.waiting()
                metrics.outbox(waiting: waiting, oldestAge: age)
                if tried == 0 {
                    for _ in 0..<5 where !stop.isSet && VMergeProcess.pendingSignal == 0 { usleep(100_000) }
                }
            }
            done.signal()
        }
        thread.name = "vmerge.events"
        thread.start()
        return done
    }

    /// Stops sending. With --once, first waits up to --notify-wait for what is owed (a stop by a
    /// signal does not wait: the events stay for the next start).
    func finishDelivering(_ thread: DispatchSemaphore?) {
        guard let thread else { return }
        if settings.once {
            let deadline = Date().addingTimeInterval(settings.notifyWait)
            while outbox.waiting().count > 0 && Date() < deadline && VMergeProcess.pendingSignal == 0 {
                usleep(100_000)
            }
            let left = outbox.waiting().count
            if left > 0 {
                log.warning(
                    "\(left) event\(left == 1 ? "" : "s") not delivered yet; kept in .events for the next start")
            }
        }
        deliveryStop.set()
        thread.wait()
        // Each lane ends after its POST (which the stop ends at once).
        outbox.waitUntilIdle(before: Date().addingTimeInterval(Double(WebhookSender.postTimeout + 5)))
    }
}
