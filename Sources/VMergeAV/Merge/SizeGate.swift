import CFFmpeg
import VMergeCore

/// Holds encoded packets back until they form a whole stretch of pictures (with B-frames,
/// packets arrive out of display order), then lets the stretch and the audio under it into
/// the file only if the file then still fits the size limit. The first stretch that does not
/// fit ends the file, so it ends cleanly: every picture up to its end, none missing.
final class SizeGate {
    private let budget: SizeBudget
    private let frameRate: AVRational
    private var video: [(packet: Packet, timeBase: AVRational)] = []
    private var audio: [(packet: Packet, timeBase: AVRational)] = []
    /// Highest frame index held, and counts of what is in the file.
    private var highestIndex: Int64 = -1
    private var videoWritten: Int64 = 0
    private var keyframes: Int64 = 0
    private var audioWritten: Int64 = 0
    private var payload: Int64 = 0
    private(set) var isFull = false

    init(budget: SizeBudget, frameRate: AVRational) {
        self.budget = budget
        self.frameRate = frameRate
    }

    typealias Mux = (Packet, _ isVideo: Bool, _ timeBase: AVRational) throws -> Void

    /// Takes a packet just out of an encoder (its time base `timeBase`; video pts = frame index).
    func offer(_ packet: Packet, isVideo: Bool, timeBase: AVRational, _ mux: Mux) throws {
        guard !isFull else { return packet.unref() }
        let held = try Packet()
        av_packet_move_ref(held.pointer, packet.pointer)
        if isVideo {
            highestIndex = max(highestIndex, held.pointer.pointee.pts)
            video.append((held, timeBase))
            // Whole when every frame index up to the highest one is in the file or held.
            if highestIndex + 1 == videoWritten + Int64(video.count) { try admit(allAudio: false, mux) }
        } else {
            audio.append((held, timeBase))
        }
    }

    /// At the end: what is still held goes in if it fits.
    func flush(_ mux: Mux) throws {
        if !isFull { try admit(allAudio: true, mux) }
    }

    private func admit(allAudio: Bool, _ mux: Mux) throws {
        // Audio that ends by the end of these pictures goes with them.
        var audioCount = 0
        for (packet, timeBase) in audio {
            let p = packet.pointer.pointee
            let endsBy =
                allAudio
                || av_compare_ts(p.pts + p.duration, timeBase, highestIndex + 1, av_inv_q(frameRate)) <= 0
            if !endsBy { break }
            audioCount += 1
        }
        let bytes =
            video.reduce(Int64(0)) { $0 + Int64($1.packet.pointer.pointee.size) }
            + audio.prefix(audioCount).reduce(Int64(0)) { $0 + Int64($1.packet.pointer.pointee.size) }
        let newKeyframes = Int64(video.filter { $0.packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }.count)
        guard
            budget.fits(
                payload: payload + bytes, videoPackets: videoWritten + Int64(video.count),
                keyframes: keyframes + newKeyframes, audioPackets: audioWritten + Int64(audioCount))
        else {
            isFull = true
            video.removeAll()
            audio.removeAll()
            return
        }
        payload += bytes
        videoWritten += Int64(video.count)
        keyframes += newKeyframes
        audioWritten += Int64(audioCount)
        for (packet, timeBase) in video { try mux(packet, true, timeBase) }
        for (packet, timeBase) in audio.prefix(audioCount) { try mux(packet, false, timeBase) }
        video.removeAll()
        audio.removeFirst(audioCount)
    }
}
