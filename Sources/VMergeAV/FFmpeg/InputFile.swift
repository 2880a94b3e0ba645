import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Owns a demuxer (AVFormatContext) opened on one input file.
final class InputFile {
    let path: String
    let context: UnsafeMutablePointer<AVFormatContext>

    /// The file FFmpeg reads through (nil for memory): FFmpeg itself never opens a path.
    private var file: FileDescriptor?
    /// The size of the file when it was opened.
    private(set) var fileSize: Int64 = 0
    /// Which file it is (nil for memory).
    var fileID: FileID? { file?.info.map(FileID.init) }
    /// Its size now (nil for memory).
    var currentSize: Int64? { file?.info.map { Int64($0.st_size) } }

    /// Opens a file that was checked to be a regular file (a FIFO or a device is refused before
    /// anything reads from it) and, in a confined job, reached without following links.
    /// - Parameter analyse: run avformat_find_stream_info (decodes a few packets to fill in
    ///   what the header leaves out). Needed to probe; not to decode again a file whose header
    ///   already describes its streams.
    /// Keeps the interrupt callback's token alive as long as the demuxer may call it.
    private var cancel: CancelToken?

    /// - Parameter demuxerOptions: options for the demuxer (`ignore_editlist`).
    /// - Parameter expected: the file the probe read (device, inode, size, time): a name that
    ///   holds another file now (renamed away and another put in its place, or rewritten) is
    ///   refused, so what is merged, and later deleted with --delete-sources, is what was probed.
    init(
        path: String, analyse: Bool = true, confinement: InputConfinement? = nil, followLinks: Bool = true,
        expected: FileID? = nil, cancel: CancelToken? = nil, demuxerOptions: [(String, String)] = []
    ) throws {
        self.path = path
        let file =
            confinement != nil
            ? try SafeFile.openForReading(path, confinedTo: confinement)
            : try SafeFile.openForReading(path, followLinks: followLinks)
        if let expected, file.info.map(FileID.init) != expected {
            throw VMergeError.invalidInput(
                file: path, reason: "is not the file that was probed (replaced or changed since)")
        }
        fileSize = Int64(file.info?.st_size ?? 0)
        if fileSize == 0 { throw VMergeError.invalidInput(file: path, reason: "file is empty") }
        context = try InputFile.openDemuxer(
            path, io: vm_fdio_alloc(file.raw, 0), cancel: cancel, options: demuxerOptions, failure: { nil })
        self.cancel = cancel
        self.file = file
        let found = analyse ? avformat_find_stream_info(context, nil) : 0
        if found < 0 {
            throw VMergeError.invalidInput(file: path, reason: "cannot read stream information: \(errorText(found))")
        }
    }

    /// Opens a job's input by its name: a remote one from the job's sources, a file under the
    /// job's confinement (and as the probe saw it, when `expected` is given).
    static func open(
        _ path: String, analyse: Bool = true, confinement: InputConfinement?, sources: (any InputSources)?,
        expected: FileID? = nil, followLinks: Bool = true, cancel: CancelToken?, demuxerOptions: [(String, String)] = []
    ) throws -> InputFile {
        if let source = try sources?.source(named: path) {
            return try InputFile(source: source, analyse: analyse, cancel: cancel, demuxerOptions: demuxerOptions)
        }
        return try InputFile(
            path: path, analyse: analyse, confinement: confinement, followLinks: followLinks, expected: expected,
            cancel: cancel, demuxerOptions: demuxerOptions)
    }

    static func open(_ path: String, analyse: Bool = true, context: MergeContext, expected: FileID? = nil) throws
        -> InputFile
    {
        try InputFile.open(
            path, analyse: analyse, confinement: context.confinement, sources: context.sources, expected: expected,
            cancel: context.cancel)
    }

    /// Keeps a memory source alive as long as the demuxer reads from it.
    private var memory: MemorySource?
    /// Keeps a remote source, and the failure its reads met, as long as the demuxer reads.
    private var reading: SourceReading?
    /// The source's name for FFmpeg's log lines (its URL is not the name: see below).
    private var logTag: FFmpegLog.Tag?

    /// Opens a source that is not a file here (an object in a bucket, an https resource) through
    /// an AVIOContext over its reads: FFmpeg opens no URL of its own.
    init(
        source: any RandomAccessSource, analyse: Bool = true, cancel: CancelToken? = nil,
        demuxerOptions: [(String, String)] = []
    ) throws {
        path = source.displayName
        fileSize = source.size
        if fileSize == 0 { throw VMergeError.invalidInput(file: path, reason: "file is empty") }
        let reading = SourceReading(source)
        let logTag = FFmpegLog.Tag(path)
        // The URL only names the input (the reads are ours), but the demuxer reads its protocol:
        // for one it does not know (s3, https without FFmpeg's own) FFmpeg 7 and later widen the
        // read buffer to the distance between interleaved tracks (megabytes) to save network
        // seeks, so probing fetched half a clip. Every read here is served from the job's local
        // cache file, so the URL says so; log lines take the name from the tag instead.
        context = try InputFile.openDemuxer(
            path, url: "cache:" + path,
            io: vm_sourceio_alloc(Unmanaged.passUnretained(reading).toOpaque(), SourceReading.read, source.size),
            cancel: cancel, options: demuxerOptions, logTag: logTag, failure: { reading.failure })
        self.cancel = cancel
        self.logTag = logTag
        self.reading = reading
        let found = analyse ? avformat_find_stream_info(context, nil) : 0
        if let failure = reading.failure { throw failure }
        if found < 0 {
            throw VMergeError.invalidInput(file: path, reason: "cannot read stream information: \(errorText(found))")
        }
    }

    /// Opens bytes in memory through a custom AVIOContext (no file involved).
    init(memory source: MemorySource, name: String) throws {
        path = name
        guard var context = avformat_alloc_context() else {
            throw VMergeError.io(file: name, message: "out of memory")
        }
        let bufferSize = 64 * 1024
        guard let buffer = av_malloc(bufferSize),
            let io = avio_alloc_context(
                buffer.assumingMemoryBound(to: UInt8.self), Int32(bufferSize), 0,
                Unmanaged.passUnretained(source).toOpaque(), MemorySource.read, nil, MemorySource.seek)
        else {
            avformat_free_context(context)
            throw VMergeError.io(file: name, message: "out of memory")
        }
        context.pointee.pb = io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        memory = source
        var maybeContext: UnsafeMutablePointer<AVFormatContext>? = context
        let opened = avformat_open_input(&maybeContext, name, nil, nil)
        if opened < 0 {
            MemorySource.free(io)
            throw VMergeError.invalidInput(file: name, reason: InputFile.openFailureReason(opened))
        }
        guard let opened = maybeContext else { throw VMergeError.io(file: name, message: "out of memory") }
        context = opened
        self.context = context
        let found = avformat_find_stream_info(context, nil)
        if found < 0 {
            throw VMergeError.invalidInput(file: name, reason: "cannot read stream information: \(errorText(found))")
        }
    }

    /// A demuxer over `io` (vmerge's own reads: FFmpeg opens nothing), named `url`; `io` is freed
    /// here when it cannot be opened, and `failure` is what the reads themselves met, if any.
    private static func openDemuxer(
        _ name: String, url: String? = nil, io: UnsafeMutablePointer<AVIOContext>?, cancel: CancelToken?,
        options demuxerOptions: [(String, String)], logTag: FFmpegLog.Tag? = nil, failure: () -> (any Error)?
    ) throws -> UnsafeMutablePointer<AVFormatContext> {
        guard let io else { throw VMergeError.io(file: name, message: "out of memory") }
        guard let context = avformat_alloc_context() else {
            var freed: UnsafeMutablePointer<AVIOContext>? = io
            vm_fdio_free(&freed)
            throw VMergeError.io(file: name, message: "out of memory")
        }
        vm_format_use_fdio(context, io)
        context.pointee.interrupt_callback.callback = vm_interrupt_callback
        context.pointee.interrupt_callback.opaque = cancel.opaque
        context.pointee.opaque = logTag?.pointer
        var maybeContext: UnsafeMutablePointer<AVFormatContext>? = context
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        for (key, value) in demuxerOptions { av_dict_set(&options, key, value, 0) }
        let opened = avformat_open_input(&maybeContext, url ?? name, nil, &options)
        if opened < 0 {
            // avformat_open_input frees the context on failure, not a custom AVIOContext.
            var freed: UnsafeMutablePointer<AVIOContext>? = io
            vm_fdio_free(&freed)
            if let failure = failure() { throw failure }
            throw VMergeError.invalidInput(file: name, reason: InputFile.openFailureReason(opened))
        }
        guard let opened = maybeContext else { throw VMergeError.io(file: name, message: "out of memory") }
        return opened
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = context
        var customIO = context?.pointee.pb
        avformat_close_input(&context)
        if memory != nil, let io = customIO {
            MemorySource.free(io)
        } else if file != nil || reading != nil {
            vm_fdio_free(&customIO)
        }
    }

    private static func openFailureReason(_ code: Int32) -> String {
        if code == vm_averror_invaliddata() {
            return "not a readable video file (unknown format, or a recording cut off before it was finalised)"
        }
        return errorText(code)
    }

    var streamCount: Int { Int(context.pointee.nb_streams) }

    func stream(_ index: Int) throws -> UnsafeMutablePointer<AVStream> {
        guard index >= 0, index < streamCount else {
            throw VMergeError.ffmpeg(file: path, operation: "reading stream \(index)", message: "no such stream")
        }
        return try nonNull(context.pointee.streams[index], "reading stream \(index)", file: path)
    }

    /// Stream `index`'s codec parameters, copied (what probing and the pipeline read).
    func parameters(ofStream index: Int) throws -> AVCodecParameters {
        try nonNull(stream(index).pointee.codecpar, "reading the codec parameters of stream \(index)", file: path)
            .pointee
    }

    /// The stream FFmpeg would pick for `type`, or nil.
    func bestStream(_ type: AVMediaType) -> Int? {
        let index = av_find_best_stream(context, type, -1, -1, nil, 0)
        return index >= 0 ? Int(index) : nil
    }

    /// Reads the next packet; false at end of file.
    func read(into packet: Packet) throws -> Bool {
        let code = av_read_frame(context, packet.pointer)
        // A remote source's own reason (changed while read, refused) over FFmpeg's "I/O error".
        if code < 0, let failure = reading?.failure { throw failure }
        switch try outcome(code, "reading", file: path) {
        case .ok: return true
        case .endOfStream: return false
        case .again: return try read(into: packet)
        }
    }

    /// Moves reading to the keyframe of stream `index` at or before `timestamp` (in its time
    /// base), every other stream to the same time; a time before the first keyframe reads from
    /// the top. False when the container cannot seek (the position is then unchanged).
    func seek(stream index: Int32, toKeyframeAtOrBefore timestamp: Int64) -> Bool {
        av_seek_frame(context, index, timestamp, AVSEEK_FLAG_BACKWARD) >= 0
    }

    /// Only the listed streams are demuxed; the rest are discarded before they are read.
    func keepOnly(streams: Set<Int>) throws {
        for index in 0..<streamCount {
            try stream(index).pointee.discard = streams.contains(index) ? AVDISCARD_DEFAULT : AVDISCARD_ALL
        }
    }

    /// A container tag.
    func metadata(_ key: String) -> String? { InputFile.value(of: key, in: context.pointee.metadata) }

    /// A tag of stream `stream`.
    func metadata(_ key: String, stream: Int) throws -> String? {
        try InputFile.value(of: key, in: self.stream(stream).pointee.metadata)
    }

    private static func value(of key: String, in dict: OpaquePointer?) -> String? {
        guard let entry = av_dict_get(dict, key, nil, 0), let value = entry.pointee.value else { return nil }
        return String(cString: value)
    }
}

/// Bytes a demuxer reads through a custom AVIOContext.
final class MemorySource {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    static let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
        opaque, buffer, size in
        guard let opaque, let buffer, size > 0 else { return vm_averror_eof() }
        let source = Unmanaged<MemorySource>.fromOpaque(opaque).takeUnretainedValue()
        let count = min(Int(size), source.bytes.count - source.position)
        guard count > 0 else { return vm_averror_eof() }
        source.bytes.withUnsafeBufferPointer { all in
            buffer.update(from: all.baseAddress! + source.position, count: count)
        }
        source.position += count
        return Int32(count)
    }

    static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        guard let opaque else { return -1 }
        let source = Unmanaged<MemorySource>.fromOpaque(opaque).takeUnretainedValue()
        if whence & AVSEEK_SIZE != 0 { return Int64(source.bytes.count) }
        let base: Int64
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = Int64(source.position)
        case SEEK_END: base = Int64(source.bytes.count)
        default: return -1
        }
        // The demuxer's offset may come from the file: an overflowing one is a failed seek.
        guard case let (target, false) = base.addingReportingOverflow(offset), target >= 0,
            target <= Int64(source.bytes.count)
        else { return -1 }
        source.position = Int(target)
        return target
    }

    /// Frees an AVIOContext made for a MemorySource, with its buffer.
    static func free(_ io: UnsafeMutablePointer<AVIOContext>) {
        var buffer: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(io.pointee.buffer)
        av_freep(&buffer)
        var context: UnsafeMutablePointer<AVIOContext>? = io
        avio_context_free(&context)
    }
}

/// A remote source as its AVIOContext reads it: the failure of a read is kept (FFmpeg only sees
/// an I/O error) so that the demuxer's caller can say what really went wrong.
final class SourceReading {
    let source: any RandomAccessSource
    private(set) var failure: Error?

    init(_ source: any RandomAccessSource) { self.source = source }

    static let read: vm_source_read = { owner, buffer, size, offset in
        guard let owner, let buffer, size > 0 else { return vm_averror_eof() }
        let reading = Unmanaged<SourceReading>.fromOpaque(owner).takeUnretainedValue()
        if reading.failure != nil { return -EIO }
        do {
            let count = try reading.source.read(
                into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)), at: offset)
            return count == 0 ? vm_averror_eof() : Int32(count)
        } catch {
            reading.failure = error
            return -EIO
        }
    }
}
