import CFFmpeg
import CVMergeSupport
import VMergeCore

/// Owns a demuxer (AVFormatContext) opened on one input file.
final class InputFile {
    let path: String
    let context: UnsafeMutablePointer<AVFormatContext>

    /// - Parameter analyse: run avformat_find_stream_info (decodes a few packets to fill in
    ///   what the header leaves out). Needed to probe; not to decode again a file whose header
    ///   already describes its streams.
    init(path: String, analyse: Bool = true) throws {
        self.path = path
        guard var context = avformat_alloc_context() else {
            throw VMergeError.io(file: path, message: "out of memory")
        }
        context.pointee.interrupt_callback.callback = vm_interrupt_callback
        var maybeContext: UnsafeMutablePointer<AVFormatContext>? = context
        let opened = avformat_open_input(&maybeContext, path, nil, nil)
        if opened < 0 {
            // avformat_open_input frees the context on failure.
            throw VMergeError.invalidInput(file: path, reason: InputFile.openFailureReason(opened))
        }
        context = maybeContext!
        self.context = context
        let found = analyse ? avformat_find_stream_info(context, nil) : 0
        if found < 0 {
            throw VMergeError.invalidInput(file: path, reason: "cannot read stream information: \(errorText(found))")
        }
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&context)
    }

    private static func openFailureReason(_ code: Int32) -> String {
        if code == vm_averror_invaliddata() {
            return "not a readable video file (unknown format, or a recording cut off before it was finalised)"
        }
        return errorText(code)
    }

    var streamCount: Int { Int(context.pointee.nb_streams) }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[index]! }

    /// The stream FFmpeg would pick for `type`, or nil.
    func bestStream(_ type: AVMediaType) -> Int? {
        let index = av_find_best_stream(context, type, -1, -1, nil, 0)
        return index >= 0 ? Int(index) : nil
    }

    /// Reads the next packet; false at end of file.
    func read(into packet: Packet) throws -> Bool {
        switch try outcome(av_read_frame(context, packet.pointer), "reading", file: path) {
        case .ok: return true
        case .endOfStream: return false
        case .again: return try read(into: packet)
        }
    }

    /// Only the listed streams are demuxed; the rest are discarded before they are read.
    func keepOnly(streams: Set<Int>) {
        for index in 0..<streamCount {
            stream(index).pointee.discard = streams.contains(index) ? AVDISCARD_DEFAULT : AVDISCARD_ALL
        }
    }

    func metadata(_ key: String, stream: Int? = nil) -> String? {
        let dict = stream.map { self.stream($0).pointee.metadata } ?? context.pointee.metadata
        guard let entry = av_dict_get(dict, key, nil, 0), let value = entry.pointee.value else { return nil }
        return String(cString: value)
    }
}
