import CFFmpeg
import Foundation
import VMergeCore

/// Reads what the plan needs from one input without decoding it.
package enum Probe {
    /// Probes `path`; throws `VMergeError.invalidInput` for anything vmerge cannot merge.
    /// The job key a finished vmerge output records (nil when the file is not a complete MP4 with
    /// a video stream, or was not written for a job).
    package static func recordedJobKey(at path: String) -> String? { recordedJobTag(at: path)?.key }

    /// The whole tag a keyed output records (see `JobTag`).
    package static func recordedJobTag(at path: String) -> JobTag? {
        // Never through a link, and never blocking on a FIFO planted where the output goes.
        // Whole by its boxes, not by the demuxer's duration: FFmpeg 7 and later leave that unset
        // right after opening an MP4, which made every finished output look unfinished.
        guard MP4Layout.isWhole(path), let input = try? InputFile(path: path, analyse: false, followLinks: false),
            (try? videoStreamIndex(input)) != nil,
            let entry = av_dict_get(input.context.pointee.metadata, "comment", nil, 0),
            let value = entry.pointee.value
        else { return nil }
        return JobTag(parsing: String(cString: value))
    }

    /// The colour the video stream declares; a yuvj* format means full range even untagged.
    static func colour(of stream: UnsafeMutablePointer<AVStream>, parameters p: AVCodecParameters) -> ColourInfo {
        let name = { (text: UnsafePointer<CChar>?) in text.map { String(cString: $0) } ?? "unknown" }
        let format = AVPixelFormat(rawValue: p.format)
        let depth = av_pix_fmt_desc_get(format).map { Int($0.pointee.comp.0.depth) } ?? 8
        var range = p.color_range == AVCOL_RANGE_JPEG ? "pc" : p.color_range == AVCOL_RANGE_MPEG ? "tv" : "unknown"
        let formatName = name(av_get_pix_fmt_name(format))
        if range == "unknown" && formatName.hasPrefix("yuvj") { range = "pc" }
        var compatibility: Int32 = 0
        let profile = vm_stream_dovi_profile(stream, &compatibility)
        return ColourInfo(
            transfer: name(av_color_transfer_name(p.color_trc)),
            primaries: name(av_color_primaries_name(p.color_primaries)),
            matrix: name(av_color_space_name(p.color_space)), range: range, bitDepth: depth,
            dolbyVision: profile >= 0 ? (Int(profile), Int(compatibility)) : nil)
    }

    /// - Parameters:
    ///   - confinement: where the input may be (a watch job: inside its folder).
    ///   - cancel: stops the reading when set (as a signal does).
    ///   - sources: the job's remote inputs, read by name.
    package static func clip(
        at path: String, confinedTo confinement: InputConfinement? = nil, sources: (any InputSources)? = nil,
        cancel: CancelToken? = nil
    ) throws -> (ClipInfo, [Diagnostic]) {
        let input: InputFile
        do {
            input = try InputFile.open(path, confinement: confinement, sources: sources, cancel: cancel)
        } catch let VMergeError.invalidInput(file, reason) {
            // A phone recording cut off (battery, crash) has its media data but not its index.
            let boxes = (try? SafeFile.openForReading(path, confinedTo: confinement)).map(MP4Layout.topLevelBoxes) ?? []
            if boxes.contains("mdat") && !boxes.contains("moov") {
                throw VMergeError.invalidInput(
                    file: file,
                    reason: "recording was interrupted before its index (moov box) was written; it cannot be read")
            }
            throw VMergeError.invalidInput(file: file, reason: reason)
        }
        return try clip(input, path: path, fileSize: input.fileSize)
    }

    /// Probes bytes in memory (read through a custom AVIOContext): the fuzz target's way in.
    package static func clip(memory bytes: [UInt8], name: String) throws -> (ClipInfo, [Diagnostic]) {
        guard !bytes.isEmpty else { throw VMergeError.invalidInput(file: name, reason: "file is empty") }
        let input = try InputFile(memory: MemorySource(bytes), name: name)
        return try clip(input, path: name, fileSize: Int64(bytes.count))
    }

    private static func clip(_ input: InputFile, path: String, fileSize: Int64) throws -> (ClipInfo, [Diagnostic]) {
        var diagnostics: [Diagnostic] = []
        // Bounds a hostile file cannot talk its way past (see Limits).
        if input.streamCount > Limits.maxStreams {
            throw VMergeError.invalidInput(
                file: path,
                reason: "has \(input.streamCount) streams; more than \(Limits.maxStreams) is not a recording")
        }

        guard let videoIndex = try videoStreamIndex(input) else {
            throw VMergeError.invalidInput(file: path, reason: "no video stream")
        }
        let stream = try input.stream(videoIndex)
        let video = try videoInfo(input, stream: stream, index: videoIndex, path: path, fileSize: fileSize)
        if let dovi = video.colour.dolbyVision, video.colour.dynamicRange == .sdr,
            dovi.profile != 8 || dovi.compatibility != 2
        {
            diagnostics.append(
                Diagnostic(
                    .warning, file: path,
                    "Dolby Vision profile \(dovi.profile) without an HLG or HDR10 base layer: colours will be off"))
        }

        let duration = try videoDurationMicros(input, stream: stream, index: videoIndex)
        guard duration > 0 else { throw VMergeError.invalidInput(file: path, reason: "video stream has no frames") }

        let audio = try audioInfo(input, path: path, diagnostics: &diagnostics)

        let container = String(cString: input.context.pointee.iformat.pointee.name)
        var info = ClipInfo(
            path: path, container: container,
            durationMicros: duration, video: video, audio: audio,
            creationTime: try input.metadata("creation_time") ?? input.metadata("creation_time", stream: videoIndex))
        (info.notARecording, info.leftOut) = try footage(
            input, container: container, video: videoIndex, rate: video.frameRate, durationMicros: duration,
            audio: input.bestStream(AVMEDIA_TYPE_AUDIO), decodedAudio: audio != nil)
        info.recording = RecordingTags { input.metadata($0) }
        info.fileSize = fileSize
        info.fileID = input.fileID
        // A remote name has no folder here ("s3://bucket" is no path to look up).
        var folder = stat()
        if info.fileID != nil, POSIX.stat(FileName(SafeFile.split(path).folder), &folder) == 0 {
            info.folderID = FileID(folder)
        }
        return (info, diagnostics)
    }

    /// The video stream's codec, size, shape, rate, turn and colour; refused when it cannot be
    /// decoded or the file ends before its index says.
    private static func videoInfo(
        _ input: InputFile, stream: UnsafeMutablePointer<AVStream>, index: Int, path: String, fileSize: Int64
    ) throws -> VideoInfo {
        let parameters = try input.parameters(ofStream: index)
        let codecName = String(cString: avcodec_get_name(parameters.codec_id))
        guard avcodec_find_decoder(parameters.codec_id) != nil else {
            throw VMergeError.invalidInput(
                file: path, reason: "no decoder for video codec '\(codecName)' in this FFmpeg build")
        }
        guard parameters.width > 0, parameters.height > 0 else {
            throw VMergeError.invalidInput(file: path, reason: "video stream has no picture size")
        }
        try checkNotTruncated(input, stream: stream, fileSize: fileSize)

        var orientation = Orientation.identity
        if let matrix = vm_stream_display_matrix(stream) {
            orientation = Orientation(displayMatrix: Array(UnsafeBufferPointer(start: matrix, count: 9)))
        }
        let sar = av_guess_sample_aspect_ratio(input.context, stream, nil)
        var rate = av_guess_frame_rate(input.context, stream, nil)
        // FFmpeg's guess is the lowest rate every timestamp fits. A phone's variable rate jitters
        // every frame off the grid, so that is the time base itself (90000 fps, which the limits
        // would refuse as no recording); the average is what was recorded.
        let average = stream.pointee.avg_frame_rate
        if average.num > 0, average.den > 0, rate.num <= 0 || rate.den <= 0 || av_q2d(rate) > 2 * av_q2d(average) {
            rate = average
        }
        let pixelFormat =
            av_get_pix_fmt_name(AVPixelFormat(rawValue: parameters.format)).map { String(cString: $0) } ?? "unknown"
        return VideoInfo(
            streamIndex: index, codec: codecName, width: Int(parameters.width), height: Int(parameters.height),
            sampleAspect: Rational(Int(sar.num), Int(sar.den)), pixelFormat: pixelFormat,
            frameRate: Rational(Int(rate.num), Int(rate.den)), orientation: orientation,
            colour: colour(of: stream, parameters: parameters), cropping: PictureCrop(pixelFormat: parameters.format))
    }

    /// The sound to decode, if there is one it can: an undecodable one is a warning and silence.
    private static func audioInfo(_ input: InputFile, path: String, diagnostics: inout [Diagnostic]) throws
        -> AudioInfo?
    {
        guard let audioIndex = input.bestStream(AVMEDIA_TYPE_AUDIO) else { return nil }
        let a = try input.parameters(ofStream: audioIndex)
        let name = String(cString: avcodec_get_name(a.codec_id))
        if avcodec_find_decoder(a.codec_id) == nil {
            diagnostics.append(Diagnostic(.warning, file: path, "no decoder for audio codec '\(name)'; using silence"))
            return nil
        }
        if a.sample_rate <= 0 || a.ch_layout.nb_channels <= 0 {
            diagnostics.append(
                Diagnostic(.warning, file: path, "audio stream has no sample rate or channels; using silence"))
            return nil
        }
        return AudioInfo(
            streamIndex: audioIndex, codec: name, sampleRate: Int(a.sample_rate), channels: Int(a.ch_layout.nb_channels)
        )
    }

    /// What of the file is recorded footage the output can hold whole (see ClipInfo.notARecording,
    /// leftOut). A still image or a single picture is never consumed; every other video, sound or
    /// subtitle track, sound running on more than 0.1 s past the picture, and every data track
    /// but a timecode (GoPro telemetry, Apple's timed metadata: see `MetadataTrack`) is footage the
    /// output does not carry. Timecode and cover art are not footage.
    private static func footage(
        _ input: InputFile, container: String, video: Int, rate: Rational, durationMicros: Int64, audio: Int?,
        decodedAudio: Bool
    ) throws -> (String?, [String]) {
        var notARecording: String?
        let frames = try input.stream(video).pointee.nb_frames
        if container == "image2" || container.hasSuffix("_pipe") {
            notARecording = "it is a still image"
        } else if frames == 1 || (frames <= 0 && Double(durationMicros) / 1e6 * rate.doubleValue < 1.5) {
            notARecording = "it holds a single picture"
        }
        // Where a stream starts (Int64.min: out of range) and ends on the file's clock.
        func startMicros(_ stream: UnsafeMutablePointer<AVStream>) -> Int64 {
            stream.pointee.start_time == noPTS
                ? 0 : av_rescale_q(stream.pointee.start_time, stream.pointee.time_base, microsBase)
        }
        func endMicros(_ stream: UnsafeMutablePointer<AVStream>) -> Int64? {
            let start = startMicros(stream)
            guard start != Int64.min, stream.pointee.duration > 0, stream.pointee.duration != noPTS else { return nil }
            let length = av_rescale_q(stream.pointee.duration, stream.pointee.time_base, microsBase)
            return length == Int64.min ? nil : start.addingSaturating(length)
        }
        let pictureStart = startMicros(try input.stream(video))
        let pictureEnd = pictureStart == Int64.min ? nil : Optional(pictureStart.addingSaturating(durationMicros))
        var leftOut = try hiddenByEditList(input, container: container, video: video, durationMicros: durationMicros)
        for index in 0..<input.streamCount where index != video {
            let stream = try input.stream(index)
            let type = try input.parameters(ofStream: index).codec_type
            if type == AVMEDIA_TYPE_VIDEO && stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0 {
                leftOut.append("its second video track (stream \(index))")
            } else if type == AVMEDIA_TYPE_SUBTITLE {
                leftOut.append("its subtitle track (stream \(index))")
            } else if type == AVMEDIA_TYPE_AUDIO && index != audio {
                leftOut.append("its other sound track (stream \(index))")
            } else if type == AVMEDIA_TYPE_AUDIO && !decodedAudio {
                leftOut.append("its sound, which cannot be decoded (stream \(index))")
            } else if type == AVMEDIA_TYPE_DATA || type == AVMEDIA_TYPE_UNKNOWN {
                let parameters = try input.parameters(ofStream: index)
                if let what = MetadataTrack.leftOut(
                    tag: parameters.codec_tag, codec: String(cString: avcodec_get_name(parameters.codec_id)),
                    index: index, inChapterList: input.context.pointee.nb_chapters > 0,
                    isData: type == AVMEDIA_TYPE_DATA)
                {
                    leftOut.append(what)
                }
            } else if type == AVMEDIA_TYPE_AUDIO {
                // The output's sound starts with the first picture and ends with the last.
                if let soundEnd = endMicros(stream), let pictureEnd, soundEnd > pictureEnd.addingSaturating(100_000) {
                    leftOut.append(
                        "its sound's last \(formatSeconds(Double(soundEnd - pictureEnd) / 1e6)) s, past its picture")
                }
                let soundStart = startMicros(stream)
                if soundStart != Int64.min, pictureStart != Int64.min, soundStart < pictureStart - 100_000 {
                    leftOut.append(
                        "its sound's first \(formatSeconds(Double(pictureStart - soundStart) / 1e6)) s, before its picture"
                    )
                }
            }
        }
        return (notARecording, leftOut)
    }

    /// A QuickTime/MP4 edit list can show less of the track than it holds (ffmpeg -ss ... -c copy,
    /// an editor's non-destructive trim): the rest is in the file but in no output. The demuxer
    /// counts every sample (nb_frames) and takes the mean rate over all of them.
    private static func hiddenByEditList(_ input: InputFile, container: String, video: Int, durationMicros: Int64)
        throws
        -> [String]
    {
        let picture = try input.stream(video)
        let mean = picture.pointee.avg_frame_rate
        if container.hasPrefix("mov,"), picture.pointee.nb_frames > 0, mean.num > 0, mean.den > 0 {
            let held = av_rescale_q(picture.pointee.nb_frames, AVRational(num: mean.den, den: mean.num), microsBase)
            if held > durationMicros.addingSaturating(100_000) {
                return [
                    "\(formatSeconds(Double(held - durationMicros) / 1e6)) s of its picture that its edit list hides"
                ]
            }
        }
        return []
    }

    /// The main video stream, skipping cover art (attached pictures).
    private static func videoStreamIndex(_ input: InputFile) throws -> Int? {
        let isPicture = { (i: Int) in try input.stream(i).pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 }
        if let best = input.bestStream(AVMEDIA_TYPE_VIDEO), try !isPicture(best) { return best }
        return try (0..<input.streamCount).first {
            try input.parameters(ofStream: $0).codec_type == AVMEDIA_TYPE_VIDEO && !isPicture($0)
        }
    }

    /// A recording whose sample table points past the end of the file was cut short (copied
    /// while still being written, or an interrupted upload).
    private static func checkNotTruncated(_ input: InputFile, stream: UnsafeMutablePointer<AVStream>, fileSize: Int64)
        throws
    {
        let entries = avformat_index_get_entries_count(stream)
        guard entries > 0, let last = avformat_index_get_entry(stream, entries - 1) else { return }
        var end: Int64 = 0
        // Samples need not be stored in order; look at the tail of the table for the furthest one.
        for i in max(0, entries - 64)..<entries {
            if let entry = avformat_index_get_entry(stream, i) { end = max(end, vm_index_entry_end(entry)) }
        }
        end = max(end, vm_index_entry_end(last))
        if end > fileSize {
            throw VMergeError.invalidInput(
                file: input.path,
                reason: "file is truncated: its video data ends at byte \(end) but the file has \(fileSize) bytes")
        }
    }

    /// The video stream's own duration: from the container's track header when present,
    /// otherwise measured from the packets' timestamps.
    private static func videoDurationMicros(_ input: InputFile, stream: UnsafeMutablePointer<AVStream>, index: Int)
        throws -> Int64
    {
        let tb = stream.pointee.time_base
        // av_rescale_q gives Int64.min for a result past Int64 (or a time base that is no fraction).
        let outOfRange = VMergeError.invalidInput(
            file: input.path, reason: "video duration is out of range; the header is damaged")
        if stream.pointee.duration > 0 && stream.pointee.duration != noPTS {
            let micros = av_rescale_q(stream.pointee.duration, tb, microsBase)
            if micros == Int64.min { throw outOfRange }
            return micros
        }
        try input.keepOnly(streams: [index])
        let packet = try Packet()
        var first = Int64.max, end = Int64.min
        while try input.read(into: packet) {
            defer { packet.unref() }
            guard packet.pointer.pointee.stream_index == index else { continue }
            let pts = packet.pointer.pointee.pts != noPTS ? packet.pointer.pointee.pts : packet.pointer.pointee.dts
            guard pts != noPTS else { continue }
            first = min(first, pts)
            end = max(end, pts.addingSaturating(max(0, packet.pointer.pointee.duration)))
        }
        guard first != Int64.max, end > first else { return 0 }
        guard case let (span, false) = end.subtractingReportingOverflow(first) else { throw outOfRange }
        let micros = av_rescale_q(span, tb, microsBase)
        if micros == Int64.min { throw outOfRange }
        return micros
    }
}
