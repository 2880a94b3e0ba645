import Foundation

/// Sends events, each receiver's on a thread of its own, in order: a receiver that is slow or
/// never answers (each POST has 30 s) holds up only its own events, never another's, and the
/// caller never waits for one. A receiver's first failure ends its lane: the events queued behind
/// it are handed back untried (they would meet the same receiver), to be due again with it.
///
/// `send` returns at once; what became of each event is told on its lane's thread (`tried`,
/// `untried`). While a receiver's lane runs, the caller takes no more of its events (`busy`).
package final class ReceiverLanes<Event: Sendable>: @unchecked Sendable {
    private let receiver: @Sendable (Event) -> String
    private let post: @Sendable (Event) -> String?
    private let shouldStop: @Sendable () -> Bool
    private let tried: @Sendable (Event, String?) -> Void
    private let untried: @Sendable (Event) -> Void
    private let lock = NSCondition()
    /// The lanes running, by receiver: the events each has still to send.
    private var queues: [String: [Event]] = [:]

    /// - Parameters:
    ///   - tried: an event sent, with nil when its receiver took it, else why not.
    ///   - untried: an event behind its receiver's failure (not after a stop: those are left as
    ///     they are, for the next start or another sender).
    package init(
        receiver: @escaping @Sendable (Event) -> String, shouldStop: @escaping @Sendable () -> Bool,
        post: @escaping @Sendable (Event) -> String?, tried: @escaping @Sendable (Event, String?) -> Void,
        untried: @escaping @Sendable (Event) -> Void
    ) {
        self.receiver = receiver
        self.shouldStop = shouldStop
        self.post = post
        self.tried = tried
        self.untried = untried
    }

    /// The receivers whose lane runs now.
    package var busy: Set<String> { lock.withLock { Set(queues.keys) } }

    /// Whether no lane runs.
    package var isIdle: Bool { lock.withLock { queues.isEmpty } }

    /// Queues `events` on their receivers' lanes, starting a lane where none runs.
    package func send(_ events: [Event]) {
        lock.lock()
        defer { lock.unlock() }
        for event in events {
            let key = receiver(event)
            if queues[key] == nil {
                queues[key] = [event]
                let thread = Thread { [self] in run(key) }
                thread.name = "vmerge.events.lane"
                thread.start()
            } else {
                queues[key]?.append(event)
            }
        }
    }

    /// Waits until no lane runs, or `deadline`; whether none does.
    @discardableResult
    package func waitUntilIdle(before deadline: Date) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        while !queues.isEmpty && Date() < deadline {
            _ = lock.wait(until: min(deadline, Date().addingTimeInterval(0.1)))
        }
        return queues.isEmpty
    }

    private func run(_ key: String) {
        while true {
            lock.lock()
            guard let event = queues[key]?.first, !shouldStop() else {
                queues[key] = nil
                lock.broadcast()
                lock.unlock()
                return
            }
            queues[key]?.removeFirst()
            lock.unlock()
            let problem = post(event)
            tried(event, problem)
            guard problem != nil else { continue }
            lock.lock()
            let behind = queues[key] ?? []
            queues[key] = nil
            lock.broadcast()
            lock.unlock()
            if !shouldStop() { behind.forEach(untried) }
            return
        }
    }
}
