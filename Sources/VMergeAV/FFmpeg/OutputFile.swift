import CFFmpeg
import CVMergeSupport
import VMergeCore

/// Owns an MP4 muxer (AVFormatContext) writing to one file, and its I/O context.
final class OutputFile {
    let path: String
    let context: UnsafeMutablePointer<AVFormatContext>
    /// The temporary file's descriptor, written through a custom AVIOContext.
    private let file: FileDescriptor
    private var io: UnsafeMutablePointer<AVIOContext>?
    private let logTag: FFmpegLog.Tag
    /// Keeps the interrupt callback's token alive as long as the muxer may call it.
    private let cancel: CancelToken?

    /// - Parameter muxer: "mp4" or "mov" (from the published name; the temporary's says nothing).
    init(path: String, file: FileDescriptor, logName: String, muxer: String = "mp4", cancel: CancelToken? = nil) throws {
        self.path = path
        self.file = file
        self.cancel = cancel
        logTag = FFmpegLog.Tag(logName)
        var context: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&context, nil, muxer, path), "creating the \(muxer) muxer", file: path)
        guard let context else { throw VMergeError.io(file: path, message: "out of memory") }
        self.context = context
        self.context.pointee.opaque = logTag.pointer
        self.context.pointee.interrupt_callback.callback = vm_interrupt_callback
        self.context.pointee.interrupt_callback.opaque = cancel.opaque
    }

    deinit {
        avformat_free_context(context)
        vm_fdio_free(&io)
    }

    var needsGlobalHeader: Bool { context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    /// Adds a stream carrying what `encoder` produces; returns its index.
    func addStream(for encoder: Encoder) throws -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else {
            throw VMergeError.io(file: path, message: "out of memory")
        }
        try check(
            avcodec_parameters_from_context(stream.pointee.codecpar, encoder.context), "adding a stream", file: path)
        stream.pointee.time_base = encoder.context.pointee.time_base
        return stream.pointee.index
    }

    func setMetadata(_ key: String, _ value: String) {
        av_dict_set(&context.pointee.metadata, key, value, 0)
    }

    /// Adds a chapter, in microseconds on the output's timeline (before `open`).
    func addChapter(title: String, startMicros: Int64, endMicros: Int64) throws {
        try check(vm_add_chapter(context, startMicros, endMicros, title), "adding chapters", file: path)
    }

    /// Ends the chapters where the output ended (before `finish`).
    func endChapters(atMicros end: Int64) { vm_end_chapters_at(context, end) }

    /// Opens the file and writes the header; `movflags` such as "+faststart" go to the muxer.
    func open(movflags: String) throws {
        guard let io = vm_fdio_alloc(file.raw, 1) else { throw VMergeError.io(file: path, message: "out of memory") }
        self.io = io
        vm_format_use_fdio(context, io)
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "movflags", movflags, 0)
        try check(avformat_write_header(context, &options), "writing the MP4 header", file: path)
    }

    func timeBase(ofStream index: Int32) throws -> AVRational {
        guard index >= 0, index < context.pointee.nb_streams else {
            throw VMergeError.ffmpeg(file: path, operation: "reading stream \(index)", message: "no such stream")
        }
        return try nonNull(context.pointee.streams[Int(index)], "reading stream \(index)", file: path).pointee.time_base
    }

    /// Hands a packet to the interleaving muxer (which takes its reference).
    func write(_ packet: Packet) throws {
        try check(av_interleaved_write_frame(context, packet.pointer), "writing to the output", file: path)
    }

    /// Writes the trailer (and, with faststart, moves the moov box to the front), then closes.
    func finish() throws {
        try check(av_write_trailer(context), "finishing the MP4 file", file: path)
        context.pointee.pb = nil
        try check(vm_fdio_free(&io), "closing the output file", file: path)
    }
}
