import CMicroHTTPD
import Foundation

/// The connections each client may hold at once, kept here rather than by libmicrohttpd: its
/// per-IP limit counts every address apart, and every address of 127.0.0.0/8 (and ::1) is this
/// machine, so one local user binding 127.0.0.2, 127.0.0.3... had a budget per address and could
/// take every connection. Here all loopback clients (IPv4, IPv6, IPv4 mapped into IPv6) share one
/// budget, the clients of a Unix socket another (who may connect there is decided by the
/// socket's permissions), and every other address has its own.
///
/// A connection is counted from the moment it is admitted: reserved by the accept policy, then
/// held from libmicrohttpd's "started" notice to its "closed" one; a new one is refused when its
/// client's held and reserved connections reach the cap. The "started" notice may come well after
/// the accept (another thread, a loaded machine): counting from it alone let a burst of 40
/// connections from one client all pass a cap of 32 under the address sanitizer. A reservation
/// that never starts (refused by the server for another reason) lapses after a second, so none is
/// lost.
final class ConnectionBudget: @unchecked Sendable {
    /// Whose budget a connection counts against.
    enum Client: Hashable, Sendable {
        case loopback
        case unixSocket
        case address([UInt8])
        /// A family libmicrohttpd did not say: one budget for all of them.
        case unknown
    }

    let perClient: Int
    private let lock = NSLock()
    private var held: [Client: Int] = [:]
    private var clients: [OpaquePointer: Client] = [:]
    /// Admitted but not yet started, each with when it was admitted.
    private var reserved: [Client: [Date]] = [:]
    /// How long an admitted connection is counted before its "started" notice.
    static let reservationLapse = 1.0

    init(perClient: Int) { self.perClient = perClient }

    /// The client of an address of `family` (AF_INET, AF_INET6, AF_UNIX) with `bytes`.
    static func client(family: Int32, bytes: [UInt8]) -> Client {
        switch family {
        case AF_INET where bytes.count == 4:
            return bytes[0] == 127 ? .loopback : .address(bytes)
        case AF_INET6 where bytes.count == 16:
            if bytes.prefix(15).allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return .loopback }
            // ::ffff:a.b.c.d is the IPv4 client a.b.c.d, whichever socket it came in on.
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return client(family: AF_INET, bytes: Array(bytes[12...]))
            }
            return .address(bytes)
        case AF_UNIX: return .unixSocket
        default: return .unknown
        }
    }

    /// Whether `client` may have one more connection.
    /// Whether `client` may have one more connection; if so, one is reserved for it.
    func admits(_ client: Client) -> Bool {
        let now = Date()
        return lock.withLock {
            var pending = (reserved[client] ?? []).filter { now.timeIntervalSince($0) < Self.reservationLapse }
            guard (held[client] ?? 0) + pending.count < perClient else {
                reserved[client] = pending.isEmpty ? nil : pending
                return false
            }
            pending.append(now)
            reserved[client] = pending
            return true
        }
    }

    func started(_ connection: OpaquePointer, client: Client) {
        lock.withLock {
            clients[connection] = client
            held[client, default: 0] += 1
            if var pending = reserved[client], !pending.isEmpty {
                pending.removeFirst()
                reserved[client] = pending.isEmpty ? nil : pending
            }
        }
    }

    func closed(_ connection: OpaquePointer) {
        lock.withLock {
            guard let client = clients.removeValue(forKey: connection) else { return }
            held[client, default: 1] -= 1
            if held[client] == 0 { held[client] = nil }
        }
    }

    /// The client of `connection`, as libmicrohttpd has its address.
    static func client(of connection: OpaquePointer) -> Client {
        var bytes = [UInt8](repeating: 0, count: 16)
        let family = vm_mhd_client_address(connection, &bytes)
        return client(family: family, bytes: family == AF_INET ? Array(bytes.prefix(4)) : bytes)
    }
}
