import CFFmpeg
import VMergeCore

/// Owns an AVPacket.
final class Packet {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() throws {
        guard let packet = av_packet_alloc() else { throw VMergeError.io(file: "-", message: "out of memory") }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }

    func unref() { av_packet_unref(pointer) }
}

/// Owns an AVFrame.
final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() throws {
        guard let frame = av_frame_alloc() else { throw VMergeError.io(file: "-", message: "out of memory") }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

    func unref() { av_frame_unref(pointer) }

    var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
    }
}

/// Owns an AVAudioFifo of planar float samples.
final class AudioFifo {
    let pointer: OpaquePointer
    let channels: Int32

    init(channels: Int32, file: String) throws {
        guard let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, channels, 4096) else {
            throw VMergeError.io(file: file, message: "out of memory allocating the audio buffer")
        }
        pointer = fifo
        self.channels = channels
    }

    deinit { av_audio_fifo_free(pointer) }

    var count: Int { Int(av_audio_fifo_size(pointer)) }

    /// Appends `count` samples of `frame` starting at sample `offset`.
    func write(_ frame: UnsafeMutablePointer<AVFrame>, offset: Int, count: Int, file: String) throws {
        guard count > 0 else { return }
        let bytesPerSample = Int(av_get_bytes_per_sample(AV_SAMPLE_FMT_FLTP))
        let data = try nonNull(frame.pointee.extended_data, "buffering audio", file: file)
        var planes = try (0..<Int(channels)).map { ch -> UnsafeMutableRawPointer? in
            try UnsafeMutableRawPointer(nonNull(data[ch], "buffering audio channel \(ch)", file: file))
                .advanced(by: offset * bytesPerSample)
        }
        let written = planes.withUnsafeMutableBufferPointer {
            av_audio_fifo_write(pointer, $0.baseAddress, Int32(count))
        }
        if written < count { try check(written < 0 ? written : vm_averror_enomem(), "buffering audio", file: file) }
    }

    /// Appends `count` samples of silence.
    func writeSilence(_ count: Int, file: String) throws {
        var remaining = count
        let chunk = 4096
        let silence = [Float](repeating: 0, count: chunk)
        while remaining > 0 {
            let n = min(remaining, chunk)
            let written: Int32 = silence.withUnsafeBufferPointer { buffer in
                var planes = [UnsafeMutableRawPointer?](
                    repeating: UnsafeMutableRawPointer(mutating: buffer.baseAddress!), count: Int(channels))
                return planes.withUnsafeMutableBufferPointer {
                    av_audio_fifo_write(pointer, $0.baseAddress, Int32(n))
                }
            }
            if written < n { try check(written < 0 ? written : vm_averror_enomem(), "buffering silence", file: file) }
            remaining -= n
        }
    }

    /// Moves up to `count` samples into `frame`, which must have room for them.
    func read(into frame: UnsafeMutablePointer<AVFrame>, count: Int) -> Int {
        let read = frame.pointee.extended_data.withMemoryRebound(
            to: UnsafeMutableRawPointer?.self, capacity: Int(channels)
        ) {
            av_audio_fifo_read(pointer, $0, Int32(count))
        }
        return Int(max(0, read))
    }
}
