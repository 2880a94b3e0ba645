import Foundation

/// Which addresses a URL from outside may make vmerge connect to: public ones only, unless the
/// operator listed the URL's prefix (`--allow-remote`). Loopback, private (RFC 1918, ULA), carrier
/// NAT, link-local (where cloud metadata services answer, 169.254.169.254), multicast and reserved
/// ranges are refused, and so is an IPv6 address that carries one of them (IPv4-mapped, NAT64).
enum AddressRule {
    static func isPublic(family: Int32, bytes: UnsafePointer<UInt8>) -> Bool {
        if family == AF_INET { return isPublic(v4: (bytes[0], bytes[1], bytes[2], bytes[3])) }
        guard family == AF_INET6 else { return false }
        let b = (0..<16).map { bytes[$0] }
        if b.allSatisfy({ $0 == 0 }) || (b[0..<15].allSatisfy { $0 == 0 } && b[15] == 1) { return false }  // :: and ::1
        if b[0] & 0xFE == 0xFC { return false }  // fc00::/7, unique local
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return false }  // fe80::/10, link-local
        if b[0] == 0xFF { return false }  // multicast
        // ::ffff:a.b.c.d (mapped) and 64:ff9b::a.b.c.d (NAT64) reach the IPv4 address inside.
        let mapped = b[0..<10].allSatisfy { $0 == 0 } && b[10] == 0xFF && b[11] == 0xFF
        let nat64 = b[0] == 0 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B && b[4..<12].allSatisfy { $0 == 0 }
        // ::a.b.c.d (IPv4-compatible, deprecated but still routed by some stacks) likewise.
        let compatible = b[0..<12].allSatisfy { $0 == 0 }
        if mapped || nat64 || compatible { return isPublic(v4: (b[12], b[13], b[14], b[15])) }
        return true
    }

    static func isPublic(v4 a: (UInt8, UInt8, UInt8, UInt8)) -> Bool {
        switch (a.0, a.1) {
        case (0, _), (10, _), (127, _): return false
        case (100, 64...127): return false  // carrier-grade NAT
        case (169, 254): return false  // link-local: cloud metadata services
        case (172, 16...31), (192, 168): return false
        case (192, 0) where a.2 == 0: return false  // IETF protocol assignments
        case (198, 18...19): return false  // benchmarking
        case (224...255, _): return false  // multicast, reserved, broadcast
        default: return true
        }
    }

    /// An address as it is written, for the message that refuses it.
    static func text(family: Int32, bytes: UnsafePointer<UInt8>) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(family, bytes, &buffer, socklen_t(buffer.count)) != nil else { return "an address" }
        return String(cString: buffer)
    }
}
