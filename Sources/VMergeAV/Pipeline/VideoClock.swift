import CFFmpeg
import VMergeCore

/// One clip's video timestamps against its own clock and the output's frames. Time zero is the
/// stream's start time, or without one its first picture (`startIfNeeded(at:)`); the trim start
/// is time zero of what the output uses. A picture's output frame is worked out from its
/// timestamp exactly (as the fps filter would round it), not from its microseconds. Timestamps
/// are the file's: arithmetic saturates, so a wild one reads as far past (or before).
struct VideoClock {
    /// The video stream's time base, as FFmpeg and as a fraction.
    let timeBase: AVRational
    private let ticks: Rational
    /// Time zero in the stream's time base (`noPTS` until known) and in microseconds.
    private(set) var start: Int64
    private(set) var startMicros: Int64 = 0
    /// The output frame the clip starts on, and its trim start on its own timeline.
    private let startFrame: Int64
    let trimStartMicros: Int64
    private let trimTicks: Int64
    private let timeline: Timeline

    init(stream: UnsafeMutablePointer<AVStream>, planned: PlannedClip, timeline: Timeline) {
        timeBase = stream.pointee.time_base
        ticks = Rational(Int(timeBase.num), Int(timeBase.den))
        start = stream.pointee.start_time
        if start != noPTS { startMicros = av_rescale_q(start, timeBase, microsBase) }
        startFrame = timeline.frameIndex(atMicros: planned.startMicros)
        trimStartMicros = planned.trimStartMicros
        trimTicks = av_rescale_q(planned.trimStartMicros, microsBase, timeBase)
        self.timeline = timeline
    }

    /// Whether time zero is known (the stream has a start time, or a picture was decoded).
    var isStarted: Bool { start != noPTS }

    /// Without a start time, the first picture decoded is time zero (one without any timestamp: 0).
    mutating func startIfNeeded(at ts: Int64) {
        guard start == noPTS else { return }
        start = ts != noPTS ? ts : 0
        startMicros = av_rescale_q(start, timeBase, microsBase)
    }

    /// Where on the clip's own timeline a timestamp falls, in microseconds.
    func clipMicros(_ ts: Int64) -> Int64 {
        av_rescale_q(ts.subtractingSaturating(isStarted ? start : 0), timeBase, microsBase)
    }

    /// Where a timestamp falls from the trim start, in microseconds.
    func trimmedMicros(_ ts: Int64) -> Int64 { clipMicros(ts).subtractingSaturating(trimStartMicros) }

    /// The timestamp `micros` into the clip's own timeline.
    func ticks(atClipMicros micros: Int64) -> Int64 {
        start.addingSaturating(av_rescale_q(micros, microsBase, timeBase))
    }

    /// The output frame a picture with this timestamp goes to.
    func outputFrame(of ts: Int64) -> Int64 {
        let ticks = ts.subtractingSaturating(isStarted ? start : 0).subtractingSaturating(trimTicks)
        return startFrame.addingSaturating(timeline.frameIndex(ofTicks: ticks, timeBase: self.ticks))
    }
}
