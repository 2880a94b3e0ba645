import CFFmpeg
import VMergeCore

/// Owns a decoder (AVCodecContext) for one input stream.
final class Decoder {
    /// 0 (FFmpeg's own count: the CPUs the affinity allows, plus one) unless a container's CPU
    /// quota allows fewer (`CPUBudget`); then that many plus one, as FFmpeg would count them.
    /// Decoding makes the same pictures with any count, so outputs stay byte-identical.
    static let budgetThreads: Int32 = CPUBudget.cores < Int(av_cpu_count()) ? Int32(min(CPUBudget.cores + 1, 16)) : 0

    let context: UnsafeMutablePointer<AVCodecContext>
    let file: String
    /// The file name FFmpeg's log lines from this decoder are tagged with (its worker threads
    /// copy the context, `opaque` included).
    private let logTag: FFmpegLog.Tag

    /// - Parameters:
    ///   - undeblocked: the pictures left without the in-loop deblocking filter (see
    ///     `SkipDeblocking`).
    ///   - threads: decoding threads (the default: as many as the cores this process may use,
    ///     frame threads where the codec has them).
    init(
        stream: UnsafeMutablePointer<AVStream>, file: String, undeblocked: UndeblockedPictures = .none,
        threads: Int32 = Decoder.budgetThreads
    )
        throws
    {
        self.file = file
        logTag = FFmpegLog.Tag(file)
        let parameters = try nonNull(stream.pointee.codecpar, "reading the stream's codec parameters", file: file)
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw VMergeError.invalidInput(file: file, reason: "no decoder for codec '\(name)' in this FFmpeg build")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw VMergeError.io(file: file, message: "out of memory")
        }
        self.context = context
        context.pointee.opaque = logTag.pointer
        try check(avcodec_parameters_to_context(context, parameters), "setting up the decoder", file: file)
        context.pointee.pkt_timebase = stream.pointee.time_base
        context.pointee.thread_count = threads
        // A picture whose stream crops its left or top edge (an H.264 SPS crop) is cut exactly,
        // not to an aligned column that leaves some of the edge in.
        context.pointee.flags |= Int32(AV_CODEC_FLAG_UNALIGNED)
        switch undeblocked {
        case .none: break
        case .unreferenced: context.pointee.skip_loop_filter = AVDISCARD_NONREF
        case .all: context.pointee.skip_loop_filter = AVDISCARD_ALL
        }
        try check(
            avcodec_open2(context, codec, nil), "opening the \(String(cString: codec.pointee.name)) decoder", file: file
        )
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
    }

    /// Sends a packet, or nil to start draining.
    func send(_ packet: Packet?) throws -> Outcome {
        try outcome(avcodec_send_packet(context, packet?.pointer), "decoding", file: file)
    }

    func receive(_ frame: Frame) throws -> Outcome {
        try outcome(avcodec_receive_frame(context, frame.pointer), "decoding", file: file)
    }
}

/// Owns an encoder (AVCodecContext).
final class Encoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    let file: String

    private init(
        codecName: String, file: String, configure: (UnsafeMutablePointer<AVCodecContext>) throws -> Void,
        options: [String: String]
    ) throws {
        self.file = file
        guard let codec = avcodec_find_encoder_by_name(codecName) else {
            throw VMergeError.ffmpeg(
                file: file, operation: "finding the \(codecName) encoder",
                message: "this FFmpeg build has no \(codecName)")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw VMergeError.io(file: file, message: "out of memory")
        }
        self.context = context
        try configure(context)
        // Set on the encoder's private options, not passed to avcodec_open2: FFmpeg 7.1.0
        // tries the generic options first and rejects "profile=high" there.
        for (key, value) in options.sorted(by: { $0.key < $1.key }) {
            try check(
                av_opt_set(context.pointee.priv_data, key, value, 0), "setting \(codecName) option \(key)=\(value)",
                file: file)
        }
        try check(avcodec_open2(context, codec, nil), "opening the \(codecName) encoder", file: file)
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
    }

    /// A picture size as FFmpeg's 32-bit fields hold it; one past that is refused, not truncated.
    private static func pictureSize(_ width: Int, _ height: Int, operation: String, file: String) throws -> (Int32, Int32) {
        guard let width32 = Int32(exactly: width), let height32 = Int32(exactly: height), width32 > 0, height32 > 0
        else {
            throw VMergeError.ffmpeg(file: file, operation: operation, message: "picture size \(width)x\(height) is out of range")
        }
        return (width32, height32)
    }

    /// x264's frame threads: what 2-4 cores use anyway at these small sizes (see BENCH.md).
    static let x264Threads: Int32 = 4

    /// x264's own settings. Without threaded lookahead: it made the output differ from run to
    /// run when the decoder's threads compete for the cores (3 in 10 runs of 50 clips); without
    /// it the output is byte-identical every time, and no slower. And at most AVX2 on a CPU that
    /// has AVX-512: x264's AVX-512 code (0.164, Debian 12) reads memory it never wrote, so the
    /// same frames came out as other bytes whenever the heap held something else (every later
    /// job of a batch or worker; MALLOC_PERTURB_ changes them too). With AVX2 they never do; the
    /// file differs from an AVX-512 run's by rounding (bench set B, 50 clips: +0.04 % bytes,
    /// -0.0006 dB), at no measurable cost (BENCH.md).
    static let x264Params: String = {
        var params = "sync-lookahead=0"
        #if arch(x86_64) || arch(i386)
            if av_get_cpu_flags() & AV_CPU_FLAG_AVX512 != 0 { params += ":asm=AVX2" }
        #endif
        return params
    }()

    /// libx264, yuv420p, BT.709-tagged, at a constant frame rate.
    static func h264(
        width: Int, height: Int, frameRate: Rational, crf: Double, preset: X264Preset, profile: String,
        globalHeader: Bool, file: String
    ) throws -> Encoder {
        // FFmpeg holds these in 32 bits: a value past that is refused, not truncated (or trapped on).
        let setup = "setting up the libx264 encoder"
        guard let rate = frameRate.int32Parts, rate.num > 0, rate.den > 0 else {
            throw VMergeError.ffmpeg(
                file: file, operation: setup,
                message: "frame rate \(frameRate) is not positive or does not fit FFmpeg's 32-bit fractions")
        }
        let (width32, height32) = try pictureSize(width, height, operation: setup, file: file)
        return try Encoder(
            codecName: "libx264", file: file,
            configure: { c in
                c.pointee.width = width32
                c.pointee.height = height32
                c.pointee.pix_fmt = AV_PIX_FMT_YUV420P
                c.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
                c.pointee.time_base = AVRational(num: rate.den, den: rate.num)
                c.pointee.framerate = AVRational(num: rate.num, den: rate.den)
                c.pointee.color_primaries = AVCOL_PRI_BT709
                c.pointee.color_trc = AVCOL_TRC_BT709
                c.pointee.colorspace = AVCOL_SPC_BT709
                c.pointee.color_range = AVCOL_RANGE_MPEG
                // A fixed count, not one per core: x264's frame threads shape its decisions (and
                // the count is written into its settings), so the same inputs give the same bytes
                // on every machine, pinned to one core or spread over sixteen.
                c.pointee.thread_count = Encoder.x264Threads
                if globalHeader { c.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER) }
            },
            options: [
                "preset": preset.rawValue, "profile": profile, "crf": formatDecimal(crf),
                "x264-params": Encoder.x264Params,
            ])
    }

    /// FFmpeg's JPEG encoder (mjpeg) at a fixed high quality, full-range 4:2:0 input, for the
    /// poster.
    static func mjpeg(width: Int, height: Int, file: String) throws -> Encoder {
        let (width32, height32) = try pictureSize(width, height, operation: "setting up the JPEG encoder", file: file)
        return try Encoder(
            codecName: "mjpeg", file: file,
            configure: { c in
                c.pointee.width = width32
                c.pointee.height = height32
                c.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
                c.pointee.color_range = AVCOL_RANGE_JPEG
                c.pointee.time_base = AVRational(num: 1, den: 30)
                // Quantiser 2 (of 1-31): a poster is looked at closely and is one picture.
                c.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
                c.pointee.global_quality = 2 * 118  // FF_QP2LAMBDA
                c.pointee.thread_count = 1
            },
            options: [:])
    }

    /// FFmpeg's native AAC-LC encoder, planar float input.
    static func aac(sampleRate: Int, channels: Int, bitRate: Int, globalHeader: Bool, file: String) throws -> Encoder {
        let setup = "setting up the aac encoder"
        guard let rate = Int32(exactly: sampleRate), rate > 0 else {
            throw VMergeError.ffmpeg(file: file, operation: setup, message: "sample rate \(sampleRate) is out of range")
        }
        guard let channels32 = Int32(exactly: channels), channels32 > 0 else {
            throw VMergeError.ffmpeg(file: file, operation: setup, message: "channel count \(channels) is out of range")
        }
        return try Encoder(
            codecName: "aac", file: file,
            configure: { c in
                c.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
                c.pointee.sample_rate = rate
                vm_channel_layout_default(&c.pointee.ch_layout, channels32)
                c.pointee.bit_rate = Int64(bitRate)
                c.pointee.time_base = AVRational(num: 1, den: rate)
                if globalHeader { c.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER) }
            }, options: [:])
    }

    func send(_ frame: Frame?) throws -> Outcome {
        try outcome(avcodec_send_frame(context, frame?.pointer), "encoding", file: file)
    }

    func receive(_ packet: Packet) throws -> Outcome {
        try outcome(avcodec_receive_packet(context, packet.pointer), "encoding", file: file)
    }
}
