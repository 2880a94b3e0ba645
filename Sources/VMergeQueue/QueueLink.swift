import Foundation
import VMergeCore
import VMergeJobs

/// A worker's connection to the queue that outlives the database going away (a restart, a cut
/// network): a call that fails drops the connection, the outage is said once, and the next call
/// is tried only after a backoff (0.2 s, doubling, at most 5 s), on a fresh connection. Nothing
/// here ever throws: the worker keeps its running jobs and what it has to record, and tries
/// again.
///
/// Used by one thread at a time (the worker's loop, or its heartbeat, which gets its own).
final class QueueLink: @unchecked Sendable {
    static let firstBackoff = 0.2
    static let longestBackoff = 5.0

    private let conninfo: String
    private var queue: JobQueue?
    private let clock = Stopwatch()
    private var backoff = 0.0
    private var nextTry = 0.0
    private let outage: Outage

    /// - Parameter queue: a connection made already (the worker's check at start), or nil.
    /// - Parameter outage: says an outage and its end once, for all the links that share it.
    init(conninfo: String, queue: JobQueue?, outage: Outage) {
        self.conninfo = conninfo
        self.queue = queue
        self.outage = outage
    }

    /// What the database refused for good (the error and its SQLSTATE): no call is tried after it.
    private(set) var refusal: (message: String, state: String)?

    /// Whether a call now would be tried (not waiting out a backoff).
    var isReady: Bool { clock.seconds >= nextTry }

    /// `body`'s result, or nil when the database cannot be reached now (or refused the call):
    /// then nothing is known of what the call did, and it is for the caller to try again later.
    func attempt<T>(_ body: (JobQueue) throws -> T) -> T? {
        guard isReady, refusal == nil else { return nil }
        do {
            let queue = try self.queue ?? JobQueue(connecting: conninfo)
            self.queue = queue
            let value = try body(queue)
            backoff = 0
            outage.ended(queue.connection.target)
            return value
        } catch {
            // The server answered, and no wait will change its answer (a role that may not write,
            // a schema changed under the worker): not an outage to wait out.
            if let state = queue?.connection.lastSQLState, PGConnection.isPermanent(state) {
                refusal = (VMergeError.message(of: error), state)
                queue = nil
                return nil
            }
            // A fresh connection next time: this one may be broken, or in a failed state.
            queue = nil
            outage.began(VMergeError.message(of: error))
            backoff = backoff == 0 ? QueueLink.firstBackoff : min(QueueLink.longestBackoff, backoff * 2)
            nextTry = clock.seconds + backoff
            return nil
        }
    }

    /// Whether the database is out of reach, shared by a worker's links so that an outage is
    /// said once, when a call first fails, and its end once, when a call first succeeds again.
    final class Outage: @unchecked Sendable {
        private let lock = NSLock()
        private var down = false
        private let log: DiagnosticSink

        init(log: DiagnosticSink) { self.log = log }

        func began(_ reason: String) {
            if change(to: true) {
                log.error("\(reason); trying again (running jobs go on)")
            }
        }

        func ended(_ target: String) {
            if change(to: false) { log("the database is back (\(target))") }
        }

        /// Sets `down`; whether it changed.
        private func change(to value: Bool) -> Bool {
            lock.withLock {
                defer { down = value }
                return down != value
            }
        }
    }
}
