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

    /// Output samples placed so far (the position of the next sample).
    private(set) var audioPosition: Int64 = 0
    /// Samples handed to the AAC encoder so far.
    private var audioEncoded: Int64 = 0
    /// The next output frame index the video encoder expects.
    private(set) var nextFrameIndex: Int64 = 0

    init(path: String, options: MergeOptions, creationTime: String?) throws {
        output = try OutputFile(path: path)
        let size = options.outputSize
        let globalHeader = output.needsGlobalHeader
        video = try Encoder.h264(
            width: size.width, height: size.height, frameRate: options.frameRate,
            quality: options.quality, globalHeader: globalHeader, file: path)
        audio = try Encoder.aac(
            sampleRate: options.sampleRate, channels: options.channels,
            bitRate: options.quality.audioBitRate * options.channels / 2,
            globalHeader: globalHeader, file: path)
        channels = options.channels
        fifo = try AudioFifo(channels: Int32(options.channels), file: path)
        videoStream = try output.addStream(for: video)
        audioStream = try output.addStream(for: audio)
        packet = try Packet()
        audioFrame = try Frame()
        lastVideoFrame = try Frame()
        repeatFrame = try Frame()
        let frameSize = Int(audio.context.pointee.frame_size)
        audioFrameSize = frameSize > 0 ? frameSize : 1024
        if let creationTime { output.setMetadata("creation_time", creationTime) }
        try output.open(movflags: "+faststart")
    }

    // MARK: video

    /// Carries out one command of the decode/filter stage.
    func apply(_ command: WriterCommand) throws {
        switch command {
        case let .video(frame):
            // A frame for a slot already filled (never expected from the fps filter) is dropped.
            if frame.pts >= nextFrameIndex { try writeVideo(frame) }
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

    /// Flushes both encoders and finishes the file.
    func finish() throws {
        try encodeAudio(flush: true)
        _ = try audio.send(nil)
        try drain(audio, stream: audioStream)
        _ = try video.send(nil)
        try drain(video, stream: videoStream)
        try output.finish()
    }

    private func drain(_ encoder: Encoder, stream: Int32) throws {
        while true {
            switch try encoder.receive(packet) {
            case .again, .endOfStream: return
            case .ok:
                packet.pointer.pointee.stream_index = stream
                // libx264 leaves durations unset; the MP4 muxer sizes the edit list from the
                // last pts + duration, so without one the final frame would be cut off.
                if stream == videoStream && packet.pointer.pointee.duration <= 0 { packet.pointer.pointee.duration = 1 }
                av_packet_rescale_ts(
                    packet.pointer, encoder.context.pointee.time_base, output.timeBase(ofStream: stream))
                try output.write(packet)
            }
        }
    }
}
