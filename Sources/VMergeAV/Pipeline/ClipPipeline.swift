import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Demux -> decode for one kept clip, feeding the writer through a queue: reading (from the
/// keyframe before a trim: +Seeking), which packets need decoding (`PictureSkipping`), decoding
/// with damage counted; each decoded picture and sound block is timed on the clip's clock and
/// handed to its placement on the output (`VideoPlacer`, `AudioPlacer`).
final class ClipPipeline {
    let planned: PlannedClip
    let timeline: Timeline
    let sink: FrameQueue
    let input: InputFile
    let path: String

    let videoIndex: Int32
    let videoDecoder: Decoder
    /// Which video packets need not be decoded, holding them until that is known (nil: every
    /// packet is decoded as read).
    var held: HeldPackets?
    /// Video packets read, and those left undecoded.
    private(set) var decodeCount = DecodeCount()
    /// The video's timestamps on the clip's clock and the output's frames.
    var clock: VideoClock
    /// Where the clip's pictures go on the output.
    let video: VideoPlacer
    /// Packets read while finding where to start reading (a trim), handled before the rest.
    var lookahead: [Packet] = []

    let audioIndex: Int32
    let audioDecoder: Decoder?
    let audioTimeBase: AVRational
    /// Where the clip's sound goes on the output (silence when it has none).
    let audio: AudioPlacer

    let packet: Packet
    let frame: Frame
    let diagnostics: DiagnosticSink
    /// Packets the decoders rejected as corrupt; skipped, as players do, and reported once.
    var corruptPackets = 0

    let options: MergeOptions
    let context: MergeContext
    var cancel: CancelToken? { context.cancel }

    init(
        _ planned: PlannedClip, options: MergeOptions, context: MergeContext = MergeContext(), sink: FrameQueue,
        diagnostics: DiagnosticSink
    ) throws {
        self.context = context
        self.planned = planned
        self.diagnostics = diagnostics
        self.options = options
        timeline = options.timeline
        self.sink = sink
        path = planned.clip.path
        // Probing analysed this file already; a QuickTime/MP4 header (stsd) holds all the
        // decoders need, so only other containers are analysed again.
        input = try InputFile.open(
            path, analyse: !planned.clip.container.hasPrefix("mov,"), context: context, expected: planned.clip.fileID)
        let video = planned.clip.video
        guard video.streamIndex >= 0, video.streamIndex < input.streamCount,
            let index32 = Int32(exactly: video.streamIndex),
            try input.parameters(ofStream: video.streamIndex).codec_type == AVMEDIA_TYPE_VIDEO
        else {
            throw VMergeError.invalidInput(file: path, reason: "changed since it was probed")
        }
        videoIndex = index32
        let videoStream = try input.stream(video.streamIndex)
        videoDecoder = try Decoder(
            stream: videoStream, file: path, undeblocked: planned.undeblocked,
            threads: context.hooks.decoderThreads ?? Decoder.budgetThreads)
        clock = VideoClock(stream: videoStream, planned: planned, timeline: timeline)
        if context.hooks.skipsUnshownPictures, let skipping = PictureSkipping(stream: videoStream) {
            held = HeldPackets(skipping, videoIndex: index32)
        }

        if let audio = planned.clip.audio, audio.streamIndex >= 0, audio.streamIndex < input.streamCount,
            let index32 = Int32(exactly: audio.streamIndex)
        {
            audioIndex = index32
            let audioStream = try input.stream(audio.streamIndex)
            audioDecoder = try Decoder(stream: audioStream, file: path)
            audioTimeBase = audioStream.pointee.time_base
        } else {
            audioIndex = -1
            audioDecoder = nil
            audioTimeBase = AVRational(num: 1, den: 1)
        }
        try input.keepOnly(streams: Set([Int(videoIndex), Int(audioIndex)].filter { $0 >= 0 }))
        packet = try Packet()
        frame = try Frame()
        audio = try AudioPlacer(
            planned, timeline: timeline, sampleRate: options.sampleRate, timeBase: audioTimeBase, sink: sink, file: path
        )
        self.video = try VideoPlacer(
            planned, options: options, sink: sink, silence: audioDecoder == nil ? audio : nil, file: path)
    }

    /// Runs the clip to its end.
    func run() throws {
        try seekToTrimStart()
        var reading = true
        for held in lookahead where reading { reading = try take(held) }
        lookahead = []
        while reading, try input.read(into: packet) {
            defer { packet.unref() }
            reading = try take(packet)
        }
        if reading { _ = try handlePending(ended: true) }
        held?.clear()
        try decode(nil, with: videoDecoder, handle: placeVideo)
        if let audioDecoder { try decode(nil, with: audioDecoder, handle: placeAudio) }
        // A clip whose every picture lies before its trim start shows the last of them.
        try video.showEarlyPicture()
        // A file cut short under us ends its reading early; without this the clip would be padded
        // out with its last picture. (A deleted file stays readable through the open handle.)
        if planned.clip.fileSize > 0, let size = input.currentSize, size < planned.clip.fileSize {
            throw VMergeError.invalidInput(
                file: path, reason: "file shrank from \(planned.clip.fileSize) to \(size) bytes while being read")
        }

        try video.finish()
        try audio.finish()
        decodeCount.corrupt = corruptPackets
        if corruptPackets > 0 {
            diagnostics(
                Diagnostic(
                    .warning, file: path, "skipped \(corruptPackets) corrupt packet\(corruptPackets == 1 ? "" : "s")"))
        }
    }

    /// Handles a packet read from the file (`packet` may be reused after); false once nothing
    /// further in the file is used. With skipping, video packets wait (with whatever was read
    /// after them) until their picture's neighbours are known.
    func take(_ packet: Packet) throws -> Bool {
        guard held != nil else { return try handle(packet, skip: false) }
        try held?.add(packet)
        return try handlePending(ended: false)
    }

    /// Handles the held packets in order while the first one can be decided; at the end of
    /// the file (`ended`) all of them.
    func handlePending(ended: Bool) throws -> Bool {
        while let (packet, skip) = held?.next(ended: ended, canDecide: clock.isStarted, shows: showsPicture) {
            guard try handle(packet, skip: skip) else { return false }
            packet.unref()
        }
        return true
    }

    /// Decodes one packet, or with `skip` (a video packet whose picture is not shown and that
    /// nothing references) only counts it; false once nothing further in the file is used.
    func handle(_ packet: Packet, skip: Bool) throws -> Bool {
        try cancel.check()
        let index = packet.pointer.pointee.stream_index
        if index == videoIndex && isPastCut(packet) { return false }
        if index == videoIndex {
            decodeCount.videoPackets += 1
            if skip {
                decodeCount.skipped += 1
                return true
            }
            try decode(packet, with: videoDecoder, handle: placeVideo)
        } else if index == audioIndex, let audioDecoder {
            try decode(packet, with: audioDecoder, handle: placeAudio)
        }
        return true
    }

    /// A decoded picture, timed on the clip's own clock, to its placement on the output.
    func placeVideo() throws {
        let f = frame.pointer
        var ts = f.pointee.best_effort_timestamp
        if ts == noPTS { ts = f.pointee.pts }
        clock.startIfNeeded(at: ts)
        // Time zero is the trim start; frames without any timestamp follow the previous one.
        try video.place(
            frame, relative: ts == noPTS ? nil : clock.trimmedMicros(ts),
            slot: ts == noPTS ? nil : clock.outputFrame(of: ts))
    }

    /// A decoded sound block to its placement, timed from the clip's time zero.
    func placeAudio() throws { try audio.place(frame, videoStartMicros: clock.startMicros) }

    /// Whether the output shows the picture with this timestamp, given its neighbours' in
    /// presentation order (none before: it may open the clip; none after: it may fill its end).
    func showsPicture(_ pts: Int64, _ around: (previous: Int64?, next: Int64?)) -> Bool {
        let at = { (ts: Int64) in self.clock.trimmedMicros(ts) }
        guard let next = around.next else { return true }
        return planned.showsPicture(
            at: at(pts), previous: around.previous.map(at) ?? Int64.min, next: at(next),
            slot: clock.outputFrame(of: pts), nextSlot: clock.outputFrame(of: next), on: timeline)
    }

    /// Counts a corrupt packet, or with --strict stops the run on it.
    func damaged(_ packet: Packet, _ message: String) throws {
        corruptPackets += 1
        guard options.strict else { return }
        let index = packet.pointer.pointee.stream_index
        let timeBase = index == videoIndex ? clock.timeBase : audioTimeBase
        let seconds =
            Double(max(0, packet.pointer.pointee.pts == noPTS ? 0 : packet.pointer.pointee.pts)) * av_q2d(timeBase)
        throw VMergeError.invalidInput(
            file: path,
            reason:
                "corrupt packet near \(formatSeconds(seconds)) s (\(message)); \(context.naming.word("strict")) stops here"
        )
    }

    func decode(_ packet: Packet?, with decoder: Decoder, handle: () throws -> Void) throws {
        var sent: Outcome
        do {
            sent = try decoder.send(packet)
        } catch VMergeError.ffmpeg(_, _, let message) where packet != nil {
            // A damaged packet: conceal it (the decoder repeats or skips) and go on.
            try damaged(packet!, message)
            return
        }
        while true {
            let received: Outcome
            do {
                received = try decoder.receive(frame)
            } catch VMergeError.ffmpeg(_, _, let message) where packet != nil {
                try damaged(packet!, message)  // frame-threaded decoders report damage here
                return
            }
            switch received {
            case .ok:
                try handle()
                frame.unref()
            case .endOfStream:
                return
            case .again:
                // A full decoder refuses a packet until drained; it has been drained now.
                guard sent == .again, let packet else { return }
                sent = try decoder.send(packet)
                if sent == .again { return }
            }
        }
    }
}
