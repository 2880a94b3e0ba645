/// What vmerge accepts from a file before decoding it: a hostile or broken file cannot make it
/// allocate huge pictures, run for days, or fill a disk with a frozen frame.
package enum Limits {
    /// Default --max-pixels: 8192 x 8192, beyond any phone or camera recording.
    package static let defaultMaxPixels = 8192 * 8192
    package static let maxStreams = 64
    /// Phones record up to 240 fps (960 fps slow motion is stored at 30 or 240).
    package static let maxFrameRate = 1000.0
    /// One clip longer than this is a damaged header, not a recording.
    package static let maxClipSeconds = 24.0 * 3600
    /// Studio audio goes to 384 kHz (DXD 352.8 kHz); beyond 1 MHz is a damaged header.
    package static let maxAudioSampleRate = 1_000_000
    /// FFmpeg's own sanity bound on channels (FF_SANE_NB_CHANNELS).
    package static let maxAudioChannels = 512
    /// The output picture's sides: at most 16384, x264's bound (H.264's largest level, 6.2,
    /// allows 16880); at least 2 (4:2:0), and 4 with --fit blur, whose blur needs its chroma
    /// planes two samples across to have a radius at all (16x2 failed at filter set-up).
    package static let maxOutputSide = 16384
    package static func minOutputSide(fit: Fit) -> Int { fit == .blur ? 4 : 2 }
    /// Output pixels a second the whole merge makes at large sizes (x264 preset medium on this
    /// project's 2-core machine: 29 and 37 million measured at 1920x1440 and 3840x2880): the base
    /// of the warning that a large output will take long.
    package static let encodedPixelsPerSecond = 30_000_000.0

    /// Why `clip` is refused, or nil.
    package static func problem(with clip: ClipInfo, maxPixels: Int) -> String? {
        let v = clip.video
        let (pixels, overflow) = v.width.multipliedReportingOverflow(by: v.height)
        if overflow || pixels > maxPixels || v.width > 65_536 || v.height > 65_536 {
            return "picture is \(v.width)x\(v.height), more than --max-pixels \(maxPixels) pixels"
        }
        if v.width < 2 || v.height < 2 {
            return "picture is \(v.width)x\(v.height): at least 2x2 pixels are needed to crop and scale it"
        }
        if v.frameRate.doubleValue > maxFrameRate {
            return "claims \(formatSeconds(v.frameRate.doubleValue)) frames per second; more than "
                + "\(Int(maxFrameRate)) is not a recording"
        }
        if clip.durationSeconds > maxClipSeconds {
            return "claims to last \(formatSeconds(clip.durationSeconds)) s; more than 24 hours is a damaged header"
        }
        if let a = clip.audio {
            if a.sampleRate > maxAudioSampleRate {
                return
                    "audio claims \(a.sampleRate) samples per second; more than \(maxAudioSampleRate) is a damaged header"
            }
            if a.channels > maxAudioChannels {
                return "audio claims \(a.channels) channels; more than \(maxAudioChannels) is a damaged header"
            }
        }
        return nil
    }
}
