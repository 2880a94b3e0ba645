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
    private let videoTimeBase: AVRational
    private var videoGraph: FilterGraph?
    /// The clip's time zero, in the video stream's time base and in microseconds (set once:
    /// from the stream's start time, else from its first frame).
    private var videoStart: Int64
    private var videoStartMicros: Int64 = 0
    private var lastVideoMicros = Int64.min

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

    init(
        _ planned: PlannedClip, options: MergeOptions, sink: FrameQueue,
        report: @escaping (Diagnostic) -> Void
    ) throws {
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
            path: path, analyse: !planned.clip.container.hasPrefix("mov,"), confinement: options.confinement)
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
        videoStart = videoStream.pointee.start_time
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
        while try input.read(into: packet) {
            defer { packet.unref() }
            let signal = vm_cancel_signal()
            if signal != 0 { throw VMergeError.cancelled(signal: signal) }
            let index = packet.pointer.pointee.stream_index
            if index == videoIndex && isPastCut(packet) { break }
            if index == videoIndex {
                try decode(packet, with: videoDecoder, handle: handleVideoFrame)
            } else if index == audioIndex, let audioDecoder {
                try decode(packet, with: audioDecoder, handle: handleAudioFrame)
            }
        }
        try decode(nil, with: videoDecoder, handle: handleVideoFrame)
        if let audioDecoder { try decode(nil, with: audioDecoder, handle: handleAudioFrame) }
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
        if corruptPackets > 0 {
            report(
                Diagnostic(
                    .warning, file: path, "skipped \(corruptPackets) corrupt packet\(corruptPackets == 1 ? "" : "s")"))
        }
    }

    /// Whether a clip cut short by --max-duration has been read far enough: a packet decoded
    /// after this one is shown after it, so once the decode time passes the cut (plus a second
    /// for audio interleaved behind the video), nothing further is used.
    private func isPastCut(_ packet: Packet) -> Bool {
        guard planned.isCut, videoStart != noPTS else { return false }
        let dts = packet.pointer.pointee.dts
        guard dts != noPTS else { return false }
        // Timestamps are the file's: saturating, so a wild one reads as far past (or before) the cut.
        return av_rescale_q(dts.subtractingSaturating(videoStart), videoTimeBase, microsBase)
            > planned.durationMicros.addingSaturating(1_000_000)
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
        // Frames without any timestamp follow the previous one.
        let relative =
            ts == noPTS
            ? (lastVideoMicros == Int64.min ? 0 : lastVideoMicros.subtractingSaturating(planned.startMicros) + 1)
            : av_rescale_q(ts.subtractingSaturating(videoStart), videoTimeBase, microsBase)
        // Frames outside [0, duration) belong to no one (edit lists, trailing frames). A frame
        // just before zero still stands in for zero when nothing has been shown yet.
        guard relative < planned.durationMicros else { return }
        // The clip's first picture opens its slot even if the stream starts a little late
        // (leading frames that could not be decoded), so the output frame grid has no hole.
        let micros =
            lastVideoMicros == Int64.min ? planned.startMicros : planned.startMicros.addingSaturating(max(0, relative))
        guard micros > lastVideoMicros else { return }
        lastVideoMicros = micros

        if videoGraph == nil { videoGraph = try makeVideoGraph(for: f) }
        frame.pts = micros
        try videoGraph!.push(frame)
        try drainVideo()
    }

    private func makeVideoGraph(for f: UnsafeMutablePointer<AVFrame>) throws -> FilterGraph {
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        var sar = f.pointee.sample_aspect_ratio
        if sar.num <= 0 || sar.den <= 0 { sar = AVRational(num: 1, den: 1) }
        let format =
            av_get_pix_fmt_name(AVPixelFormat(rawValue: f.pointee.format)).map { String(cString: $0) } ?? "yuv420p"
        let args =
            "video_size=\(width)x\(height):pix_fmt=\(format):time_base=1/1000000:pixel_aspect=\(sar.num)/\(sar.den)"
        let description = planned.videoFilter(
            frameWidth: width, frameHeight: height,
            sampleAspect: Rational(Int(sar.num), Int(sar.den)), options: options)
        return try FilterGraph(
            sourceName: "buffer", sourceArgs: args, sinkName: "buffersink",
            description: description, file: path)
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
        // Relative to the clip's video start, so edit lists and start offsets carry over.
        // av_rescale_q gives Int64.min when a wild timestamp does not fit microseconds.
        frame.pts = av_rescale_q(ts, audioTimeBase, microsBase).subtractingSaturating(videoStartMicros)
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
