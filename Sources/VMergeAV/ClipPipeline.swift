import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Demux -> decode -> filter for one kept clip, feeding the writer through a queue. The clip's video is
/// mapped onto the output timeline at its planned start; the fps filter, closed at the
/// clip's planned end, makes its frames tile the output frame grid exactly. Its audio is
/// placed sample-exactly inside [start, end) and padded with silence where it falls short.
final class ClipPipeline {
    private let planned: PlannedClip
    private let timeline: Timeline
    private let sink: FrameQueue
    /// The next output frame index this clip will deliver (silent clips pad audio up to it).
    private var nextFrameIndex: Int64
    private let input: InputFile
    private let path: String

    private let videoIndex: Int32
    private let videoDecoder: Decoder
    /// Which packets need not be decoded (nil: all are).
    private var skipping: PictureSkipping?
    /// With skipping: packets read but not yet handled, in file order, until the video packet
    /// first among them has its neighbours in presentation order known (`neighbours`).
    private var pending: [Packet] = []
    private var neighbours = PresentationNeighbours()
    /// How far reading may run ahead of handling; a packet whose neighbours are not known by
    /// then is decoded.
    private static let readAhead = 64
    /// Video packets read, and those left undecoded.
    private(set) var decodeCount = DecodeCount()
    private let videoTimeBase: AVRational
    private var videoGraph: FilterGraph?
    /// When the pipeline cuts the frames reaching `videoGraph` to the crop window (see
    /// PictureCrop): the window for frames of the size the graph was made for; nil when the
    /// graph crops.
    private var videoCrop: (width: Int, height: Int, window: CropRect)?
    /// The clip's time zero, in the video stream's time base and in microseconds (set once:
    /// from the stream's start time, else from its first frame).
    private var videoStart: Int64
    private var videoStartMicros: Int64 = 0
    private var lastVideoMicros = Int64.min
    /// The output frame the clip starts on, and its trim start in the video's time base.
    private let startFrame: Int64
    private let trimTicks: Int64
    /// The video stream's time base, for placing pictures from their exact timestamps.
    private let videoTicks: Rational
    /// The latest picture from before the clip's time zero (its trim start): what shows at zero
    /// unless a picture falls on it exactly.
    private let early: Frame
    private var hasEarly = false
    /// Packets read while finding where to start reading (a trim), handled before the rest.
    private var lookahead: [Packet] = []

    private let audioIndex: Int32
    private let audioDecoder: Decoder?
    private let audioTimeBase: AVRational
    private var audioGraph: FilterGraph?
    private var firstAudioBlock = true

    private let packet: Packet
    private let frame: Frame
    /// A blank frame kept between pulls, so an empty pull costs no allocation.
    private var spare: Frame?
    private let report: (Diagnostic) -> Void
    /// Packets the decoders rejected as corrupt; skipped, as players do, and reported once.
    private var corruptPackets = 0

    /// Output sample range of this clip.
    private let sampleStart: Int64, sampleEnd: Int64
    /// 1 / the output sample rate.
    private let outputSampleRate: AVRational
    private let options: MergeOptions
    private let cancel: CancelToken?

    init(
        _ planned: PlannedClip, options: MergeOptions, sink: FrameQueue,
        report: @escaping (Diagnostic) -> Void, cancel: CancelToken? = nil
    ) throws {
        self.cancel = cancel
        self.planned = planned
        self.report = report
        self.options = options
        timeline = options.timeline
        self.sink = sink
        nextFrameIndex = timeline.frameIndex(atMicros: planned.startMicros)
        path = planned.clip.path
        // Probing analysed this file already; a QuickTime/MP4 header (stsd) holds all the
        // decoders need, so only other containers are analysed again.
        input = try InputFile(
            path: path, analyse: !planned.clip.container.hasPrefix("mov,"), confinement: options.confinement,
            expected: planned.clip.fileID, cancel: cancel)
        let video = planned.clip.video
        guard video.streamIndex >= 0, video.streamIndex < input.streamCount,
            let index32 = Int32(exactly: video.streamIndex),
            try input.parameters(ofStream: video.streamIndex).codec_type == AVMEDIA_TYPE_VIDEO
        else {
            throw VMergeError.invalidInput(file: path, reason: "changed since it was probed")
        }
        videoIndex = index32
        let videoStream = try input.stream(video.streamIndex)
        videoDecoder = try Decoder(stream: videoStream, file: path, skipDeblocking: planned.skipsDeblocking)
        videoTimeBase = videoStream.pointee.time_base
        startFrame = timeline.frameIndex(atMicros: planned.startMicros)
        trimTicks = av_rescale_q(planned.trimStartMicros, microsBase, videoStream.pointee.time_base)
        videoTicks = Rational(Int(videoStream.pointee.time_base.num), Int(videoStream.pointee.time_base.den))
        videoStart = videoStream.pointee.start_time
        skipping = options.skipsUnshownPictures ? PictureSkipping(stream: videoStream) : nil
        if videoStart != noPTS { videoStartMicros = av_rescale_q(videoStart, videoTimeBase, microsBase) }

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
        early = try Frame()
        // The clip's start and end are output frames: its sound fills exactly their samples.
        sampleStart = timeline.sampleIndex(ofFrame: timeline.frameIndex(atMicros: planned.startMicros))
        sampleEnd = timeline.sampleIndex(ofFrame: timeline.frameIndex(atMicros: planned.endMicros))
        guard let rate = Int32(exactly: options.sampleRate), rate > 0 else {
            throw VMergeError.ffmpeg(
                file: path, operation: "setting up audio", message: "sample rate \(options.sampleRate) is out of range")
        }
        outputSampleRate = AVRational(num: 1, den: rate)
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
        pending = []
        try decode(nil, with: videoDecoder, handle: handleVideoFrame)
        if let audioDecoder { try decode(nil, with: audioDecoder, handle: handleAudioFrame) }
        // A clip whose every picture lies before its trim start shows the last of them.
        try showEarlyPicture()
        // A file cut short under us ends its reading early; without this the clip would be padded
        // out with its last picture. (A deleted file stays readable through the open handle.)
        if planned.clip.fileSize > 0, let size = input.currentSize, size < planned.clip.fileSize {
            throw VMergeError.invalidInput(
                file: path, reason: "file shrank from \(planned.clip.fileSize) to \(size) bytes while being read")
        }

        // Video: the fps filter fills up to exactly the clip's planned end (the writer makes
        // sure of it).
        if videoGraph == nil {
            throw VMergeError.invalidInput(file: path, reason: "no video frame could be decoded")
        }
        try videoGraph!.close(at: planned.endMicros)
        try drainVideo()
        try sink.put(.fillVideo(upTo: timeline.frameIndex(atMicros: planned.endMicros)))
        if let audioGraph {
            try audioGraph.close(at: planned.durationMicros)
            try drainAudio()
        }
        try sink.put(.padAudio(to: sampleEnd))
        decodeCount.corrupt = corruptPackets
        if corruptPackets > 0 {
            report(
                Diagnostic(
                    .warning, file: path, "skipped \(corruptPackets) corrupt packet\(corruptPackets == 1 ? "" : "s")"))
        }
    }

    /// Handles a packet read from the file (`packet` may be reused after); false once nothing
    /// further in the file is used. With skipping, video packets wait (with whatever was read
    /// after them) until their picture's neighbours are known.
    private func take(_ packet: Packet) throws -> Bool {
        guard skipping != nil else { return try handle(packet, skip: false) }
        let held = try Packet()
        av_packet_move_ref(held.pointer, packet.pointer)
        if held.pointer.pointee.stream_index == videoIndex {
            skipping?.observe(held.pointer)
            let (pts, dts) = (held.pointer.pointee.pts, held.pointer.pointee.dts)
            neighbours.add(pts: pts == noPTS ? nil : pts, dts: dts == noPTS ? nil : dts)
        }
        pending.append(held)
        return try handlePending(ended: false)
    }

    /// Handles the waiting packets in order while the first one can be decided; at the end of
    /// the file (`ended`) all of them.
    private func handlePending(ended: Bool) throws -> Bool {
        var handled = 0
        defer { pending.removeFirst(handled) }
        while handled < pending.count {
            let head = pending[handled]
            var skip = false
            if head.pointer.pointee.stream_index == videoIndex, let skipping, videoStart != noPTS {
                let pts = head.pointer.pointee.pts
                if pts != noPTS, let around = neighbours.around(pts, ended: ended) {
                    skip = !showsPicture(pts, around) && skipping.isUnreferenced(head.pointer)
                } else if !ended && !neighbours.irregular && pending.count - handled < ClipPipeline.readAhead {
                    return true  // read on until its neighbours are known
                }
            }
            handled += 1
            guard try handle(head, skip: skip) else { return false }
            head.unref()
        }
        return true
    }

    /// Decodes one packet, or with `skip` (a video packet whose picture is not shown and that
    /// nothing references) only counts it; false once nothing further in the file is used.
    private func handle(_ packet: Packet, skip: Bool) throws -> Bool {
        try cancel.check()
        let index = packet.pointer.pointee.stream_index
        if index == videoIndex && isPastCut(packet) { return false }
        if index == videoIndex {
            decodeCount.videoPackets += 1
            if skip {
                decodeCount.skipped += 1
                return true
            }
            try decode(packet, with: videoDecoder, handle: handleVideoFrame)
        } else if index == audioIndex, let audioDecoder {
            try decode(packet, with: audioDecoder, handle: handleAudioFrame)
        }
        return true
    }

    /// Whether the output shows the picture with this timestamp, given its neighbours' in
    /// presentation order (none before: it may open the clip; none after: it may fill its end).
    private func showsPicture(_ pts: Int64, _ around: (previous: Int64?, next: Int64?)) -> Bool {
        let at = { (ts: Int64) in self.clipMicros(ts).subtractingSaturating(self.planned.trimStartMicros) }
        guard let next = around.next else { return true }
        return planned.showsPicture(
            at: at(pts), previous: around.previous.map(at) ?? Int64.min, next: at(next),
            slot: outputFrame(of: pts), nextSlot: outputFrame(of: next), on: timeline)
    }

    /// The output frame a picture with this timestamp goes to, worked out from the timestamp
    /// exactly (as the fps filter would round it), not from its microseconds.
    private func outputFrame(of ts: Int64) -> Int64 {
        let ticks = ts.subtractingSaturating(videoStart == noPTS ? 0 : videoStart).subtractingSaturating(trimTicks)
        return startFrame.addingSaturating(timeline.frameIndex(ofTicks: ticks, timeBase: videoTicks))
    }

    /// Where on the clip's own timeline a timestamp of the video stream falls, in microseconds.
    private func clipMicros(_ ts: Int64) -> Int64 {
        // Timestamps are the file's: saturating, so a wild one reads as far past (or before).
        av_rescale_q(ts.subtractingSaturating(videoStart == noPTS ? 0 : videoStart), videoTimeBase, microsBase)
    }

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
    private func seekToTrimStart() throws {
        let trim = planned.trimStartMicros
        // Without a start time, time zero is the first picture decoded: read from the top.
        guard trim > 0, videoStart != noPTS, options.seeksToTrims else { return }
        var back: Int64 = 100_000
        // Whether reading has moved off the top of the file (a seek took, packets were read).
        var displaced = false
        while true {
            let target = trim - back
            guard target > 0,
                input.seek(
                    stream: videoIndex,
                    toKeyframeAtOrBefore: videoStart.addingSaturating(av_rescale_q(target, microsBase, videoTimeBase)))
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
    private func landedBeforeTrimStart() throws -> Bool {
        lookahead = []
        let limit = 4096
        var keyframe: Int64?
        while keyframe == nil, lookahead.count < limit {
            let held = try Packet()
            guard try input.read(into: held) else { return false }
            let p = held.pointer.pointee
            if p.stream_index == videoIndex {
                guard p.flags & AV_PKT_FLAG_KEY != 0 else { continue }
                keyframe = p.pts != noPTS ? p.pts : p.dts
            }
            lookahead.append(held)
        }
        guard let keyframe, keyframe != noPTS, clipMicros(keyframe) <= planned.trimStartMicros else { return false }

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
                guard ts != noPTS, vm_frame_is_key(picture.pointer) != 0, clipMicros(ts) <= planned.trimStartMicros
                else { return false }
                // Start at the packet of that picture (a keyframe the decoder can start on).
                if let own = lookahead.firstIndex(where: {
                    $0.pointer.pointee.stream_index == videoIndex && $0.pointer.pointee.pts == ts
                }) {
                    var index = -1
                    lookahead.removeAll { packet in
                        index += 1
                        return index < own && packet.pointer.pointee.stream_index == videoIndex
                    }
                }
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

    /// Whether a clip that ends early (trimmed, or cut by --max-duration) has been read far
    /// enough: a packet decoded after this one is shown after it, so once the decode time passes
    /// the end (plus a second for audio interleaved behind the video), nothing further is used.
    private func isPastCut(_ packet: Packet) -> Bool {
        guard planned.endsEarly, videoStart != noPTS else { return false }
        let dts = packet.pointer.pointee.dts
        guard dts != noPTS else { return false }
        return clipMicros(dts) > planned.trimStartMicros.addingSaturating(planned.durationMicros).addingSaturating(1_000_000)
    }

    /// Counts a corrupt packet, or with --strict stops the run on it.
    private func damaged(_ packet: Packet, _ message: String) throws {
        corruptPackets += 1
        guard options.strict else { return }
        let index = packet.pointer.pointee.stream_index
        let timeBase = index == videoIndex ? videoTimeBase : audioTimeBase
        let seconds =
            Double(max(0, packet.pointer.pointee.pts == noPTS ? 0 : packet.pointer.pointee.pts)) * av_q2d(timeBase)
        throw VMergeError.invalidInput(
            file: path, reason: "corrupt packet near \(formatSeconds(seconds)) s (\(message)); --strict stops here")
    }

    private func decode(_ packet: Packet?, with decoder: Decoder, handle: () throws -> Void) throws {
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

    // MARK: video

    private func handleVideoFrame() throws {
        let f = frame.pointer
        var ts = f.pointee.best_effort_timestamp
        if ts == noPTS { ts = f.pointee.pts }
        if videoStart == noPTS {
            videoStart = ts != noPTS ? ts : 0
            videoStartMicros = av_rescale_q(videoStart, videoTimeBase, microsBase)
        }
        // Frames without any timestamp follow the previous one. Time zero is the trim start.
        let relative =
            ts == noPTS
            ? (lastVideoMicros == Int64.min ? 0 : lastVideoMicros.subtractingSaturating(planned.startMicros) + 1)
            : clipMicros(ts).subtractingSaturating(planned.trimStartMicros)
        // Frames past the end belong to no one (trailing frames, what a trim cuts away).
        guard relative < planned.durationMicros else { return }
        if relative < 0 {
            // Before zero (what a trim cuts away, edit-list lead-in): only the latest is kept,
            // the picture on screen at zero if none falls on it exactly.
            if lastVideoMicros == Int64.min {
                early.unref()
                av_frame_move_ref(early.pointer, f)
                hasEarly = true
            }
            return
        }
        if relative > 0 { try showEarlyPicture() }
        hasEarly = false
        early.unref()
        // The clip's first picture opens its slot even if the stream starts a little late
        // (leading frames that could not be decoded), so the output frame grid has no hole.
        if lastVideoMicros == Int64.min {
            try show(frame, at: planned.startMicros, frame: startFrame)
        } else {
            try show(
                frame, at: planned.startMicros.addingSaturating(relative),
                frame: ts == noPTS ? nil : max(startFrame, outputFrame(of: ts)))
        }
    }

    /// Shows the picture kept from before time zero at the clip's start, if nothing is shown yet.
    private func showEarlyPicture() throws {
        guard hasEarly else { return }
        hasEarly = false
        defer { early.unref() }
        if lastVideoMicros == Int64.min { try show(early, at: planned.startMicros, frame: startFrame) }
    }

    /// Sends a picture placed at clip time `micros` into the filters, timed at the start of
    /// output frame `index` when known: the fps filter then keeps exactly the pictures the exact
    /// timestamps make it keep (microseconds alone break ties either way).
    private func show(_ picture: Frame, at micros: Int64, frame index: Int64?) throws {
        guard micros > lastVideoMicros else { return }
        lastVideoMicros = micros
        if videoGraph == nil { videoGraph = try makeVideoGraph(for: picture.pointer) }
        if let videoCrop { try crop(picture, graphCrop: videoCrop) }
        picture.pts = index.map { timeline.micros(ofFrame: $0) } ?? micros
        try videoGraph!.push(picture)
        try drainVideo()
    }

    private func makeVideoGraph(for f: UnsafeMutablePointer<AVFrame>) throws -> FilterGraph {
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        let cropping = PictureCrop(pixelFormat: f.pointee.format)
        let sar = sampleAspect(of: f)
        let (window, description) = planned.picturePath(
            frameWidth: width, frameHeight: height, sampleAspect: sar, cropping: cropping, options: options)
        var size = (width, height)
        if case .framesCropped = cropping {
            videoCrop = (width, height, window)
            size = (window.width, window.height)
        }
        let args = FilterGraph.videoSourceArgs(
            for: f, width: size.0, height: size.1, timeBase: "1/1000000", sampleAspect: sar)
        return try FilterGraph(
            sourceName: "buffer", sourceArgs: args, sinkName: "buffersink",
            description: description, file: path)
    }

    private func sampleAspect(of f: UnsafeMutablePointer<AVFrame>) -> Rational {
        let sar = f.pointee.sample_aspect_ratio
        return sar.num > 0 && sar.den > 0 ? Rational(Int(sar.num), Int(sar.den)) : Rational(1, 1)
    }

    /// Cuts a picture to its crop window: the graph's, or for a picture of another size than the
    /// graph was made for (a stream that changes size), its own centred one (the scaler follows
    /// size changes; the picture stays whole and centred).
    private func crop(_ picture: Frame, graphCrop: (width: Int, height: Int, window: CropRect)) throws {
        let f = picture.pointer
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        let window =
            (width, height) == (graphCrop.width, graphCrop.height)
            ? graphCrop.window
            : planned.framing(frameWidth: width, frameHeight: height, sampleAspect: sampleAspect(of: f), options: options)
                .crop
        try picture.crop(to: window, file: path)
    }

    private func drainVideo() throws {
        guard let videoGraph else { return }
        while let out = try nextFiltered(from: videoGraph) {
            // pts is in 1/fps: the output frame index.
            nextFrameIndex = max(nextFrameIndex, out.pts + 1)
            try sink.put(.video(out))
            if audioDecoder == nil {
                // No sound of its own: keep silence interleaved with the pictures as they go.
                let upTo = timeline.sampleIndex(ofFrame: nextFrameIndex)
                try sink.put(.padAudio(to: min(upTo, sampleEnd)))
            }
        }
    }

    // MARK: audio

    private func handleAudioFrame() throws {
        let f = frame.pointer
        var ts = f.pointee.best_effort_timestamp
        if ts == noPTS { ts = f.pointee.pts }
        guard ts != noPTS else { return }
        // Relative to the clip's video start, so edit lists and start offsets carry over, and to
        // its trim start. av_rescale_q gives Int64.min when a wild timestamp does not fit microseconds.
        frame.pts = av_rescale_q(ts, audioTimeBase, microsBase).subtractingSaturating(videoStartMicros)
            .subtractingSaturating(planned.trimStartMicros)
        if audioGraph == nil { audioGraph = try makeAudioGraph(for: f) }
        try audioGraph!.push(frame)
        try drainAudio()
    }

    private func makeAudioGraph(for f: UnsafeMutablePointer<AVFrame>) throws -> FilterGraph {
        try FilterGraph.audio(for: f, description: planned.audioFilter, file: path)
    }

    private func drainAudio() throws {
        guard let audioGraph else { return }
        let timeBase = audioGraph.outputTimeBase
        while let out = try nextFiltered(from: audioGraph) {
            let position = sampleStart.addingSaturating(av_rescale_q(out.pts, timeBase, outputSampleRate))
            // Wholly before the clip's start (what a trim cuts away): not sent, so the first
            // block that counts is the one placed exactly.
            if position.addingSaturating(Int64(out.pointer.pointee.nb_samples)) <= sampleStart {
                out.unref()
                spare = out
                continue
            }
            try sink.put(.audio(out, start: position, end: sampleEnd, exact: firstAudioBlock))
            firstAudioBlock = false
        }
    }

    /// The next frame out of `graph`, or nil when it needs more input (the blank frame taken
    /// from the pool is kept for next time).
    private func nextFiltered(from graph: FilterGraph) throws -> Frame? {
        let out = try spare ?? sink.emptyFrame()
        spare = nil
        if try graph.pull(out) == .ok { return out }
        spare = out
        return nil
    }
}
