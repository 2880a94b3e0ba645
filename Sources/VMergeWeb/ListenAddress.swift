import CMicroHTTPD
import Foundation
import VMergeCore

/// Where a server listens: a numeric IPv4 or IPv6 address and a port, as `--listen` reads it
/// (`127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:9000`; port 0 takes any free port), or a Unix
/// socket (`unix:/run/vmerge/dashboard.sock`). Host names are refused rather than looked up:
/// which address a name resolves to decides who can reach the server, and that should be
/// visible in the command.
package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    package enum Family: Sendable, Equatable { case ipv4, ipv6, unix }

    /// The numeric address, or the Unix socket's path.
    package let host: String
    package private(set) var port: UInt16
    package let family: Family
    /// The address in network order (4 or 16 bytes), as `host` was read once; none for a socket.
    let bytes: [UInt8]

    package init(host: String, port: UInt16) throws(ListenAddress.Refusal) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            (family, bytes) = (.ipv4, withUnsafeBytes(of: v4) { Array($0) })
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            (family, bytes) = (.ipv6, withUnsafeBytes(of: v6) { Array($0) })
        } else {
            throw Refusal(reason: "'\(host)' is not a numeric IPv4 or IPv6 address")
        }
        self.host = host
        self.port = port
    }

    /// A Unix socket at `path`: who may connect is decided by its permissions (0600 when made:
    /// its owner; chmod or a group folder widens it), not by an address.
    package init(unixSocket path: String) throws(ListenAddress.Refusal) {
        if path.isEmpty { throw Refusal(reason: "no path: write unix:/path/to/dashboard.sock") }
        // In the path's bytes on disk: a byte of a non-UTF-8 name is one byte, not its escape.
        let onDisk = FileName.bytes(of: path)
        if onDisk.count > vm_unix_path_max() || onDisk.contains(0) {
            throw Refusal(reason: "a Unix socket's path is at most \(vm_unix_path_max()) bytes")
        }
        (host, port, family, bytes) = (path, 0, .unix, [])
    }

    /// Why a `--listen` value was refused (the command line words it as a usage error).
    package struct Refusal: Error, Sendable, Equatable {
        package let reason: String
    }

    /// `text` as `host:port`, the host of an IPv6 address in brackets; with `unixSockets`,
    /// `unix:PATH` too.
    package static func parse(
        _ text: String, unixSockets: Bool = false
    ) throws(ListenAddress.Refusal) -> ListenAddress {
        if unixSockets && text.hasPrefix("unix:") { return try ListenAddress(unixSocket: String(text.dropFirst(5))) }
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw Refusal(reason: "an IPv6 address is written [address]:port, e.g. [::1]:8080")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw Refusal(reason: "no port: write address:port") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                throw Refusal(reason: "an IPv6 address is written [address]:port, e.g. [::1]:8080")
            }
        }
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
            let port = UInt16(portText)
        else {
            throw Refusal(reason: "the port must be a number from 0 to 65535")
        }
        if host.isEmpty { throw Refusal(reason: "no address: write 127.0.0.1:\(port) for this machine only") }
        let address = try ListenAddress(host: String(host), port: port)
        if text.hasPrefix("[") && address.family != .ipv6 {
            throw Refusal(reason: "brackets hold an IPv6 address; write \(host):\(port)")
        }
        return address
    }

    /// Reachable from this machine only: a Unix socket, or a loopback address.
    package var isLocal: Bool { family == .unix || isLoopback }

    /// A loopback address (127.0.0.0/8, ::1, or an IPv4 loopback mapped into IPv6).
    package var isLoopback: Bool {
        switch family {
        case .unix: return false
        case .ipv4: return bytes[0] == 127
        case .ipv6:
            let loopback = bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
            let mapped =
                bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
            return loopback || mapped
        }
    }

    package var description: String {
        switch family {
        case .ipv4: return "\(host):\(port)"
        case .ipv6: return "[\(host)]:\(port)"
        case .unix: return "unix:\(host)"
        }
    }

    /// Where a browser or curl reaches it: "http://127.0.0.1:8080/", or for a Unix socket the
    /// address curl --unix-socket takes with its path.
    package var url: String {
        family == .unix ? "http://localhost/ (curl --unix-socket \(host))" : "http://\(description)/"
    }

    /// This address with another port (the one the system gave for port 0).
    func with(port: UInt16) -> ListenAddress {
        var address = self
        address.port = port
        return address
    }
}

/// A listening TCP socket, bound to a `ListenAddress`: made here rather than by libmicrohttpd so
/// that a refused bind names its reason (address in use, not this machine's, a privileged port).
enum ListeningSocket {
    /// A socket bound to `address` and listening, non-blocking and closed on exec; the address
    /// with the port the system gave when `address.port` is 0.
    static func open(_ address: ListenAddress, backlog: Int32 = 64) throws -> (fd: Int32, bound: ListenAddress) {
        if address.family == .unix { return (try openUnix(address, backlog: backlog), address) }
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let fd = vm_stream_socket(domain)
        guard fd >= 0 else { throw failure(address, "cannot make a socket") }
        do {
            var yes: Int32 = 1
            // A restarted server may bind while the old one's connections are in TIME_WAIT.
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            if address.family == .ipv6 {
                // [::]:8080 means IPv6 only, as written; 0.0.0.0 is asked for on its own.
                setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
            }
            try bindAddress(fd, address)
            guard listen(fd, backlog) == 0 else { throw failure(address, "cannot listen") }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return (fd, address.with(port: try boundPort(fd, address)))
        } catch {
            close(fd)
            throw error
        }
    }

    /// A Unix socket made at the address's path, 0600, listening. A socket left there by a
    /// server that is gone (nothing answers on it) is replaced; anything else is not: a file, a
    /// folder, a link or a live socket stops the server instead (bind itself never replaces a
    /// name, so nothing that appears meanwhile is either).
    private static func openUnix(_ address: ListenAddress, backlog: Int32) throws -> Int32 {
        let path = address.host
        var info = stat()
        if POSIX.lstat(FileName(path), &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK else {
                throw VMergeError.io(file: path, message: "exists and is not a socket; not replaced")
            }
            guard !answers(path) else {
                throw VMergeError.io(file: path, message: "another server listens on this socket")
            }
            _ = POSIX.unlink(FileName(path))
        }
        let fd = vm_stream_socket(AF_UNIX)
        guard fd >= 0 else { throw failure(address, "cannot make a socket") }
        do {
            guard POSIX.named(FileName(path), failure: -1, { vm_bind_unix(fd, $0) }) == 0 else {
                throw failure(address, "cannot listen")
            }
            // Before listen: until then no one can connect, so no one connects before the mode is set.
            guard POSIX.chmod(FileName(path), 0o600) == 0 else {
                let error = failure(address, "cannot set its permissions")
                _ = POSIX.unlink(FileName(path))
                throw error
            }
            guard listen(fd, backlog) == 0 else {
                let error = failure(address, "cannot listen")
                _ = POSIX.unlink(FileName(path))
                throw error
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Whether a server answers on the Unix socket at `path`.
    private static func answers(_ path: String) -> Bool {
        let probe = vm_stream_socket(AF_UNIX)
        guard probe >= 0 else { return true }
        defer { close(probe) }
        return POSIX.named(FileName(path), failure: -1) { vm_connect_unix(probe, $0) } == 0 || errno != ECONNREFUSED
    }

    /// The socket file a Unix socket address has just been bound to; nil for an IP address.
    static func identity(_ address: ListenAddress) -> FileID? {
        guard address.family == .unix else { return nil }
        var info = stat()
        return POSIX.lstat(FileName(address.host), &info) == 0 ? FileID(info) : nil
    }

    /// Removes the socket file `made` once its server has stopped, only if it is still what is
    /// at the path (a file or another server's socket put in its place since is left).
    static func remove(_ address: ListenAddress, made: FileID?) {
        guard address.family == .unix, let made else { return }
        var info = stat()
        if POSIX.lstat(FileName(address.host), &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK,
            FileID(info).device == made.device, FileID(info).inode == made.inode
        {
            _ = POSIX.unlink(FileName(address.host))
        }
    }

    private static func bindAddress(_ fd: Int32, _ address: ListenAddress) throws {
        var storage = sockaddr_storage()
        let length: Int
        switch address.family {
        case .ipv4:
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = address.port.bigEndian
            withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyBytes(from: address.bytes) }
            withUnsafeBytes(of: v4) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) } }
            length = MemoryLayout<sockaddr_in>.size
        case .ipv6:
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = address.port.bigEndian
            withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyBytes(from: address.bytes) }
            withUnsafeBytes(of: v6) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) } }
            length = MemoryLayout<sockaddr_in6>.size
        case .unix: throw failure(address, "not an IP address")
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        guard bound == 0 else { throw failure(address, "cannot listen") }
    }

    private static func boundPort(_ fd: Int32, _ address: ListenAddress) throws -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard found == 0 else { throw failure(address, "cannot read the bound port") }
        return withUnsafeBytes(of: storage) { bytes in
            // sin_port and sin6_port sit at the same offset, after the family.
            UInt16(bigEndian: bytes.load(fromByteOffset: 2, as: UInt16.self))
        }
    }

    /// "127.0.0.1:8080: cannot listen: Address already in use".
    private static func failure(_ address: ListenAddress, _ what: String) -> VMergeError {
        .io(file: address.description, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
