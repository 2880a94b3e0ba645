import CFFmpeg
import VMergeCore

/// --poster: a JPEG of one output picture, made from a frame the writer already has (no second
/// pass). JPEG readers take YCbCr as full-range BT.601, so the BT.709 limited-range picture is
/// converted on the way.
enum Poster {
    /// The JPEG bytes of `frame` (an output frame: yuv420p, BT.709, limited range).
    static func jpeg(of frame: Frame, file: String) throws -> [UInt8] {
        let f = frame.pointer.pointee
        let graph = try FilterGraph(
            sourceName: "buffer",
            sourceArgs: "video_size=\(f.width)x\(f.height):pix_fmt=\(AV_PIX_FMT_YUV420P.rawValue):time_base=1/30"
                + ":pixel_aspect=1/1",
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
        guard !bytes.isEmpty else {
            throw VMergeError.ffmpeg(file: file, operation: "making the poster", message: "the JPEG encoder gave nothing")
        }
        return bytes
    }
}
