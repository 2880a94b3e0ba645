import CFFmpeg
import VMergeCore

/// av_strerror's text for an FFmpeg error code.
func errorText(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: Int(AV_ERROR_MAX_STRING_SIZE))
    av_strerror(code, &buffer, buffer.count)
    return string(fromCBuffer: buffer)
}

/// The text in a NUL-terminated C buffer that FFmpeg filled in.
func string(fromCBuffer buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Throws the mapped Swift error when an FFmpeg call returned a negative code; returns the
/// (non-negative) result otherwise.
@discardableResult
func check(_ code: Int32, _ operation: @autoclosure () -> String, file: String) throws -> Int32 {
    guard code < 0 else { return code }
    throw VMergeError.ffmpeg(file: file, operation: operation(), message: errorText(code))
}

/// A pointer FFmpeg returned or left in one of its structs: NULL becomes the mapped error (one
/// line naming the file and the step) instead of a crash.
func nonNull<Pointee>(_ pointer: Pointee?, _ operation: @autoclosure () -> String, file: String) throws -> Pointee {
    guard let pointer else {
        throw VMergeError.ffmpeg(file: file, operation: operation(), message: "FFmpeg returned NULL")
    }
    return pointer
}

/// What a send/receive call on a codec or filter graph gave, when it is not an error.
enum Outcome {
    case ok
    case again  // needs more input (receive) or output drained first (send)
    case endOfStream
}

/// Maps EAGAIN and EOF to outcomes and any other negative code to a thrown error.
func outcome(_ code: Int32, _ operation: @autoclosure () -> String, file: String) throws -> Outcome {
    if code >= 0 { return .ok }
    if code == vm_averror_eagain() { return .again }
    if code == vm_averror_eof() { return .endOfStream }
    throw VMergeError.ffmpeg(file: file, operation: operation(), message: errorText(code))
}

let noPTS = vm_nopts()
let microsBase = vm_time_base_q()
