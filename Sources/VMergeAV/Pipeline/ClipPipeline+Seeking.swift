import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Reading from the trim start: seeking and checking where the seek landed, and knowing when a
/// clip that ends early has been read far enough.
extension ClipPipeline {
    /// With a trim, reading starts at the last keyframe before the trim start instead of at the
    /// top, so what is cut away is not decoded: 0.1 s before it, so the sound decoder has warmed
    /// up by the start (AAC frames overlap; the first one after a jump is incomplete).
    ///
    /// Where a seek lands is checked, not trusted: a demuxer may land on any packet (MPEG-TS seeks
    /// by timestamp), flag every packet a keyframe (an MP4 without a sync-sample table), or an
    /// index may be off. So the first video packet read must be flagged a keyframe (video packets
    /// before one are dropped: nothing can decode them), and the first picture a decoder of its
    /// own makes from there must be a keyframe itself, at or before the start; reading then starts
    /// at that picture's packet. Otherwise it goes back 8 times further, and in the end to the
    /// top (so streams whose pictures recover gradually, intra refresh, are read from the top).
    /// Whatever comes before the start is decoded and dropped, so where reading starts changes
    /// the time taken, never the output.
    func seekToTrimStart() throws {
        let trim = planned.trimStartMicros
        // Without a start time, time zero is the first picture decoded: read from the top.
        guard trim > 0, clock.isStarted, context.hooks.seeksToTrims else { return }
        var back: Int64 = 100_000
        // Whether reading has moved off the top of the file (a seek took, packets were read).
        var displaced = false
        while true {
            let target = trim - back
            guard target > 0,
                input.seek(
                    stream: videoIndex,
                    toKeyframeAtOrBefore: clock.ticks(atClipMicros: target))
            else {
                // From the top: the earliest time there is, which every seeker takes as "first keyframe";
                // a container that cannot seek at all is still there.
                lookahead = []
                if displaced && !input.seek(stream: videoIndex, toKeyframeAtOrBefore: Int64.min / 2) {
                    throw VMergeError.invalidInput(file: path, reason: "cannot go back to its start to trim it")
                }
                return
            }
            displaced = true
            if try landedBeforeTrimStart() { return }
            back = back.multipliedSaturating(by: 8)
        }
    }

    /// After a seek: reads into `lookahead` up to the first video keyframe and on until a decoder
    /// makes its first picture; true when that picture is a keyframe at or before the trim start
    /// (the video packets before the picture's own are dropped from `lookahead`). The decoder is
    /// given the packets with their discard flag cleared, so pictures an edit list hides (the
    /// keyframe before a clip's first shown picture) come out too.
    func landedBeforeTrimStart() throws -> Bool {
        let limit = 4096
        guard let keyframe = try readToFirstKeyframe(limit: limit), keyframe != noPTS,
            clock.clipMicros(keyframe) <= planned.trimStartMicros
        else { return false }

        // One thread: the first picture comes out without frame threading's delay.
        let decoder = try Decoder(stream: try input.stream(Int(videoIndex)), file: path, threads: 1)
        let picture = try Frame()
        var sent = lookahead.firstIndex { $0.pointer.pointee.stream_index == videoIndex } ?? lookahead.count
        var ended = false
        while true {
            let received: Outcome
            do { received = try decoder.receive(picture) } catch VMergeError.ffmpeg { received = .again }
            if received == .ok {
                var ts = picture.pointer.pointee.best_effort_timestamp
                if ts == noPTS { ts = picture.pointer.pointee.pts }
                guard ts != noPTS, vm_frame_is_key(picture.pointer) != 0, clock.clipMicros(ts) <= planned.trimStartMicros
                else { return false }
                startAtPacket(ofPicture: ts)
                return true
            }
            if received == .endOfStream || ended && received == .again { return false }
            // Feed the next video packet, reading more when the held ones run out.
            while sent < lookahead.count && lookahead[sent].pointer.pointee.stream_index != videoIndex { sent += 1 }
            if sent == lookahead.count {
                guard lookahead.count < limit * 2 else { return false }
                let held = try Packet()
                if try input.read(into: held) {
                    lookahead.append(held)
                    continue
                }
                ended = true
                _ = try decoder.send(nil)
                continue
            }
            do {
                // A full decoder takes the packet once a picture has been taken out; one that
                // neither takes packets nor gives pictures is no start.
                let unhidden = try Packet()
                try check(av_packet_ref(unhidden.pointer, lookahead[sent].pointer), "reading", file: path)
                unhidden.pointer.pointee.flags &= ~AV_PKT_FLAG_DISCARD
                if try decoder.send(unhidden) == .again {
                    if received == .again { return false }
                    continue
                }
            } catch VMergeError.ffmpeg {}  // damaged: on to the next
            sent += 1
        }
    }

    /// Reads into `lookahead` (emptied first) up to the first video keyframe, whose time it
    /// returns; nil when the file or `limit` packets end first. Video packets before it are not
    /// kept: nothing can be decoded from them.
    private func readToFirstKeyframe(limit: Int) throws -> Int64? {
        lookahead = []
        while lookahead.count < limit {
            let held = try Packet()
            guard try input.read(into: held) else { return nil }
            let p = held.pointer.pointee
            if p.stream_index == videoIndex {
                guard p.flags & AV_PKT_FLAG_KEY != 0 else { continue }
                lookahead.append(held)
                return p.pts != noPTS ? p.pts : p.dts
            }
            lookahead.append(held)
        }
        return nil
    }

    /// Drops the video packets held before the one of the picture at `ts` (a keyframe the decoder
    /// can start on); the sound held with them stays.
    private func startAtPacket(ofPicture ts: Int64) {
        guard let own = lookahead.firstIndex(where: {
            $0.pointer.pointee.stream_index == videoIndex && $0.pointer.pointee.pts == ts
        })
        else { return }
        var index = -1
        lookahead.removeAll { packet in
            index += 1
            return index < own && packet.pointer.pointee.stream_index == videoIndex
        }
    }

    /// Whether a clip that ends early (trimmed, or cut by --max-duration) has been read far
    /// enough: a packet decoded after this one is shown after it, so once the decode time passes
    /// the end (plus a second for audio interleaved behind the video), nothing further is used.
    func isPastCut(_ packet: Packet) -> Bool {
        guard planned.endsEarly, clock.isStarted else { return false }
        let dts = packet.pointer.pointee.dts
        guard dts != noPTS else { return false }
        return clock.clipMicros(dts) > planned.trimStartMicros.addingSaturating(planned.durationMicros).addingSaturating(1_000_000)
    }
}
