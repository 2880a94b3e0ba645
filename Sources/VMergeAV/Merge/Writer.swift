import CFFmpeg
import VMergeCore

/// The encode and mux stage: takes upright, scaled frames of each picture the job makes (its
/// own and each rendition's, `PictureOutput`) and output-format audio; encodes the sound once as
/// AAC and muxes it into every file, each an interleaved, faststart MP4. Audio is placed by
/// output sample position, so every clip's sound lines up with its pictures exactly.
final class Writer {
    /// The job's own picture first, then each rendition's.
    let pictures: [PictureOutput]
    private let audio: Encoder
    private let fifo: AudioFifo
    private let packet: Packet
    private let audioFrame: Frame
    private let audioFrameSize: Int
    private let path: String

    /// Output samples placed so far (the position of the next sample).
    private(set) var audioPosition: Int64 = 0
    /// Samples handed to the AAC encoder so far.
    private var audioEncoded: Int64 = 0

    /// The job's own file.
    var output: OutputFile { pictures[0].output }
    /// The next output frame index the job's own picture expects.
    var nextFrameIndex: Int64 { pictures[0].nextFrameIndex }
    /// Set once --max-size ended the job's own file.
    var isTruncated: Bool { pictures[0].isTruncated }
    /// Video frames and audio samples in the job's own file so far.
    var framesWritten: Int64 { pictures[0].framesWritten }
    var samplesWritten: Int64 { pictures[0].samplesWritten }
    /// The poster's frame (see `PictureOutput.posterPicture`): of the job's own picture.
    var posterPicture: Frame? { pictures[0].posterPicture }

    /// - Parameter files: one per picture of `options.pictures`, the job's own first.
    /// - Parameter recording: the first kept clip's creation time and tags (not written with
    ///   --strip-metadata).
    /// - Parameter chapters: one per clip (--chapters), on the output's timeline.
    /// - Parameter posterIndex: the output frame to keep for --poster.
    /// - Parameter recordedKeys: the key each file records (keyed runs: the job's for its own,
    ///   each rendition's its own, see `JobKey.rendition`), one per file or none.
    init(
        files: [WriterFile], options: MergeOptions, creationTime: String?,
        recording: RecordingTags = RecordingTags(), chapters: [Chapter] = [], posterIndex: Int64? = nil,
        recordedKeys: [String?] = [], cancel: CancelToken? = nil
    ) throws {
        let shapes = options.pictures
        guard let first = files.first, files.count == shapes.count else {
            throw VMergeError.io(file: files.first?.path ?? "-", message: "one file is needed for each picture")
        }
        path = first.path
        // Every file is an MP4 or a QuickTime movie: both take the codecs' headers globally.
        audio = try Encoder.aac(
            sampleRate: options.sampleRate, channels: options.channels, bitRate: options.audioBitRate,
            globalHeader: true, file: first.path)
        // The AAC encoder above refused a channel count past Int32.
        fifo = try AudioFifo(channels: Int32(clamping: options.channels), file: first.path)
        packet = try Packet()
        audioFrame = try Frame()
        let frameSize = Int(audio.context.pointee.frame_size)
        audioFrameSize = frameSize > 0 ? frameSize : 1024
        var metadata: [(String, String)] = []
        if !options.stripMetadata {
            if let creationTime { metadata.append(("creation_time", creationTime)) }
            metadata += recording.outputTags.map { ($0, $1) }
        }
        var pictures: [PictureOutput] = []
        for (index, file) in files.enumerated() {
            let key = index < recordedKeys.count ? recordedKeys[index] : nil
            pictures.append(
                try PictureOutput(
                    file, options: shapes[index], audio: audio,
                    metadata: metadata + (key.map { [("comment", JobKey.tagPrefix + $0)] } ?? []), chapters: chapters,
                    posterIndex: index == 0 ? posterIndex : nil, cancel: cancel))
        }
        self.pictures = pictures
    }

    /// Each file's whole tag (see `JobTag`), once every clip is decoded; replaces the key alone.
    var finalTags: [String?] = []

    /// Carries out one command of the decode/filter stage. Throws `SizeLimitReached` once
    /// --max-size has ended every file.
    func apply(_ command: WriterCommand) throws {
        if pictures.allSatisfy(\.isTruncated) { throw SizeLimitReached() }
        switch command {
        case let .video(frame, picture): try pictures[picture].take(frame)
        case let .audio(frame, start, end, exact): try writeAudio(frame, start: start, end: end, exact: exact)
        case let .padAudio(position): try padAudio(to: position)
        case let .fillVideo(end): for picture in pictures { try picture.fillVideo(upTo: end) }
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
        try fifo.writeSilence(place.silenceBefore, file: path)
        try fifo.write(frame.pointer, offset: place.dropFront, count: place.keep, file: path)
        audioPosition += Int64(place.silenceBefore + place.keep)
        try encodeAudio(flush: false)
    }

    /// Fills with silence up to output sample `position`.
    func padAudio(to position: Int64) throws {
        // In encoder-sized steps, so a long silent stretch never piles up in the buffer.
        while position > audioPosition {
            let n = Int(min(position - audioPosition, Int64(audioFrameSize)))
            try fifo.writeSilence(n, file: path)
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
                "preparing audio", file: path)
            try check(av_frame_get_buffer(audioFrame.pointer, 0), "preparing audio", file: path)
            _ = fifo.read(into: audioFrame.pointer, count: n)
            audioFrame.pts = audioEncoded
            audioEncoded += Int64(n)
            _ = try audio.send(audioFrame)
            try drainAudio()
        }
    }

    /// Hands every AAC packet ready to every file.
    private func drainAudio() throws {
        while true {
            switch try audio.receive(packet) {
            case .again, .endOfStream: return
            case .ok:
                defer { packet.unref() }
                for picture in pictures {
                    try picture.takeAudio(packet, timeBase: audio.context.pointee.time_base)
                }
            }
        }
    }

    // MARK: finishing

    /// Flushes the encoders and finishes every file; a file --max-size stopped is finished with
    /// what fitted.
    func finish() throws {
        if !pictures.allSatisfy(\.isTruncated) {
            try encodeAudio(flush: true)
            _ = try audio.send(nil)
            try drainAudio()
        }
        for (index, picture) in pictures.enumerated() {
            try picture.finish(tag: index < finalTags.count ? finalTags[index] : nil)
        }
    }
}

/// Thrown by the writer once --max-size has ended the output: not a failure.
struct SizeLimitReached: Error {}
