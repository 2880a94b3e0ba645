import Foundation
import VMergeCore
import VMergeQueue

/// Reads the queue for a page or a scrape within a deadline, so that a database that is down,
/// slow or cut off never makes a request hang: past the deadline the answer is "unavailable"
/// (and the metrics say `vmerge_database_up 0`).
///
/// One read runs at a time, on a serial queue that alone touches the connection; a request that
/// arrives while one runs waits for that one's answer instead of starting another, so a flood of
/// requests costs the database one read at a time.
package final class QueueReader: @unchecked Sendable {
    package enum Reading: Sendable, Equatable {
        case snapshot(QueueSnapshot, latest: [QueuedJob])
        /// Why not: the database's message, or the deadline.
        case unavailable(String)
    }

    /// Jobs the page lists (the newest).
    package static let latestCount = 20

    private let conninfo: String
    private let deadline: Double
    private let connectTimeout: Int
    private let work = DispatchQueue(label: "vmerge.dashboard.database")
    /// Guards everything below.
    private let condition = NSCondition()
    private var started = 0
    private var finished = 0
    private var last: Reading = .unavailable("not read yet")
    /// Whether the last read that ended could read the queue (at start: assumed, so a first
    /// failure is said).
    private var available = true
    /// Told when reads start failing (with the reason) and when they succeed again (nil): an
    /// operator's log then has one line per change, not one per request.
    private let onChange: @Sendable (String?) -> Void
    /// Used on `work` only.
    private var queue: JobQueue?

    /// `deadline`: seconds a request waits for the database; a new connection gives up after
    /// `connectTimeout` (libpq's minimum is 2), and a statement after the deadline on the server.
    package init(
        conninfo: String, deadline: Double = 3, connectTimeout: Int = 2,
        onChange: @escaping @Sendable (String?) -> Void = { _ in }
    ) {
        self.conninfo = conninfo
        self.deadline = deadline
        self.connectTimeout = connectTimeout
        self.onChange = onChange
    }

    /// The queue now, or why it cannot be read; never later than the deadline.
    package func read() -> Reading {
        condition.lock()
        defer { condition.unlock() }
        if started == finished {
            started += 1
            let number = started
            work.async { self.finish(number, with: self.readNow()) }
        }
        let awaited = started
        let limit = Date().addingTimeInterval(deadline)
        while finished < awaited {
            if !condition.wait(until: limit) {
                return .unavailable("no answer from the database within \(formatSeconds(deadline)) s")
            }
        }
        return last
    }

    private func finish(_ number: Int, with reading: Reading) {
        var problem: String?
        if case let .unavailable(reason) = reading { problem = reason }
        condition.lock()
        last = reading
        finished = number
        let changed = available != (problem == nil)
        available = problem == nil
        condition.broadcast()
        condition.unlock()
        if changed { onChange(problem) }
    }

    private func readNow() -> Reading {
        do {
            if queue?.connection.isBroken ?? true {
                queue = nil
                let connection = try PGConnection(conninfo, connectTimeout: connectTimeout)
                // The server gives up on a statement half a second before the request would: the
                // read then ends with that answer instead of running on after the request has gone
                // (and a request just after it would share a stale read).
                let limit = max(500, Int(deadline * 1000) - 500)
                try connection.execute("SELECT set_config('statement_timeout', $1, false)", ["\(limit)"])
                try QueueSchema.check(connection)
                queue = JobQueue(connection: connection)
            }
            guard let queue else { return .unavailable("no connection") }
            return .snapshot(try queue.snapshot(), latest: try queue.latest(QueueReader.latestCount))
        } catch {
            // A connection that failed mid-statement may be in any state: the next read makes a new one.
            queue = nil
            return .unavailable(VMergeError.message(of: error))
        }
    }
}
