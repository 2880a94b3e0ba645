internal import CAVUtil

/// SHA-256 (FIPS 180-4), for job keys, computed by libavutil (`av_sha`): Foundation has no digest on
/// Linux, no third-party package may be used, and vmerge links FFmpeg anyway. Not for secrets; only
/// to name a job's inputs and options stably (the job-key goldens hold the digests).
package enum SHA256 {
    /// The digest of `text`'s UTF-8 bytes, as 64 lowercase hex digits.
    package static func hex(_ text: String) -> String {
        digest(Array(text.utf8)).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    /// The 32 bytes of `message`'s digest.
    package static func digest(_ message: [UInt8]) -> [UInt8] {
        let context = SHA256Context()
        message.withUnsafeBufferPointer { context.add($0) }
        return context.finish()
    }
}

extension SHA256 {
    /// A digest made piece by piece (a file's part, read in blocks: an upload's checksum).
    package final class Running {
        private let context = SHA256Context()

        package init() {}

        package func add(_ bytes: UnsafeRawBufferPointer) {
            context.add(
                UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count))
        }

        /// The 32 bytes of the digest; the running state is spent.
        package func finish() -> [UInt8] { context.finish() }
    }
}

/// Owns an AVSHA context set up for SHA-256: one message's running state.
private final class SHA256Context {
    private let pointer: OpaquePointer

    init() {
        // av_sha_alloc fails only when memory is exhausted, where Swift's own allocations trap too;
        // a job key has no other way to be made.
        guard let context = av_sha_alloc() else { fatalError("out of memory for a SHA-256 context") }
        pointer = context
        // av_sha_init refuses only lengths it does not know (not 160, 224 or 256).
        let status = av_sha_init(pointer, 256)
        precondition(status == 0, "av_sha_init refused SHA-256 (\(status))")
    }

    deinit { av_free(UnsafeMutableRawPointer(pointer)) }

    func add(_ bytes: UnsafeBufferPointer<UInt8>) {
        // An empty message has no base address to hand over, and nothing to add.
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        av_sha_update(pointer, base, bytes.count)
    }

    func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        av_sha_final(pointer, &digest)
        return digest
    }
}
