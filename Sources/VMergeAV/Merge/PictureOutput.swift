import CFFmpeg
import VMergeCore

/// Where one file of a job is encoded: its temporary's path and descriptor, and the name FFmpeg's
/// log lines about it are tagged with (the published name, not the temporary one).
struct WriterFile {
    let path: String
    let file: FileDescriptor
    let logName: String
}

/// One file the writer makes (the job's own picture, or a rendition's): its H.264 encoder, its
/// muxer, and under --max-size its own size gate. The sound, encoded once by the writer, comes
/// as packets every file muxes.
final class PictureOutput {
    let output: OutputFile
    private let video: Encoder
    private let videoStream: Int32
    private let audioStream: Int32
    private let packet: Packet
    /// The sound's packets, each a reference to the writer's.
    private let audioPacket: Packet
    private let lastVideoFrame: Frame
    private let repeatFrame: Frame
    /// Given to the muxer at the end, cut to where the file really ended (--max-size).
    private let chapters: [Chapter]
    private let timeline: Timeline
    /// --poster (the job's own picture only): the output frame to keep, and that frame once written.
    private let posterIndex: Int64?
    private let posterFrame: Frame
    /// The next output frame index the video encoder expects.
    private(set) var nextFrameIndex: Int64 = 0
    /// Holds packets back under --max-size; nil without a limit.
    private let sizeGate: SizeGate?
    /// Set once --max-size ended this file; nothing more is written to it.
    var isTruncated: Bool { sizeGate?.isFull ?? false }
    /// Video frames and audio samples in the file so far.
    private(set) var framesWritten: Int64 = 0
    private(set) var samplesWritten: Int64 = 0

    /// - Parameters: options: this picture's (`MergeOptions.pictures`); audio: the writer's AAC
    ///   encoder, whose stream every file carries; metadata: the tags every file of the job carries.
    init(
        _ file: WriterFile, options: MergeOptions, audio: Encoder, metadata: [(String, String)], chapters: [Chapter],
        posterIndex: Int64?, cancel: CancelToken?
    ) throws {
        output = try OutputFile(
            path: file.path, file: file.file, logName: file.logName,
            muxer: OutputContainer(path: file.logName)?.muxer ?? "mp4", cancel: cancel)
        let size = options.outputSize
        video = try Encoder.h264(
            width: size.width, height: size.height, frameRate: options.frameRate,
            crf: options.effectiveCRF, preset: options.effectivePreset, profile: options.x264Profile,
            globalHeader: output.needsGlobalHeader, file: file.path)
        videoStream = try output.addStream(for: video)
        audioStream = try output.addStream(for: audio)
        packet = try Packet()
        audioPacket = try Packet()
        lastVideoFrame = try Frame()
        repeatFrame = try Frame()
        posterFrame = try Frame()
        for (key, value) in metadata { output.setMetadata(key, value) }
        (self.chapters, self.posterIndex, timeline) = (chapters, posterIndex, options.timeline)
        // use_metadata_tags: the tags go out as QuickTime metadata keys ("mdta"), as iPhones write
        // them, so Photos and other players find the place and device.
        try output.open(movflags: "+faststart+use_metadata_tags")
        // The encoder's own frame rate: already reduced and checked to fit 32 bits.
        let frameRate = video.context.pointee.framerate
        sizeGate = options.maxSize.map {
            SizeGate(budget: SizeBudget(limit: $0, reserved: SizeBudget.allowance(for: chapters)), frameRate: frameRate)
        }
    }

    /// The poster's frame, once the frames are written: nil without --poster, or when --max-size
    /// ended the file before it.
    var posterPicture: Frame? {
        guard let posterIndex else { return nil }
        let held = { (frame: Frame) in frame.pointer.pointee.buf.0 != nil }
        if held(posterFrame) && (!isTruncated || posterIndex < framesWritten) { return posterFrame }
        return !isTruncated && held(lastVideoFrame) ? lastVideoFrame : nil
    }

    /// A filtered frame whose pts is its output frame index. A frame for a slot already filled
    /// (never expected from the fps filter) is dropped; a hole before it (never expected either)
    /// is filled, so frame indices stay contiguous: constant frame rate, and the size gate can
    /// always find a whole run.
    func take(_ frame: Frame) throws {
        guard !isTruncated, frame.pts >= nextFrameIndex else { return }
        if frame.pts > nextFrameIndex { try fillVideo(upTo: frame.pts) }
        try writeVideo(frame)
    }

    private func writeVideo(_ frame: Frame) throws {
        frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        nextFrameIndex = frame.pts + 1
        lastVideoFrame.unref()
        try check(av_frame_ref(lastVideoFrame.pointer, frame.pointer), "keeping the last frame", file: output.path)
        if frame.pts == posterIndex {
            try check(av_frame_ref(posterFrame.pointer, frame.pointer), "keeping the poster frame", file: output.path)
        }
        _ = try video.send(frame)
        try drainVideo()
    }

    /// Repeats the last picture up to (not including) output frame `end`, so a clip's slot on
    /// the frame grid is always full even if the filters delivered one frame short (FFmpeg
    /// 7.1.0's scale filter drops the end-of-stream time the fps filter needs).
    func fillVideo(upTo end: Int64) throws {
        guard !isTruncated, lastVideoFrame.pointer.pointee.buf.0 != nil else { return }
        while nextFrameIndex < end {
            repeatFrame.unref()
            try check(av_frame_ref(repeatFrame.pointer, lastVideoFrame.pointer), "repeating a frame", file: output.path)
            repeatFrame.pts = nextFrameIndex
            try writeVideo(repeatFrame)
        }
    }

    /// An AAC packet (time base `timeBase`) for this file; `packet` is left as it was.
    func takeAudio(_ encoded: Packet, timeBase: AVRational) throws {
        guard !isTruncated else { return }
        // A reference of this file's own, reused: the size gate and the muxer each take it, blank.
        audioPacket.unref()
        try check(av_packet_ref(audioPacket.pointer, encoded.pointer), "copying a sound packet", file: output.path)
        try offer(audioPacket, isVideo: false, timeBase: timeBase)
    }

    /// Flushes the video encoder and finishes the file (after --max-size ended it, with what
    /// fitted). The sound is flushed into it before.
    func finish(tag: String?) throws {
        if !isTruncated {
            _ = try video.send(nil)
            try drainVideo()
            if let sizeGate { try sizeGate.flush(mux(_:isVideo:timeBase:)) }
        }
        // The moov, and its tags, are written now: the tag can say what decoding found.
        if let tag { output.setMetadata("comment", tag) }
        if !chapters.isEmpty {
            for chapter in chapters {
                try output.addChapter(
                    title: chapter.title, startMicros: chapter.startMicros, endMicros: chapter.endMicros)
            }
            output.endChapters(atMicros: timeline.micros(ofFrame: framesWritten))
        }
        try output.finish()
    }

    private func drainVideo() throws {
        while true {
            switch try video.receive(packet) {
            case .again, .endOfStream: return
            case .ok:
                // libx264 leaves durations unset; the MP4 muxer sizes the edit list from the
                // last pts + duration, so without one the final frame would be cut off.
                if packet.pointer.pointee.duration <= 0 { packet.pointer.pointee.duration = 1 }
                try offer(packet, isVideo: true, timeBase: video.context.pointee.time_base)
            }
        }
    }

    private func offer(_ packet: Packet, isVideo: Bool, timeBase: AVRational) throws {
        if let sizeGate {
            try sizeGate.offer(packet, isVideo: isVideo, timeBase: timeBase, mux(_:isVideo:timeBase:))
        } else {
            try mux(packet, isVideo: isVideo, timeBase: timeBase)
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
