import Foundation
import VMergeCore

/// Sends a one-shot run's events (`vmerge ... --notify URL`) to each target on a thread of its
/// own, in order, each signed; one that fails is tried again with backoff. The run goes on
/// meanwhile: an event never holds up a merge, and a failed one never changes its result. Before
/// the process exits, `finish(within:)` waits for what is left, up to a bounded time, and says
/// what could not be delivered.
package final class Notifier: @unchecked Sendable {
    private let targets: [NotifyTarget]
    private let sender: WebhookSender
    private let lock = NSCondition()
    private var pending: [WebhookDelivery] = []
    private var done: [WebhookDelivery] = []
    /// The delivery being tried now (outside the lock).
    private var inFlight: WebhookDelivery?
    private var finishing = false
    /// `finish` has answered: nothing more is tried.
    private var closed = false
    private var thread: Thread?

    package init(
        targets: [NotifyTarget], secret: WebhookSecret,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.targets = targets
        sender = WebhookSender(secret: secret, environment: environment)
    }

    /// Queues `event` for every target, and for `also` (a job's own receivers); `job` tells a
    /// batch's jobs apart in what `finish` returns.
    package func send(_ event: JobEvent, also: [NotifyTarget] = [], job: Int? = nil) {
        lock.lock()
        pending += (targets + also).map { WebhookDelivery(event, to: $0, job: job) }
        if thread == nil {
            let thread = Thread { [self] in deliverLoop() }
            thread.name = "vmerge.notify"
            self.thread = thread
            thread.start()
        }
        lock.signal()
        lock.unlock()
    }

    /// Waits up to `seconds` for every event to be delivered (tries not yet due are made now,
    /// then as their backoff allows within the time); returns every delivery, each saying
    /// whether it was delivered.
    package func finish(within seconds: Double) -> [WebhookDelivery] {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        finishing = true
        lock.broadcast()
        while !(pending.isEmpty && inFlight == nil) && Date() < deadline {
            _ = lock.wait(until: min(deadline, Date().addingTimeInterval(0.1)))
        }
        let all = done + pending + (inFlight.map { [$0] } ?? [])
        pending = []
        closed = true
        lock.broadcast()
        lock.unlock()
        return all
    }

    private func deliverLoop() {
        while true {
            lock.lock()
            while pending.isEmpty || pending.allSatisfy({ $0.notBefore > Date() }) {
                if finishing && pending.isEmpty { lock.unlock(); return }
                _ = lock.wait(
                    until: pending.map(\.notBefore).min().map { min($0, Date().addingTimeInterval(0.2)) }
                        ?? Date().addingTimeInterval(0.2))
            }
            guard let index = pending.firstIndex(where: { $0.notBefore <= Date() }) else { lock.unlock(); continue }
            var delivery = pending.remove(at: index)
            inFlight = delivery
            lock.unlock()
            delivery.attempts += 1
            let problem = delivery.attempt(with: sender)
            lock.lock()
            inFlight = nil
            if closed {
                lock.unlock()
                return
            }
            if let problem {
                delivery.lastError = problem
                // 1, 2, 4 ... 30 s: a receiver that is back within the wait gets it.
                delivery.notBefore = Date().addingTimeInterval(min(30, pow(2, Double(delivery.attempts - 1))))
                pending.append(delivery)
            } else {
                delivery.delivered = true
                done.append(delivery)
            }
            lock.broadcast()
            lock.unlock()
        }
    }
}
