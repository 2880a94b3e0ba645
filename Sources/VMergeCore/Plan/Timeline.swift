/// Where clips sit on the output timeline. Each clip starts on the output frame nearest to
/// the exact sum of the lengths before it (kept in microseconds, never accumulated from
/// rounded values), so rounding never builds up into drift however many clips there are, and
/// a clip's first sound starts with its first picture.
package struct Timeline: Sendable {
    package let frameRate: Rational
    package let sampleRate: Int

    package init(frameRate: Rational, sampleRate: Int) {
        self.frameRate = frameRate
        self.sampleRate = sampleRate
    }

    // The products are taken in 128 bits (see `rescaled`): a rate such as 2147483647/89478485
    // (about 24 fps) times ten million seconds of microseconds is past Int64. Results that do
    // not fit are pinned to Int64.min/max; the encoder refuses a rate FFmpeg cannot hold.

    /// Index of the output frame shown at `micros`, rounded to nearest as the fps filter does.
    package func frameIndex(atMicros micros: Int64) -> Int64 {
        rescaled(micros, by: Int64(frameRate.num), over: Int64(frameRate.den).multipliedSaturating(by: 1_000_000))
    }

    /// Index of the output frame that `ticks` of `timeBase` round to, exactly: what the fps filter
    /// would make of the source timestamp itself. (Through microseconds, a picture exactly half a
    /// frame from two output frames can round either way: 60 fps into 30 took every third picture
    /// one source frame late.)
    package func frameIndex(ofTicks ticks: Int64, timeBase: Rational) -> Int64 {
        rescaled(
            ticks, by: Int64(frameRate.num).multipliedSaturating(by: Int64(timeBase.num)),
            over: Int64(frameRate.den).multipliedSaturating(by: Int64(timeBase.den)))
    }

    /// Index of the output audio sample at `micros`.
    package func sampleIndex(atMicros micros: Int64) -> Int64 {
        rescaled(micros, by: Int64(sampleRate), over: 1_000_000)
    }

    package func micros(ofFrame index: Int64) -> Int64 {
        rescaled(index, by: Int64(frameRate.den).multipliedSaturating(by: 1_000_000), over: Int64(frameRate.num))
    }

    /// The output sample where output frame `index` begins (exact to half a sample: not taken
    /// through microseconds).
    package func sampleIndex(ofFrame index: Int64) -> Int64 {
        rescaled(index, by: Int64(sampleRate).multipliedSaturating(by: Int64(frameRate.den)), over: Int64(frameRate.num))
    }

    /// The time of the output frame nearest to `micros`.
    package func onFrameGrid(_ micros: Int64) -> Int64 { self.micros(ofFrame: frameIndex(atMicros: micros)) }
}

/// a / b rounded half away from zero (av_rescale's AV_ROUND_NEAR_INF), for b > 0; pinned to
/// Int64.min/max instead of overflowing.
@inline(__always)
func roundedDivide(_ a: Int64, _ b: Int64) -> Int64 {
    rescaled(a, by: 1, over: b)
}

/// How one block of decoded audio fits the output: samples to drop from its front, silence to
/// insert before it, and how many of its samples to keep.
package struct AudioPlacement: Equatable, Sendable {
    package var dropFront: Int
    package var silenceBefore: Int
    package var keep: Int

    /// - Parameters:
    ///   - start: the output sample where the block's first sample belongs.
    ///   - count: samples in the block.
    ///   - written: output samples already written (where the next sample goes).
    ///   - end: the clip's end sample on the output; nothing of this clip may pass it.
    ///   - tolerance: offsets up to this many samples count as contiguous (timestamp jitter),
    ///     so a continuous stream is not cut into by rounding.
    package static func place(start: Int64, count: Int, written: Int64, end: Int64, tolerance: Int64)
        -> AudioPlacement
    {
        // Saturating throughout: `start` comes from a file's timestamps and may be anywhere.
        var start = start
        let offset = start.subtractingSaturating(written)
        if offset >= -tolerance && offset <= tolerance { start = written }
        var drop = 0, silence = 0
        if start > written {
            silence = Int(clamping: max(0, min(start, end).subtractingSaturating(written)))
        } else if start < written {
            drop = Int(clamping: min(written.subtractingSaturating(start), Int64(count)))
        }
        let position = written.addingSaturating(Int64(silence))
        let keep = max(0, min(count - drop, Int(clamping: end.subtractingSaturating(position))))
        return AudioPlacement(dropFront: drop, silenceBefore: silence, keep: keep)
    }
}
