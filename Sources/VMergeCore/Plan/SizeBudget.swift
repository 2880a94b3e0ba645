/// Whether a faststart MP4 stays within --max-size. The index (moov) is written last but put
/// first, so it must be counted before it exists: this bounds it from above by the most each
/// sample can add to its tables (sizes 4, chunk offsets 4 or 8 above 4 GiB, sample-to-chunk
/// 12, composition/decode times 8; keyframe list 4), plus a fixed allowance for the headers.
/// The real index is about half the bound (measured: 16 bytes per video and 14 per audio
/// sample, 1.6 KB of headers), so a file ends 1-2% under a limit of megabytes at phone-footage
/// bit rates (more, relatively, for tiny limits or static pictures), and never past it.
package struct SizeBudget: Sendable {
    package let limit: Int64
    /// Room kept for what the file holds besides the two streams (chapters).
    package let reserved: Int64
    /// File type, movie and track headers, edit lists, codec setup, metadata, mdat header.
    package static let fixedOverhead: Int64 = 4096

    package init(limit: Int64, reserved: Int64 = 0) {
        self.limit = limit
        self.reserved = max(0, reserved)
    }

    /// The most chapters add: the chapter track's headers, and for each chapter its title twice
    /// (a text sample and the Nero list) with their table entries.
    package static func allowance(for chapters: [Chapter]) -> Int64 {
        guard !chapters.isEmpty else { return 0 }
        return chapters.reduce(Int64(1024)) { $0.addingSaturating(Int64(2 * $1.title.utf8.count + 64)) }
    }

    package var perVideoPacket: Int64 { limit > Int64(UInt32.max) ? 32 : 28 }
    package var perAudioPacket: Int64 { limit > Int64(UInt32.max) ? 24 : 20 }
    package static let perKeyframe: Int64 = 4

    /// The largest the file can be with this much media data and these many samples.
    package func bound(payload: Int64, videoPackets: Int64, keyframes: Int64, audioPackets: Int64) -> Int64 {
        // Saturating: a --max-size near Int64.max must not make the bound itself overflow.
        SizeBudget.fixedOverhead.addingSaturating(reserved).addingSaturating(payload)
            .addingSaturating(videoPackets.multipliedSaturating(by: perVideoPacket))
            .addingSaturating(keyframes.multipliedSaturating(by: SizeBudget.perKeyframe))
            .addingSaturating(audioPackets.multipliedSaturating(by: perAudioPacket))
    }

    package func fits(payload: Int64, videoPackets: Int64, keyframes: Int64, audioPackets: Int64) -> Bool {
        bound(payload: payload, videoPackets: videoPackets, keyframes: keyframes, audioPackets: audioPackets) <= limit
    }
}
