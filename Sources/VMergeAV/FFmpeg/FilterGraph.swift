import CFFmpeg
import CVMergeSupport
import VMergeCore

/// Owns an AVFilterGraph with one buffer source and one buffer sink, built from a filter
/// description string.
final class FilterGraph {
    private let graph: UnsafeMutablePointer<AVFilterGraph>
    private let source: UnsafeMutablePointer<AVFilterContext>
    private let sink: UnsafeMutablePointer<AVFilterContext>
    let file: String

    /// The video buffer source's parameters for pictures like `f`, shown at `width` x `height`
    /// (a picture cut by pointer is smaller than its frame says): size, pixel format, time base,
    /// sample aspect, and, where the filters negotiate them, colour space and range.
    static func videoSourceArgs(
        for f: UnsafePointer<AVFrame>, width: Int, height: Int, timeBase: String, sampleAspect: Rational
    ) -> String {
        let format =
            av_get_pix_fmt_name(AVPixelFormat(rawValue: f.pointee.format)).map { String(cString: $0) } ?? "yuv420p"
        var colour = [CChar](repeating: 0, count: 64)
        vm_buffersrc_colour_args(f, &colour, colour.count)
        return "video_size=\(width)x\(height):pix_fmt=\(format):time_base=\(timeBase)"
            + ":pixel_aspect=\(sampleAspect.num)/\(sampleAspect.den)" + string(fromCBuffer: colour)
    }

    /// - Parameters:
    ///   - sourceName: "buffer" or "abuffer".
    ///   - sourceArgs: the buffer source's parameters (size, format, time base...).
    ///   - description: the chain between source and sink.
    init(sourceName: String, sourceArgs: String, sinkName: String, description: String, file: String) throws {
        self.file = file
        guard let graph = avfilter_graph_alloc() else { throw VMergeError.io(file: file, message: "out of memory") }
        self.graph = graph
        graph.pointee.nb_threads = 1  // clips are small after cropping; threads go to codecs
        let source: UnsafeMutablePointer<AVFilterContext>
        let sink: UnsafeMutablePointer<AVFilterContext>
        let setup = "setting up filters '\(description)'"
        do {
            source = try FilterGraph.addFilter(sourceName, label: "in", args: sourceArgs, to: graph, setup, file: file)
            sink = try FilterGraph.addFilter(sinkName, label: "out", args: nil, to: graph, setup, file: file)
        } catch {
            var graph: UnsafeMutablePointer<AVFilterGraph>? = graph  // deinit does not run yet
            avfilter_graph_free(&graph)
            throw error
        }
        self.source = source
        self.sink = sink

        // parse_ptr consumes and replaces these lists; whatever is left afterwards is ours to free.
        var outputs = avfilter_inout_alloc()
        var inputs = avfilter_inout_alloc()
        defer {
            avfilter_inout_free(&outputs)
            avfilter_inout_free(&inputs)
        }
        guard let out = outputs, let inp = inputs else { throw VMergeError.io(file: file, message: "out of memory") }
        out.pointee.name = av_strdup("in")
        out.pointee.filter_ctx = source
        inp.pointee.name = av_strdup("out")
        inp.pointee.filter_ctx = sink
        try check(avfilter_graph_parse_ptr(graph, description, &inputs, &outputs, nil), setup, file: file)
        try check(avfilter_graph_config(graph, nil), setup, file: file)
    }

    deinit {
        var graph: UnsafeMutablePointer<AVFilterGraph>? = graph
        avfilter_graph_free(&graph)
    }

    /// Creates filter `name` in `graph` (which owns it).
    private static func addFilter(
        _ name: String, label: String, args: String?, to graph: UnsafeMutablePointer<AVFilterGraph>,
        _ operation: String, file: String
    ) throws -> UnsafeMutablePointer<AVFilterContext> {
        guard let filter = avfilter_get_by_name(name) else {
            throw VMergeError.ffmpeg(
                file: file, operation: operation, message: "this FFmpeg build has no \(name) filter")
        }
        var context: UnsafeMutablePointer<AVFilterContext>?
        try check(avfilter_graph_create_filter(&context, filter, label, args, nil, graph), operation, file: file)
        return try nonNull(context, operation, file: file)
    }

    /// The sink's time base, valid once the graph is configured.
    var outputTimeBase: AVRational { av_buffersink_get_time_base(sink) }

    /// Pushes a frame (its reference is taken over; the frame is left blank).
    func push(_ frame: Frame) throws {
        try check(av_buffersrc_add_frame_flags(source, frame.pointer, 0), "filtering", file: file)
    }

    /// Signals the end of input at `pts` (in the source time base): filters such as fps fill
    /// the output up to exactly that time.
    func close(at pts: Int64) throws {
        try check(av_buffersrc_close(source, pts, UInt32(AV_BUFFERSRC_FLAG_PUSH)), "filtering", file: file)
    }

    func pull(_ frame: Frame) throws -> Outcome {
        try outcome(av_buffersink_get_frame(sink, frame.pointer), "filtering", file: file)
    }
}

extension FilterGraph {
    /// An audio graph fed frames like `f` (their rate, format and layout; an unspecified layout
    /// as the default one for its channel count), timestamps in microseconds.
    static func audio(for f: UnsafeMutablePointer<AVFrame>, description: String, file: String) throws -> FilterGraph {
        var layoutName = [CChar](repeating: 0, count: 128)
        var layout = AVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        if vm_channel_layout_is_unspecified(&f.pointee.ch_layout) != 0 {
            vm_channel_layout_default(&layout, f.pointee.ch_layout.nb_channels)
        } else {
            try check(av_channel_layout_copy(&layout, &f.pointee.ch_layout), "reading the audio layout", file: file)
        }
        av_channel_layout_describe(&layout, &layoutName, layoutName.count)
        let format =
            av_get_sample_fmt_name(AVSampleFormat(rawValue: f.pointee.format)).map { String(cString: $0) } ?? "fltp"
        let args =
            "time_base=1/1000000:sample_rate=\(f.pointee.sample_rate):sample_fmt=\(format)"
            + ":channel_layout=\(string(fromCBuffer: layoutName))"
        return try FilterGraph(
            sourceName: "abuffer", sourceArgs: args, sinkName: "abuffersink", description: description, file: file)
    }
}
