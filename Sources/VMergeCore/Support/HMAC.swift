internal import CAVUtil

/// HMAC-SHA256 (RFC 2104), computed by libavutil (`av_hmac`): the webhooks' signatures (Standard
/// Webhooks' `v1`). vmerge carries no digest code of its own.
package enum HMACSHA256 {
    /// The 32 bytes of `message`'s MAC under `key`.
    package static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        // av_hmac_alloc fails only when memory is exhausted, where Swift's own allocations trap too.
        guard let context = av_hmac_alloc(AV_HMAC_SHA256) else { fatalError("out of memory for an HMAC context") }
        defer { av_hmac_free(context) }
        var out = [UInt8](repeating: 0, count: 32)
        let written = key.withUnsafeBufferPointer { key in
            message.withUnsafeBufferPointer { message in
                av_hmac_calc(
                    context, message.baseAddress, UInt32(message.count), key.baseAddress, UInt32(key.count), &out,
                    UInt32(out.count))
            }
        }
        precondition(written == 32, "av_hmac_calc wrote \(written) bytes, not 32")
        return out
    }
}
