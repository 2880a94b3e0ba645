import CFFmpeg
import VMergeCore

/// --poster: a JPEG of one output picture, made from a frame the writer already has (no second
/// pass), or, when --max-size ended the output before that frame, decoded back from the output
/// itself: the poster always shows a picture the output holds. JPEG readers take YCbCr as
/// full-range BT.601, so the BT.709 limited-range picture is converted on the way. A keyed job's
/// poster carries its job key in a JPEG comment, so a later run of the same job knows a poster it
/// left (killed before its video was published) as its own.
enum Poster {
    /// The JPEG bytes of `frame` (an output frame: BT.709, limited range), with `key` in a
    /// comment segment right after the start marker.
    static func jpeg(of frame: Frame, file: String, key: String? = nil) throws -> [UInt8] {
        let f = frame.pointer.pointee
        let graph = try FilterGraph(
            sourceName: "buffer",
            sourceArgs: FilterGraph.videoSourceArgs(
                for: frame.pointer, width: Int(f.width), height: Int(f.height), timeBase: "1/30",
                sampleAspect: Rational(1, 1)),
            sinkName: "buffersink",
            description: "scale=in_color_matrix=bt709:in_range=tv:out_color_matrix=bt601:out_range=pc:flags=bicubic,"
                + "format=pix_fmts=yuvj420p",
            file: file)
        let copy = try Frame()
        try check(av_frame_ref(copy.pointer, frame.pointer), "making the poster", file: file)
        copy.pts = 0
        try graph.push(copy)
        try graph.close(at: 1)
        let picture = try Frame()
        guard try graph.pull(picture) == .ok else {
            throw VMergeError.ffmpeg(file: file, operation: "making the poster", message: "no picture")
        }
        let encoder = try Encoder.mjpeg(
            width: Int(picture.pointer.pointee.width), height: Int(picture.pointer.pointee.height), file: file)
        _ = try encoder.send(picture)
        _ = try encoder.send(nil)
        let packet = try Packet()
        var bytes: [UInt8] = []
        while try encoder.receive(packet) == .ok {
            let p = packet.pointer.pointee
            if let data = p.data, p.size > 0 { bytes += UnsafeBufferPointer(start: data, count: Int(p.size)) }
            packet.unref()
        }
        guard bytes.count > 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw VMergeError.ffmpeg(file: file, operation: "making the poster", message: "the JPEG encoder gave nothing")
        }
        return key.map { PosterKey.tag(bytes, key: $0) } ?? bytes
    }

    /// The picture at `micros` (or the last one before the end) of a written output, decoded back.
    static func frame(ofOutput path: String, atMicros micros: Int64) throws -> Frame {
        let input = try InputFile(path: path, analyse: false, followLinks: false)
        guard let index = input.bestStream(AVMEDIA_TYPE_VIDEO), let index32 = Int32(exactly: index) else {
            throw VMergeError.ffmpeg(file: path, operation: "making the poster", message: "the output has no video")
        }
        try input.keepOnly(streams: [index])
        let stream = try input.stream(index)
        let decoder = try Decoder(stream: stream, file: path, threads: 1)
        let wanted = av_rescale_q(micros, AVRational(num: 1, den: 1_000_000), stream.pointee.time_base)
        _ = input.seek(stream: index32, toKeyframeAtOrBefore: wanted)
        let packet = try Packet()
        let picture = try Frame()
        let kept = try Frame()
        var draining = false
        while true {
            if !draining {
                if try input.read(into: packet) {
                    defer { packet.unref() }
                    guard packet.pointer.pointee.stream_index == index32 else { continue }
                    _ = try decoder.send(packet)
                } else {
                    _ = try decoder.send(nil)
                    draining = true
                }
            }
            while try decoder.receive(picture) == .ok {
                let time = picture.pointer.pointee.best_effort_timestamp
                kept.unref()
                try check(av_frame_ref(kept.pointer, picture.pointer), "making the poster", file: path)
                picture.unref()
                if time != noPTS && time >= wanted { return kept }
            }
            if draining { break }
        }
        guard kept.pointer.pointee.buf.0 != nil else {
            throw VMergeError.ffmpeg(file: path, operation: "making the poster", message: "the output has no picture")
        }
        return kept
    }
}
