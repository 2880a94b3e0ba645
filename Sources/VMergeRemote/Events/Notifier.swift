import Foundation
import VMergeCore

/// Sends a one-shot run's events (`vmerge ... --notify URL`, and a batch's jobs' own receivers)
/// to each receiver on a thread of that receiver's, in order, each signed; one that fails is
/// tried again with backoff. A receiver that is slow or never answers holds up only its own
/// events. The run goes on meanwhile: an event never holds up a merge, and a failed one never
/// changes its result. Before the process exits, `finish(within:)` waits for what is left, up to a
/// bounded time (at once when `shouldStop` says a signal came), and says what could not be
/// delivered.
package final class Notifier: @unchecked Sendable {
    private let targets: [NotifyTarget]
    private let sender: WebhookSender
    private let shouldStop: @Sendable () -> Bool
    private let lock = NSCondition()
    private var pending: [WebhookDelivery] = []
    private var done: [WebhookDelivery] = []
    /// The deliveries being tried now (outside the lock), by receiver.
    private var inFlight: [NotifyTarget: WebhookDelivery] = [:]
    /// The receivers that have a thread.
    private var serving: Set<NotifyTarget> = []
    private var finishing = false
    /// `finish` has answered: nothing more is tried.
    private var closed = false

    package init(
        targets: [NotifyTarget], secret: WebhookSecret,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) {
        self.targets = NotifyTarget.unique(targets)
        self.shouldStop = shouldStop
        sender = WebhookSender(secret: secret, environment: environment, shouldStop: shouldStop)
    }

    /// Queues `event` for every target, and for `also` (a job's own receivers; one named twice is
    /// sent one event); `job` tells a batch's jobs apart in what `finish` returns.
    package func send(_ event: JobEvent, also: [NotifyTarget] = [], job: Int? = nil) {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        for target in NotifyTarget.unique(targets + also) {
            pending.append(WebhookDelivery(event, to: target, job: job))
            if serving.insert(target).inserted {
                let thread = Thread { [self] in deliverLoop(to: target) }
                thread.name = "vmerge.notify"
                thread.start()
            }
        }
        lock.broadcast()
    }

    /// Waits up to `seconds` for every event to be delivered (each try as its backoff allows;
    /// a signal ends the wait at once); returns
    /// every delivery, each saying whether it was delivered.
    package func finish(within seconds: Double) -> [WebhookDelivery] {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        finishing = true
        lock.broadcast()
        while !(pending.isEmpty && inFlight.isEmpty) && Date() < deadline && !shouldStop() {
            _ = lock.wait(until: min(deadline, Date().addingTimeInterval(0.1)))
        }
        // Stopped by a signal: the POSTs under way end at once (`shouldStop` reaches them);
        // waited for, so none is cut off halfway through its connection when the process exits.
        let settled = Date().addingTimeInterval(3)
        while shouldStop() && !inFlight.isEmpty && Date() < settled {
            _ = lock.wait(until: min(settled, Date().addingTimeInterval(0.05)))
        }
        let all = done + pending + Array(inFlight.values)
        pending = []
        closed = true
        lock.broadcast()
        lock.unlock()
        return all
    }

    /// Sends `target`'s events, oldest first, until the run is finished and none is left.
    private func deliverLoop(to target: NotifyTarget) {
        while true {
            lock.lock()
            var next: Int? { pending.firstIndex { $0.target == target && $0.notBefore <= Date() } }
            while next == nil {
                let mine = pending.filter { $0.target == target }
                if closed || (finishing && mine.isEmpty) {
                    lock.unlock()
                    return
                }
                _ = lock.wait(
                    until: mine.map(\.notBefore).min().map { min($0, Date().addingTimeInterval(0.2)) }
                        ?? Date().addingTimeInterval(0.2))
            }
            var delivery = pending.remove(at: next!)
            delivery.attempts += 1
            inFlight[target] = delivery
            lock.unlock()
            let problem = delivery.attempt(with: sender)
            lock.lock()
            inFlight[target] = nil
            if closed {
                lock.unlock()
                return
            }
            if let problem {
                delivery.lastError = problem
                // 1, 2, 4 ... 30 s: a receiver that is back within the wait gets it.
                delivery.notBefore = Date().addingTimeInterval(min(30, pow(2, Double(delivery.attempts - 1))))
                pending.insert(delivery, at: 0)
            } else {
                delivery.delivered = true
                done.append(delivery)
            }
            lock.broadcast()
            lock.unlock()
        }
    }
}
