/// Where clips sit on the output timeline. Clip starts are kept in microseconds and every
/// frame and sample boundary is derived from them, never accumulated, so rounding never
/// builds up into drift however many clips there are.
public struct Timeline: Sendable {
    public let frameRate: Rational
    public let sampleRate: Int

    public init(frameRate: Rational, sampleRate: Int) {
        self.frameRate = frameRate
        self.sampleRate = sampleRate
    }

    /// Index of the output frame shown at `micros`, rounded to nearest as the fps filter does.
    public func frameIndex(atMicros micros: Int64) -> Int64 {
        roundedDivide(micros * Int64(frameRate.num), Int64(frameRate.den) * 1_000_000)
    }

    /// Index of the output audio sample at `micros`.
    public func sampleIndex(atMicros micros: Int64) -> Int64 {
        roundedDivide(micros * Int64(sampleRate), 1_000_000)
    }

    public func micros(ofFrame index: Int64) -> Int64 {
        roundedDivide(index * Int64(frameRate.den) * 1_000_000, Int64(frameRate.num))
    }
}

/// a / b rounded half away from zero (av_rescale's AV_ROUND_NEAR_INF), for b > 0.
@inline(__always)
func roundedDivide(_ a: Int64, _ b: Int64) -> Int64 {
    a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b)
}

/// How one block of decoded audio fits the output: samples to drop from its front, silence to
/// insert before it, and how many of its samples to keep.
public struct AudioPlacement: Equatable, Sendable {
    public var dropFront: Int
    public var silenceBefore: Int
    public var keep: Int

    /// - Parameters:
    ///   - start: the output sample where the block's first sample belongs.
    ///   - count: samples in the block.
    ///   - written: output samples already written (where the next sample goes).
    ///   - end: the clip's end sample on the output; nothing of this clip may pass it.
    ///   - tolerance: offsets up to this many samples count as contiguous (timestamp jitter),
    ///     so a continuous stream is not cut into by rounding.
    public static func place(start: Int64, count: Int, written: Int64, end: Int64, tolerance: Int64)
        -> AudioPlacement
    {
        var start = start
        if abs(start - written) <= tolerance { start = written }
        var drop = 0, silence = 0
        if start > written {
            silence = Int(min(start, end) - written)
        } else if start < written {
            drop = Int(min(written - start, Int64(count)))
        }
        let position = written + Int64(silence)
        let keep = max(0, min(count - drop, Int(end - position)))
        return AudioPlacement(dropFront: drop, silenceBefore: silence, keep: keep)
    }
}
