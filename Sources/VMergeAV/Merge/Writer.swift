import CFFmpeg
import VMergeCore

/// The encode and mux stage: takes upright, scaled frames and output-format audio, encodes
/// H.264 + AAC and writes an interleaved, faststart MP4. Audio is placed by output sample
/// position, so every clip's sound lines up with its pictures exactly.
final class Writer {
    let output: OutputFile
    private let video: Encoder
    private let audio: Encoder
    private let fifo: AudioFifo
    private let videoStream: Int32
    private let audioStream: Int32
    private let packet: Packet
    private let audioFrame: Frame
    private let lastVideoFrame: Frame
    private let repeatFrame: Frame
    private let audioFrameSize: Int
    private let channels: Int
    private let timeline: Timeline
    /// Given to the muxer at the end, cut to where the output really ended (--max-size); it
    /// writes them as a QuickTime chapter track and a Nero chapter list (chpl).
    private let chapters: [Chapter]
    /// --poster: the output frame to keep, and that frame once written (if the output ends
    /// before it, the last frame stands in).
    private let posterIndex: Int64?
    private let posterFrame: Frame

    /// Output samples placed so far (the position of the next sample).
    private(set) var audioPosition: Int64 = 0
    /// Samples handed to the AAC encoder so far.
    private var audioEncoded: Int64 = 0
    /// The next output frame index the video encoder expects.
    private(set) var nextFrameIndex: Int64 = 0
    /// Holds packets back under --max-size; nil without a limit.
    private let sizeGate: SizeGate?
    /// Set once --max-size stopped the output; nothing more is written.
    var isTruncated: Bool { sizeGate?.isFull ?? false }
    /// Video frames and audio samples in the file so far.
    private(set) var framesWritten: Int64 = 0
    private(set) var samplesWritten: Int64 = 0

    /// - Parameter logName: the name FFmpeg's log lines about the file are tagged with (the
    ///   published name, not the temporary one).
    /// - Parameter recording: the first kept clip's creation time and tags (not written with
    ///   --strip-metadata).
    /// - Parameter chapters: one per clip (--chapters), on the output's timeline.
    /// - Parameter posterIndex: the output frame to keep for --poster.
    /// - Parameter recordedKey: the job key the output records (keyed runs).
    init(
        path: String, file: FileDescriptor, logName: String? = nil, options: MergeOptions, creationTime: String?,
        recording: RecordingTags = RecordingTags(), chapters: [Chapter] = [], posterIndex: Int64? = nil,
        recordedKey: String? = nil, cancel: CancelToken? = nil
    ) throws {
        output = try OutputFile(
            path: path, file: file, logName: logName ?? path,
            muxer: OutputContainer(path: logName ?? path)?.muxer ?? "mp4", cancel: cancel)
        let size = options.outputSize
        let globalHeader = output.needsGlobalHeader
        video = try Encoder.h264(
            width: size.width, height: size.height, frameRate: options.frameRate,
            crf: options.effectiveCRF, preset: options.effectivePreset, profile: options.x264Profile,
            globalHeader: globalHeader, file: path)
        audio = try Encoder.aac(
            sampleRate: options.sampleRate, channels: options.channels,
            bitRate: options.audioBitRate,
            globalHeader: globalHeader, file: path)
        channels = options.channels
        // The AAC encoder above refused a channel count past Int32.
        fifo = try AudioFifo(channels: Int32(clamping: options.channels), file: path)
        videoStream = try output.addStream(for: video)
        audioStream = try output.addStream(for: audio)
        packet = try Packet()
        audioFrame = try Frame()
        lastVideoFrame = try Frame()
        repeatFrame = try Frame()
        let frameSize = Int(audio.context.pointee.frame_size)
        audioFrameSize = frameSize > 0 ? frameSize : 1024
        if !options.stripMetadata {
            if let creationTime { output.setMetadata("creation_time", creationTime) }
            for (key, value) in recording.outputTags { output.setMetadata(key, value) }
        }
        if let key = recordedKey { output.setMetadata("comment", JobKey.tagPrefix + key) }
        timeline = options.timeline
        self.chapters = chapters
        self.posterIndex = posterIndex
        posterFrame = try Frame()
        // use_metadata_tags: the tags go out as QuickTime metadata keys ("mdta"), as iPhones write
        // them, so Photos and other players find the place and device.
        try output.open(movflags: "+faststart+use_metadata_tags")
        // The encoder's own frame rate: already reduced and checked to fit 32 bits.
        let frameRate = video.context.pointee.framerate
        sizeGate = options.maxSize.map {
            SizeGate(budget: SizeBudget(limit: $0, reserved: SizeBudget.allowance(for: chapters)), frameRate: frameRate)
        }
    }

    /// The job's whole tag (see `JobTag`), once every clip is decoded; replaces the key alone.
    var finalTag: String?

    /// The poster's frame, once the frames are written: nil without --poster, or when --max-size
    /// ended the file before it (it was encoded but is not in the output; the merger then takes
    /// the poster from the file itself).
    var posterPicture: Frame? {
        guard let posterIndex else { return nil }
        let held = { (frame: Frame) in frame.pointer.pointee.buf.0 != nil }
        if held(posterFrame) && (!isTruncated || posterIndex < framesWritten) { return posterFrame }
        return !isTruncated && held(lastVideoFrame) ? lastVideoFrame : nil
    }

    private static func add(_ chapters: [Chapter], to output: OutputFile) throws {
        for chapter in chapters {
            try output.addChapter(title: chapter.title, startMicros: chapter.startMicros, endMicros: chapter.endMicros)
        }
    }

    // MARK: video

    /// Carries out one command of the decode/filter stage. Throws `SizeLimitReached` once
    /// --max-size has ended the file.
    func apply(_ command: WriterCommand) throws {
        if isTruncated { throw SizeLimitReached() }
        switch command {
        case let .video(frame):
            // A frame for a slot already filled (never expected from the fps filter) is dropped;
            // a hole before it (never expected either) is filled, so frame indices stay
            // contiguous: constant frame rate, and the size gate can always find a whole run.
            guard frame.pts >= nextFrameIndex else { return }
            if frame.pts > nextFrameIndex { try fillVideo(upTo: frame.pts) }
            try writeVideo(frame)
        case let .audio(frame, start, end, exact): try writeAudio(frame, start: start, end: end, exact: exact)
        case let .padAudio(position): try padAudio(to: position)
        case let .fillVideo(end): try fillVideo(upTo: end)
        }
    }

    /// Encodes a filtered frame whose pts is its output frame index.
    func writeVideo(_ frame: Frame) throws {
        frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        nextFrameIndex = frame.pts + 1
        lastVideoFrame.unref()
        try check(av_frame_ref(lastVideoFrame.pointer, frame.pointer), "keeping the last frame", file: output.path)
        if frame.pts == posterIndex {
            try check(av_frame_ref(posterFrame.pointer, frame.pointer), "keeping the poster frame", file: output.path)
        }
        _ = try video.send(frame)
        try drain(video, stream: videoStream)
    }

    /// Repeats the last picture up to (not including) output frame `end`, so a clip's slot on
    /// the frame grid is always full even if the filters delivered one frame short (FFmpeg
    /// 7.1.0's scale filter drops the end-of-stream time the fps filter needs).
    func fillVideo(upTo end: Int64) throws {
        guard lastVideoFrame.pointer.pointee.buf.0 != nil else { return }
        while nextFrameIndex < end {
            repeatFrame.unref()
            try check(av_frame_ref(repeatFrame.pointer, lastVideoFrame.pointer), "repeating a frame", file: output.path)
            repeatFrame.pts = nextFrameIndex
            try writeVideo(repeatFrame)
        }
    }

    // MARK: audio

    /// Places a block of output-format audio whose first sample belongs at output sample
    /// `start`, never past `end` (the clip's last sample). Gaps become silence, overlaps are
    /// dropped; `exact` turns off the jitter tolerance (for a clip's first block).
    func writeAudio(_ frame: Frame, start: Int64, end: Int64, exact: Bool) throws {
        let count = Int(frame.pointer.pointee.nb_samples)
        let place = AudioPlacement.place(
            start: start, count: count, written: audioPosition, end: end,
            tolerance: exact ? 0 : 32)
        try fifo.writeSilence(place.silenceBefore, file: output.path)
        try fifo.write(frame.pointer, offset: place.dropFront, count: place.keep, file: output.path)
        audioPosition += Int64(place.silenceBefore + place.keep)
        try encodeAudio(flush: false)
    }

    /// Fills with silence up to output sample `position`.
    func padAudio(to position: Int64) throws {
        // In encoder-sized steps, so a long silent stretch never piles up in the buffer.
        while position > audioPosition {
            let n = Int(min(position - audioPosition, Int64(audioFrameSize)))
            try fifo.writeSilence(n, file: output.path)
            audioPosition += Int64(n)
            try encodeAudio(flush: false)
        }
    }

    private func encodeAudio(flush: Bool) throws {
        while fifo.count >= audioFrameSize || (flush && fifo.count > 0) {
            let n = min(audioFrameSize, fifo.count)
            audioFrame.unref()
            audioFrame.pointer.pointee.nb_samples = Int32(n)
            audioFrame.pointer.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
            audioFrame.pointer.pointee.sample_rate = audio.context.pointee.sample_rate
            try check(
                av_channel_layout_copy(&audioFrame.pointer.pointee.ch_layout, &audio.context.pointee.ch_layout),
                "preparing audio", file: output.path)
            try check(av_frame_get_buffer(audioFrame.pointer, 0), "preparing audio", file: output.path)
            _ = fifo.read(into: audioFrame.pointer, count: n)
            audioFrame.pts = audioEncoded
            audioEncoded += Int64(n)
            _ = try audio.send(audioFrame)
            try drain(audio, stream: audioStream)
        }
    }

    // MARK: finishing

    /// Flushes both encoders and finishes the file; after --max-size stopped it, only finishes
    /// the file with what fitted.
    func finish() throws {
        if !isTruncated {
            try encodeAudio(flush: true)
            _ = try audio.send(nil)
            try drain(audio, stream: audioStream)
            _ = try video.send(nil)
            try drain(video, stream: videoStream)
            if let sizeGate { try sizeGate.flush(mux(_:isVideo:timeBase:)) }
        }
        // The moov, and its tags, are written now: the tag can say what decoding found.
        if let finalTag { output.setMetadata("comment", finalTag) }
        if !chapters.isEmpty {
            try Writer.add(chapters, to: output)
            output.endChapters(atMicros: timeline.micros(ofFrame: framesWritten))
        }
        try output.finish()
    }

    private func drain(_ encoder: Encoder, stream: Int32) throws {
        while true {
            switch try encoder.receive(packet) {
            case .again, .endOfStream: return
            case .ok:
                // libx264 leaves durations unset; the MP4 muxer sizes the edit list from the
                // last pts + duration, so without one the final frame would be cut off.
                if stream == videoStream && packet.pointer.pointee.duration <= 0 { packet.pointer.pointee.duration = 1 }
                if let sizeGate {
                    try sizeGate.offer(
                        packet, isVideo: stream == videoStream, timeBase: encoder.context.pointee.time_base,
                        mux(_:isVideo:timeBase:))
                } else {
                    try mux(packet, isVideo: stream == videoStream, timeBase: encoder.context.pointee.time_base)
                }
            }
        }
    }

    /// Writes one encoded packet (time base `timeBase`) into the file.
    private func mux(_ packet: Packet, isVideo: Bool, timeBase: AVRational) throws {
        let p = packet.pointer
        if isVideo {
            framesWritten += 1
        } else {
            samplesWritten = max(samplesWritten, p.pointee.pts + p.pointee.duration)
        }
        p.pointee.stream_index = isVideo ? videoStream : audioStream
        try av_packet_rescale_ts(p, timeBase, output.timeBase(ofStream: p.pointee.stream_index))
        try output.write(packet)
    }
}

/// Thrown by the writer once --max-size has ended the output: not a failure.
struct SizeLimitReached: Error {}

/// Holds encoded packets back until they form a whole stretch of pictures (with B-frames,
/// packets arrive out of display order), then lets the stretch and the audio under it into
/// the file only if the file then still fits the size limit. The first stretch that does not
/// fit ends the file, so it ends cleanly: every picture up to its end, none missing.
private final class SizeGate {
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
