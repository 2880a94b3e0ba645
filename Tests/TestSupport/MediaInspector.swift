import CFFmpeg
import Foundation
#if canImport(XCTest)
    import XCTest
#endif

/// Reads vmerge's output back through libavformat/libavcodec, independently of vmerge's own
/// pipeline, so tests assert on what a player would see.
public struct MediaInspector {
    public struct StreamSummary {
        public var codec: String
        public var profile: String?
        public var width = 0, height = 0
        public var pixelFormat: String?
        public var sampleRate = 0, channels = 0
        public var colorSpace: String?, colorPrimaries: String?, colorTransfer: String?
        public var sampleAspect = (0, 0)
        public var hasDisplayMatrix = false
    }

    public let path: String

    public init(path: String) { self.path = path }

    /// Opens the file and returns per-type stream summaries plus container metadata.
    public func streams() throws -> (video: StreamSummary?, audio: StreamSummary?, creationTime: String?) {
        let ctx = try open()
        defer { close(ctx) }
        var video: StreamSummary?, audio: StreamSummary?
        for i in 0..<Int(ctx.pointee.nb_streams) {
            let st = ctx.pointee.streams[i]!
            let par = st.pointee.codecpar.pointee
            var s = StreamSummary(codec: String(cString: avcodec_get_name(par.codec_id)))
            s.profile = avcodec_profile_name(par.codec_id, par.profile).map { String(cString: $0) }
            if par.codec_type == AVMEDIA_TYPE_VIDEO {
                s.width = Int(par.width)
                s.height = Int(par.height)
                s.pixelFormat = av_get_pix_fmt_name(AVPixelFormat(rawValue: par.format)).map { String(cString: $0) }
                s.colorSpace = av_color_space_name(par.color_space).map { String(cString: $0) }
                s.colorPrimaries = av_color_primaries_name(par.color_primaries).map { String(cString: $0) }
                s.colorTransfer = av_color_transfer_name(par.color_trc).map { String(cString: $0) }
                s.sampleAspect = (Int(par.sample_aspect_ratio.num), Int(par.sample_aspect_ratio.den))
                s.hasDisplayMatrix = vm_stream_display_matrix(st) != nil
                video = s
            } else if par.codec_type == AVMEDIA_TYPE_AUDIO {
                s.sampleRate = Int(par.sample_rate)
                s.channels = Int(par.ch_layout.nb_channels)
                audio = s
            }
        }
        let tag = av_dict_get(ctx.pointee.metadata, "creation_time", nil, 0)
        return (video, audio, tag.map { String(cString: $0.pointee.value) })
    }

    /// Every decoded video frame's presentation time (seconds, after edit lists), and RGB24
    /// pixels for the frames whose time is closest to each of `grabTimes`.
    public func videoFrames(grabTimes: [Double] = []) throws -> (times: [Double], grabs: [RGBImage]) {
        var times: [Double] = []
        var candidates: [(time: Double, image: RGBImage)?] = Array(repeating: nil, count: grabTimes.count)
        try decode(type: AVMEDIA_TYPE_VIDEO) { frame, timeBase in
            let t = Double(frame.pointee.best_effort_timestamp) * av_q2d(timeBase)
            times.append(t)
            let wanted = grabTimes.indices.filter { i in
                candidates[i].map { abs($0.time - grabTimes[i]) > abs(t - grabTimes[i]) } ?? true
            }
            guard !wanted.isEmpty else { return }
            let image = try RGBImage(frame: frame)
            for i in wanted { candidates[i] = (t, image) }
        }
        return (times, candidates.map { $0!.image })
    }

    /// The frame closest to `time`: its 8-bit luma plane (code values, as stored) and its pixels
    /// converted to RGB with the BT.709 matrix the output declares.
    public func lumaAndRGB(at time: Double) throws -> (width: Int, luma: [UInt8], rgb: RGBImage, meanLuma: Double) {
        var best: (distance: Double, width: Int, luma: [UInt8], rgb: RGBImage)?
        try decode(type: AVMEDIA_TYPE_VIDEO) { frame, timeBase in
            let t = Double(frame.pointee.best_effort_timestamp) * av_q2d(timeBase)
            guard best.map({ abs(t - time) < $0.distance }) ?? true else { return }
            #if canImport(XCTest)
                XCTAssertEqual(frame.pointee.format, AV_PIX_FMT_YUV420P.rawValue)
            #endif
            let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
            let stride = Int(frame.pointee.linesize.0)
            var luma = [UInt8](repeating: 0, count: width * height)
            for y in 0..<height {
                for x in 0..<width { luma[y * width + x] = frame.pointee.data.0![y * stride + x] }
            }
            best = (abs(t - time), width, luma, try RGBImage(frame: frame, bt709: true))
        }
        guard let best else { throw InspectError("no video frame") }
        let mean = Double(best.luma.reduce(0) { $0 + Int($1) }) / Double(best.luma.count)
        return (best.width, best.luma, best.rgb, mean)
    }

    /// Every decoded video frame's mean luma code value (on a grid of about 107x60 samples, every
    /// 3rd column and 4th row of a 320x240 picture: enough to tell a flash from a dark frame), in
    /// presentation order.
    public func meanLumas() throws -> [Double] {
        var means: [(time: Int64, mean: Double)] = []
        try decode(type: AVMEDIA_TYPE_VIDEO) { frame, _ in
            let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
            let stride = Int(frame.pointee.linesize.0)
            let data = frame.pointee.data.0!
            var sum = 0, count = 0
            // A 1080x1920 picture is as fast to judge as a small one.
            let across = max(3, width / 107), down = max(4, height / 60)
            for y in Swift.stride(from: 0, to: height, by: down) {
                for x in Swift.stride(from: 0, to: width, by: across) {
                    sum += Int(data[y * stride + x])
                    count += 1
                }
            }
            means.append((frame.pointee.best_effort_timestamp, Double(sum) / Double(max(count, 1))))
        }
        return means.sorted { $0.time < $1.time }.map(\.mean)
    }

    /// Every decoded video frame's luma row `y` (code values), in presentation order.
    public func lumaRows(_ y: Int) throws -> [[UInt8]] {
        var rows: [(time: Int64, row: [UInt8])] = []
        try decode(type: AVMEDIA_TYPE_VIDEO) { frame, _ in
            let width = Int(frame.pointee.width), stride = Int(frame.pointee.linesize.0)
            let data = frame.pointee.data.0!
            rows.append((frame.pointee.best_effort_timestamp, (0..<width).map { data[y * stride + $0] }))
        }
        return rows.sorted { $0.time < $1.time }.map(\.row)
    }

    /// Decoded audio: the first channel's samples (as float) and the first frame's time.
    public func audioSamples() throws -> (samples: [Float], sampleRate: Int, startTime: Double) {
        var samples: [Float] = []
        var rate = 0
        var start: Double?
        try decode(type: AVMEDIA_TYPE_AUDIO) { frame, timeBase in
            rate = Int(frame.pointee.sample_rate)
            if start == nil { start = Double(frame.pointee.best_effort_timestamp) * av_q2d(timeBase) }
            #if canImport(XCTest)
                XCTAssertEqual(frame.pointee.format, AV_SAMPLE_FMT_FLTP.rawValue, "AAC decodes to planar float")
            #endif
            let n = Int(frame.pointee.nb_samples)
            frame.pointee.extended_data[0]!.withMemoryRebound(to: Float.self, capacity: n) {
                samples.append(contentsOf: UnsafeBufferPointer(start: $0, count: n))
            }
        }
        return (samples, rate, start ?? 0)
    }

    /// Every packet's (file position, stream type, dts in seconds), in file order: shows how
    /// the streams are interleaved on disk.
    public func packetLayout() throws -> [(position: Int64, isVideo: Bool, time: Double)] {
        let ctx = try open()
        defer { close(ctx) }
        var pkt = av_packet_alloc()
        defer { av_packet_free(&pkt) }
        var layout: [(Int64, Bool, Double)] = []
        while av_read_frame(ctx, pkt) >= 0 {
            let st = ctx.pointee.streams[Int(pkt!.pointee.stream_index)]!
            let isVideo = st.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
            layout.append((pkt!.pointee.pos, isVideo, Double(pkt!.pointee.dts) * av_q2d(st.pointee.time_base)))
            av_packet_unref(pkt)
        }
        return layout.sorted { $0.0 < $1.0 }
    }

    // MARK: plumbing

    private func open() throws -> UnsafeMutablePointer<AVFormatContext> {
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_open_input(&ctx, path, nil, nil) >= 0, let ctx else { throw InspectError("cannot open \(path)") }
        guard avformat_find_stream_info(ctx, nil) >= 0 else { throw InspectError("no stream info in \(path)") }
        return ctx
    }

    private func close(_ ctx: UnsafeMutablePointer<AVFormatContext>) {
        var ctx: UnsafeMutablePointer<AVFormatContext>? = ctx
        avformat_close_input(&ctx)
    }

    private func decode(
        type: AVMediaType,
        _ body: (UnsafeMutablePointer<AVFrame>, AVRational) throws -> Void
    ) throws {
        let ctx = try open()
        defer { close(ctx) }
        let index = av_find_best_stream(ctx, type, -1, -1, nil, 0)
        guard index >= 0 else { throw InspectError("no such stream in \(path)") }
        let st = ctx.pointee.streams[Int(index)]!
        let codec = avcodec_find_decoder(st.pointee.codecpar.pointee.codec_id)
        var dec = avcodec_alloc_context3(codec)
        defer { avcodec_free_context(&dec) }
        avcodec_parameters_to_context(dec, st.pointee.codecpar)
        dec!.pointee.pkt_timebase = st.pointee.time_base
        guard avcodec_open2(dec, codec, nil) >= 0 else { throw InspectError("cannot open decoder") }
        var pkt = av_packet_alloc()
        var frame = av_frame_alloc()
        defer {
            av_packet_free(&pkt)
            av_frame_free(&frame)
        }
        func drain() throws {
            while avcodec_receive_frame(dec, frame) >= 0 {
                try body(frame!, st.pointee.time_base)
                av_frame_unref(frame)
            }
        }
        while av_read_frame(ctx, pkt) >= 0 {
            if pkt!.pointee.stream_index == index {
                avcodec_send_packet(dec, pkt)
                try drain()
            }
            av_packet_unref(pkt)
        }
        avcodec_send_packet(dec, nil)
        try drain()
    }
}

public struct InspectError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// An RGB24 copy of a decoded frame (converted with swscale; tests only).
public struct RGBImage {
    public let width: Int, height: Int
    public let pixels: [UInt8]

    /// - Parameter bt709: decode YUV with the BT.709 matrix (swscale's default is BT.601).
    public init(frame: UnsafeMutablePointer<AVFrame>, bt709: Bool = false) throws {
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        self.width = width
        self.height = height
        guard
            let sws = sws_getContext(
                Int32(width), Int32(height), AVPixelFormat(rawValue: frame.pointee.format),
                Int32(width), Int32(height), AV_PIX_FMT_RGB24, vm_sws_bilinear(), nil, nil, nil)
        else { throw InspectError("no swscale context") }
        defer { sws_freeContext(sws) }
        if bt709 {
            // Limited-range BT.709 in, full-range RGB out.
            let matrix = sws_getCoefficients(SWS_CS_ITU709)
            _ = sws_setColorspaceDetails(sws, matrix, 0, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
        }
        var buffer = [UInt8](repeating: 0, count: width * height * 3)
        buffer.withUnsafeMutableBufferPointer { out in
            var dst: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress, nil, nil, nil]
            var stride: [Int32] = [Int32(width * 3), 0, 0, 0]
            let src = UnsafeRawPointer(frame).assumingMemoryBound(to: AVFrame.self)
            withUnsafePointer(to: src.pointee.data) { dataTuple in
                withUnsafePointer(to: src.pointee.linesize) { lineTuple in
                    dataTuple.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { data in
                        lineTuple.withMemoryRebound(to: Int32.self, capacity: 8) { lines in
                            _ = sws_scale(sws, data, lines, 0, Int32(height), &dst, &stride)
                        }
                    }
                }
            }
        }
        pixels = buffer
    }

    public func pixel(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let i = (y * width + x) * 3
        return (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2]))
    }

    /// The named colour closest to the pixel, among the fixtures' palette.
    public func colour(_ x: Int, _ y: Int) -> String {
        let p = pixel(x, y)
        let palette: [(String, (Int, Int, Int))] = [
            ("red", (255, 0, 0)), ("green", (0, 255, 0)), ("blue", (0, 0, 255)), ("grey", (128, 128, 128)),
            ("yellow", (255, 255, 0)), ("white", (255, 255, 255)), ("black", (0, 0, 0)),
        ]
        return palette.min { a, b in
            let da = (a.1.0 - p.r) * (a.1.0 - p.r) + (a.1.1 - p.g) * (a.1.1 - p.g) + (a.1.2 - p.b) * (a.1.2 - p.b)
            let db = (b.1.0 - p.r) * (b.1.0 - p.r) + (b.1.1 - p.g) * (b.1.1 - p.g) + (b.1.2 - p.b) * (b.1.2 - p.b)
            return da < db
        }!.0
    }
}

/// Top-level MP4 box types in file order.
public func topLevelBoxes(_ path: String) throws -> [String] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    var boxes: [String] = []
    var offset = 0
    while offset + 8 <= data.count {
        var size = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        let type = String(decoding: data[offset + 4..<offset + 8], as: UTF8.self)
        if size == 1, offset + 16 <= data.count {
            size = data[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
        }
        if size == 0 { size = data.count - offset }
        guard size >= 8 else { break }
        boxes.append(type)
        offset += size
    }
    return boxes
}
