import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Audio placement: each decoded block resampled and placed sample-exactly on the output.
extension ClipPipeline {
    // MARK: audio

    func handleAudioFrame() throws {
        let f = frame.pointer
        var ts = f.pointee.best_effort_timestamp
        if ts == noPTS { ts = f.pointee.pts }
        guard ts != noPTS else { return }
        // Relative to the clip's video start, so edit lists and start offsets carry over, and to
        // its trim start. av_rescale_q gives Int64.min when a wild timestamp does not fit microseconds.
        frame.pts = av_rescale_q(ts, audioTimeBase, microsBase).subtractingSaturating(videoStartMicros)
            .subtractingSaturating(planned.trimStartMicros)
        if audioGraph == nil { audioGraph = try makeAudioGraph(for: f) }
        try audioGraph!.push(frame)
        try drainAudio()
    }

    func makeAudioGraph(for f: UnsafeMutablePointer<AVFrame>) throws -> FilterGraph {
        try FilterGraph.audio(for: f, description: planned.audioFilter, file: path)
    }

    func drainAudio() throws {
        guard let audioGraph else { return }
        let timeBase = audioGraph.outputTimeBase
        while let out = try nextFiltered(from: audioGraph) {
            let position = sampleStart.addingSaturating(av_rescale_q(out.pts, timeBase, outputSampleRate))
            // Wholly before the clip's start (what a trim cuts away): not sent, so the first
            // block that counts is the one placed exactly.
            if position.addingSaturating(Int64(out.pointer.pointee.nb_samples)) <= sampleStart {
                out.unref()
                spare = out
                continue
            }
            try sink.put(.audio(out, start: position, end: sampleEnd, exact: firstAudioBlock))
            firstAudioBlock = false
        }
    }

    /// The next frame out of `graph`, or nil when it needs more input (the blank frame taken
    /// from the pool is kept for next time).
    func nextFiltered(from graph: FilterGraph) throws -> Frame? {
        let out = try spare ?? sink.emptyFrame()
        spare = nil
        if try graph.pull(out) == .ok { return out }
        spare = out
        return nil
    }
}
