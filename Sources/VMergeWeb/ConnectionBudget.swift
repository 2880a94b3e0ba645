import CMicroHTTPD
import Foundation

/// The connections each client may hold at once, kept here rather than by libmicrohttpd: its
/// per-IP limit counts every address apart, and every address of 127.0.0.0/8 (and ::1) is this
/// machine, so one local user binding 127.0.0.2, 127.0.0.3... had a budget per address and could
/// take every connection. Here all loopback clients (IPv4, IPv6, IPv4 mapped into IPv6) share one
/// budget, the clients of a Unix socket another (who may connect there is decided by the
/// socket's permissions), and every other address has its own.
///
/// A connection is counted from libmicrohttpd's "started" notice to its "closed" one, and a new
/// one refused when its client's count is at the cap; connections accepted at the same instant
/// by several of the server's threads may pass the cap by at most the number of threads, never
/// more, and a connection that failed before it started is never counted (so none is lost).
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
    func admits(_ client: Client) -> Bool {
        lock.withLock { (held[client] ?? 0) < perClient }
    }

    func started(_ connection: OpaquePointer, client: Client) {
        lock.withLock {
            clients[connection] = client
            held[client, default: 0] += 1
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
