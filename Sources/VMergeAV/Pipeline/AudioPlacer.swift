import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// One clip's sound on the output: each decoded block, timed from the clip's time zero and its
/// trim start, resampled by the clip's audio graph and placed sample-exactly in the clip's range
/// of output samples; what falls short is padded with silence.
final class AudioPlacer {
    private let planned: PlannedClip
    private let sink: FrameQueue
    private let file: String
    /// The sound stream's time base.
    private let timeBase: AVRational
    /// The clip's output samples: its start and end are output frames, whose samples it fills.
    let sampleStart: Int64, sampleEnd: Int64
    /// 1 / the output sample rate.
    private let outputSampleRate: AVRational
    private var graph: FilterGraph?
    /// The first block that counts is placed exactly; the rest follow it.
    private var firstBlock = true
    /// A blank frame kept between pulls.
    private var spare: Frame?

    init(_ planned: PlannedClip, timeline: Timeline, sampleRate: Int, timeBase: AVRational, sink: FrameQueue, file: String)
        throws
    {
        (self.planned, self.sink, self.file, self.timeBase) = (planned, sink, file, timeBase)
        sampleStart = timeline.sampleIndex(ofFrame: timeline.frameIndex(atMicros: planned.startMicros))
        sampleEnd = timeline.sampleIndex(ofFrame: timeline.frameIndex(atMicros: planned.endMicros))
        guard let rate = Int32(exactly: sampleRate), rate > 0 else {
            throw VMergeError.ffmpeg(
                file: file, operation: "setting up audio", message: "sample rate \(sampleRate) is out of range")
        }
        outputSampleRate = AVRational(num: 1, den: rate)
    }

    /// A decoded block; `videoStartMicros`: the clip's time zero on the file's clock.
    func place(_ frame: Frame, videoStartMicros: Int64) throws {
        let f = frame.pointer
        var ts = f.pointee.best_effort_timestamp
        if ts == noPTS { ts = f.pointee.pts }
        guard ts != noPTS else { return }
        // Relative to the clip's video start, so edit lists and start offsets carry over, and to
        // its trim start. av_rescale_q gives Int64.min when a wild timestamp does not fit microseconds.
        frame.pts = av_rescale_q(ts, timeBase, microsBase).subtractingSaturating(videoStartMicros)
            .subtractingSaturating(planned.trimStartMicros)
        if graph == nil { graph = try FilterGraph.audio(for: f, description: planned.audioFilter, file: file) }
        try graph!.push(frame)
        try drain()
    }

    /// Silence up to `sample` (within the clip): a clip without sound keeps it interleaved with
    /// its pictures as they go.
    func padSilence(upTo sample: Int64) throws { try sink.put(.padAudio(to: min(sample, sampleEnd))) }

    /// The rest of the sound, up to the clip's planned length, then silence to its last sample.
    func finish() throws {
        if let graph {
            try graph.close(at: planned.durationMicros)
            try drain()
        }
        try sink.put(.padAudio(to: sampleEnd))
    }

    private func drain() throws {
        guard let graph else { return }
        let outputBase = graph.outputTimeBase
        while let out = try sink.pull(from: graph, reusing: &spare) {
            let position = sampleStart.addingSaturating(av_rescale_q(out.pts, outputBase, outputSampleRate))
            // Wholly before the clip's start (what a trim cuts away): not sent, so the first
            // block that counts is the one placed exactly.
            if position.addingSaturating(Int64(out.pointer.pointee.nb_samples)) <= sampleStart {
                out.unref()
                spare = out
                continue
            }
            try sink.put(.audio(out, start: position, end: sampleEnd, exact: firstBlock))
            firstBlock = false
        }
    }
}

extension FrameQueue {
    /// The next frame out of `graph`, or nil when it needs more input; the blank frame taken
    /// from the pool is kept in `spare` for next time, so an empty pull costs no allocation.
    func pull(from graph: FilterGraph, reusing spare: inout Frame?) throws -> Frame? {
        let out = try spare ?? emptyFrame()
        spare = nil
        if try graph.pull(out) == .ok { return out }
        spare = out
        return nil
    }
}
