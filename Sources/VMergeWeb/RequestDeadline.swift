import CMicroHTTPD
import Foundation

/// A deadline for each whole request, which libmicrohttpd does not keep: its timeout closes a
/// connection only when it sends nothing at all, so a client that sends its header a byte every
/// few seconds would hold its connection for as long as it liked, and enough of them every
/// connection the server may have. Each connection's current request (from the connection's
/// start, or from the end of its previous request) must be answered within `seconds`; past that a
/// timer shuts its socket down, which libmicrohttpd then sees as the client gone and closes.
///
/// Sockets are tracked from libmicrohttpd's "started" to its "closed" notice, which comes before
/// it closes the socket; both, and the shutdown, happen under one lock, so a shutdown never
/// reaches a socket number another connection has since been given.
final class RequestDeadline: @unchecked Sendable {
    private struct Entry {
        var socket: Int32
        var since: Date
        var answered: Bool
    }

    let seconds: Double
    private let lock = NSLock()
    private var entries: [OpaquePointer: Entry] = [:]
    private let timer: DispatchSourceTimer

    init(seconds: Double) {
        self.seconds = seconds
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "vmerge.http.deadline"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.cutOffLate() }
        timer.resume()
    }

    deinit { timer.cancel() }

    func started(_ connection: OpaquePointer) {
        let socket = vm_mhd_connection_fd(connection)
        lock.withLock { entries[connection] = Entry(socket: socket, since: Date(), answered: false) }
    }

    func closed(_ connection: OpaquePointer) {
        _ = lock.withLock { entries.removeValue(forKey: connection) }
    }

    /// The request has its response: from here libmicrohttpd's own timeout keeps it moving.
    func answered(_ connection: OpaquePointer) {
        lock.withLock { entries[connection]?.answered = true }
    }

    /// The request ended: the next on the same connection has its own deadline.
    func requestEnded(_ connection: OpaquePointer) {
        lock.withLock {
            entries[connection]?.since = Date()
            entries[connection]?.answered = false
        }
    }

    private func cutOffLate() {
        let now = Date()
        lock.withLock {
            for (connection, entry) in entries
            where !entry.answered && entry.socket >= 0 && now.timeIntervalSince(entry.since) > seconds {
                _ = shutdown(entry.socket, Int32(SHUT_RDWR))
                entries[connection]?.answered = true
            }
        }
    }
}
