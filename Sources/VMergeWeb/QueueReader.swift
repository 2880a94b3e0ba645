import Foundation
import VMergeCore
import VMergeQueue

/// Reads the queue for a page or a scrape within a deadline, so that a database that is down,
/// slow or cut off never makes a request hang: past the deadline the answer is "unavailable"
/// (and the metrics say `vmerge_database_up 0`).
///
/// Reads run on `lanes` connections, each with a serial queue that alone touches it; a read
/// takes the lane with the fewest waiting, so API submissions (a transaction and a commit each)
/// overlap instead of queueing behind one connection. The snapshot
/// (counts, workers, running jobs) every page and scrape shows is read at most once a second and
/// shared, so fifty browsers polling cost the database one snapshot a second. A read whose
/// request has given up is skipped, so a stall does not leave a backlog behind it; and a read
/// that is still waiting on the database past the deadline is cut off (its socket shut down),
/// since a server process that stopped leaves the connection up and would hold it for ever.
package final class QueueReader: @unchecked Sendable {
    /// Why the queue cannot be read: the database's message, or the deadline.
    package struct Unavailable: Error, Sendable, Equatable {
        package let reason: String
        package init(_ reason: String) { self.reason = reason }
    }

    package typealias Reading = Result<QueueSnapshot, Unavailable>

    private let conninfo: String
    private let deadline: Double
    private let connectTimeout: Int
    /// How long a snapshot is shared.
    private let freshness: Double
    private let lanes: [Lane]
    /// Guards everything below, and each lane's `inFlight` and `waiting`.
    private let lock = NSLock()
    private var lastSnapshot: (at: Date, reading: Reading)?
    /// Counts changes: a snapshot read while one was made (on another lane) is not shared.
    private var changes = 0
    /// Whether the last read that ended could read the queue (at start: assumed, so a first
    /// failure is said).
    private var available = true
    /// Told when reads start failing (with the reason) and when they succeed again (nil): an
    /// operator's log then has one line per change, not one per request.
    private let onChange: @Sendable (String?) -> Void

    /// One connection and the serial queue that alone uses it.
    private final class Lane: @unchecked Sendable {
        let work: DispatchQueue
        /// Used on `work` only.
        var queue: JobQueue?
        /// The socket of the read waiting on the database, since when, and whose request it is.
        var inFlight: (socket: Int32, since: Date, request: ObjectIdentifier)?
        /// Reads given to it and not yet ended.
        var waiting = 0
        /// When its connection last answered (used on `work` only).
        var answeredAt = Date.distantPast

        init(_ number: Int) { work = DispatchQueue(label: "vmerge.dashboard.database.\(number)") }
    }

    /// `deadline`: seconds a request waits for the database; a new connection gives up after
    /// `connectTimeout` (libpq's minimum is 2), and a statement after the deadline on the server.
    /// `lanes`: connections at most (each made when first needed).
    package init(
        conninfo: String, deadline: Double = 3, connectTimeout: Int = 2, freshness: Double = 1, lanes: Int = 4,
        onChange: @escaping @Sendable (String?) -> Void = { _ in }
    ) {
        self.lanes = (0..<max(1, lanes)).map(Lane.init)
        self.conninfo = conninfo
        self.deadline = deadline
        self.connectTimeout = connectTimeout
        self.freshness = freshness
        self.onChange = onChange
    }

    /// The queue's snapshot now (or up to `freshness` ago), or why it cannot be read.
    package func snapshot() -> Reading {
        if let shared = sharedSnapshot() { return shared }
        let before = lock.withLock { changes }
        let reading = perform { queue in
            // Another request may have read it while this one waited its turn.
            if let shared = self.sharedSnapshot() { return try shared.get() }
            return try queue.snapshot()
        }
        if case .success = reading {
            lock.withLock { if changes == before { lastSnapshot = (Date(), reading) } }
        }
        return reading
    }

    /// Runs `body` on the connection within the deadline.
    package func read<T: Sendable>(_ body: @escaping @Sendable (JobQueue) throws -> T) -> Result<T, Unavailable> {
        perform(body)
    }

    /// Runs `body`, which changes the queue, within the deadline; the next snapshot is read anew
    /// (the page after an action shows it done).
    package func change<T: Sendable>(_ body: @escaping @Sendable (JobQueue) throws -> T) -> Result<T, Unavailable> {
        let result = perform(body)
        lock.withLock {
            changes += 1
            lastSnapshot = nil
        }
        return result
    }

    private func sharedSnapshot() -> Reading? {
        lock.lock()
        defer { lock.unlock() }
        guard let last = lastSnapshot, Date().timeIntervalSince(last.at) < freshness else { return nil }
        return last.reading
    }

    private func perform<T: Sendable>(_ body: @escaping @Sendable (JobQueue) throws -> T) -> Result<T, Unavailable> {
        let request = PendingRead<T>()
        let asked = Date()
        let lane = lock.withLock {
            // The least busy; the first of equals, so a quiet dashboard keeps to one connection.
            let lane = lanes.min { $0.waiting < $1.waiting }!
            lane.waiting += 1
            return lane
        }
        lane.work.async {
            defer { self.lock.withLock { lane.waiting -= 1 } }
            guard !request.isAbandoned else { return }
            request.finish(with: self.readNow(body, on: lane, for: ObjectIdentifier(request)))
        }
        if let result = request.wait(seconds: deadline) {
            return result
        }
        request.abandon()
        let reason = "no answer from the database within \(formatSeconds(deadline)) s"
        // Said before the stuck read is cut off, so the log's one line gives this reason, not
        // the lost connection that the cut makes.
        noteAvailability(problem: reason)
        cutOffStuckRead(on: lane, of: ObjectIdentifier(request), asked: asked)
        return .failure(Unavailable(reason))
    }

    /// Shuts the socket of the read that kept a request past the deadline (see the type's
    /// comment): the request's own read, or one that was already waiting when it asked. Not a
    /// read that started since (another request's, fresh): by their clocks alone the request's
    /// own read, started a moment after it asked, would look younger than the deadline.
    private func cutOffStuckRead(on lane: Lane, of request: ObjectIdentifier, asked: Date) {
        lock.lock()
        defer { lock.unlock() }
        guard let stuck = lane.inFlight, stuck.request == request || stuck.since <= asked else { return }
        PGConnection.interrupt(socket: stuck.socket)
    }

    private func noteAvailability(problem: String?) {
        lock.lock()
        let changed = available != (problem == nil)
        available = problem == nil
        lock.unlock()
        if changed { onChange(problem) }
    }

    /// On the lane's queue: connects if needed, runs `body`; a failure leaves no connection behind.
    private func readNow<T>(
        _ body: (JobQueue) throws -> T, on lane: Lane, for request: ObjectIdentifier
    ) -> Result<T, Unavailable> {
        do {
            // Cleared before the connection can be closed below: an interrupt never reaches a
            // socket number that another file has since been given.
            defer {
                lock.lock()
                lane.inFlight = nil
                lock.unlock()
            }
            let queue = try connected(lane, for: request)
            let value = try body(queue)
            lane.answeredAt = Date()
            noteAvailability(problem: nil)
            return .success(value)
        } catch {
            // A connection that failed mid-statement may be in any state: the next read makes a new one.
            lane.queue = nil
            let reason = (error as? Unavailable)?.reason ?? VMergeError.message(of: error)
            noteAvailability(problem: reason)
            return .failure(Unavailable(reason))
        }
    }

    /// The lane's connection, its socket marked as `request`'s (so a stuck read can be cut off).
    private func connected(_ lane: Lane, for request: ObjectIdentifier) throws -> JobQueue {
        if let queue = lane.queue, !queue.connection.isBroken {
            lock.withLock { lane.inFlight = (queue.connection.socket, Date(), request) }
            // Quiet for a while, it may have lost its server (a restart): asked first, so the
            // request meets a fresh connection instead of the old one's error.
            if Date().timeIntervalSince(lane.answeredAt) < 2 || (try? queue.connection.execute("SELECT 1")) != nil {
                lane.answeredAt = Date()
                return queue
            }
            lock.withLock { lane.inFlight = nil }
        }
        lane.queue = nil
        let connection = try PGConnection(conninfo, connectTimeout: connectTimeout)
        // The server gives up on a statement half a second before the request would: the read
        // then ends with that answer instead of running on after the request has gone.
        let limit = max(500, Int(deadline * 1000) - 500)
        try connection.execute("SELECT set_config('statement_timeout', $1, false)", ["\(limit)"])
        try QueueSchema.check(connection)
        let made = JobQueue(connection: connection)
        lane.queue = made
        lane.answeredAt = Date()
        lock.withLock { lane.inFlight = (connection.socket, Date(), request) }
        return made
    }
}

/// One request's read: its result when it comes, and whether the request still waits for it.
private final class PendingRead<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<T, QueueReader.Unavailable>?
    private var abandoned = false

    var isAbandoned: Bool {
        condition.lock()
        defer { condition.unlock() }
        return abandoned
    }

    func finish(with result: Result<T, QueueReader.Unavailable>) {
        condition.lock()
        self.result = result
        condition.broadcast()
        condition.unlock()
    }

    func wait(seconds: Double) -> Result<T, QueueReader.Unavailable>? {
        let limit = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while result == nil {
            if !condition.wait(until: limit) { break }
        }
        return result
    }

    func abandon() {
        condition.lock()
        abandoned = true
        condition.unlock()
    }
}
