import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// FFmpeg's own log, for --verbose: each line said as a note through the run's sink, naming the
/// file it concerns, found from the object that logged it (a demuxer's URL, a decoder's tag) or,
/// failing that, from the file the logging thread is working on.
package enum FFmpegLog {
    /// A file name to hang on an FFmpeg object's `opaque` pointer.
    final class Tag {
        let file: String
        init(_ file: String) { self.file = file }
        var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    }

    nonisolated(unsafe) private static var diagnostics: DiagnosticSink?
    private static let threadFileKey = "vmerge.ffmpeg-log.file"

    /// Says FFmpeg's messages up to `level` (AV_LOG_WARNING = 24) through `diagnostics`. Call
    /// once, before any work starts.
    package static func install(level: Int32, diagnostics: DiagnosticSink) {
        self.diagnostics = diagnostics
        vm_log_install(level, callback)
    }

    /// Names the file the current thread works on, for log lines whose object does not say.
    static func setThreadFile(_ file: String?) {
        Thread.current.threadDictionary[threadFileKey] = file
    }

    private static let callback: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void = {
        object, _, text in
        guard let diagnostics = FFmpegLog.diagnostics, let text else { return }
        let message = String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !message.isEmpty else { return }
        let (file, name) = FFmpegLog.describe(object)
        diagnostics(Diagnostic(.note, file: file, name.map { "\($0): \(message)" } ?? message))
    }

    /// The file and the component name ("h264", "mov,mp4,m4a,3gp,3g2,mj2") of a logging object.
    private static func describe(_ object: UnsafeMutableRawPointer?) -> (file: String?, name: String?) {
        let threadFile = Thread.current.threadDictionary[threadFileKey] as? String
        guard let object, let avClass = object.assumingMemoryBound(to: UnsafePointer<AVClass>?.self).pointee
        else { return (threadFile, nil) }
        let className = String(cString: avClass.pointee.class_name)
        let name = avClass.pointee.item_name.flatMap { $0(object) }.map { String(cString: $0) } ?? className
        switch className {
        case "AVFormatContext":
            let context = object.assumingMemoryBound(to: AVFormatContext.self)
            // vmerge's muxer and its demuxers of remote sources carry the name in a tag;
            // demuxers of files have theirs in `url`.
            if let opaque = context.pointee.opaque {
                return (Unmanaged<Tag>.fromOpaque(opaque).takeUnretainedValue().file, name)
            }
            if let url = context.pointee.url, url.pointee != 0 { return (String(cString: url), name) }
        case "AVCodecContext":
            let context = object.assumingMemoryBound(to: AVCodecContext.self)
            if let opaque = context.pointee.opaque, context.pointee.codec.map({ av_codec_is_decoder($0) != 0 }) == true
            {
                return (Unmanaged<Tag>.fromOpaque(opaque).takeUnretainedValue().file, name)
            }
        default: break
        }
        return (threadFile, name)
    }
}
