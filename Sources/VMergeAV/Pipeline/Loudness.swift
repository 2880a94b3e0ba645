import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// --loudness: each clip's integrated loudness (EBU R128 / ITU-R BT.1770, libavfilter's
/// ebur128) and true peak, measured by decoding its sound alone over the part the output uses.
enum LoudnessMeter {
    static func measure(_ planned: PlannedClip, options: MergeOptions, context: MergeContext) throws -> Loudness? {
        guard let audio = planned.clip.audio else { return nil }
        let path = planned.clip.path
        let input = try InputFile.open(
            path, analyse: !planned.clip.container.hasPrefix("mov,"), context: context, expected: planned.clip.fileID)
        let stream = try input.stream(audio.streamIndex)
        try input.keepOnly(streams: [audio.streamIndex])
        let timeBase = stream.pointee.time_base
        let origin = stream.pointee.start_time == noPTS ? 0 : stream.pointee.start_time
        // A trimmed clip is measured over its trimmed part (to its sound frame: within 23 ms).
        let start = origin.addingSaturating(av_rescale_q(planned.trimStartMicros, microsBase, timeBase))
        let end = av_rescale_q(planned.durationMicros, microsBase, timeBase).addingSaturating(start)
        if planned.trimStartMicros > 0 {
            // From the top when the container cannot seek; what comes before is skipped below.
            _ = input.seek(
                stream: Int32(audio.streamIndex),
                toKeyframeAtOrBefore: start.subtractingSaturating(av_rescale_q(100_000, microsBase, timeBase)))
        }
        let measurement = try Measurement(
            decoder: Decoder(stream: stream, file: path), timeBase: timeBase, window: start..<max(start, end),
            file: path)
        let packet = try Packet()
        while try input.read(into: packet) {
            defer { packet.unref() }
            try context.cancel.check()
            if packet.pointer.pointee.dts != noPTS && packet.pointer.pointee.dts > end { break }
            try measurement.send(packet)
        }
        return try measurement.finish(durationMicros: planned.durationMicros)
    }

    /// One clip's sound through the decoder and an ebur128 graph, over `window` (stream ticks).
    private final class Measurement {
        let decoder: Decoder
        let timeBase: AVRational
        let window: Range<Int64>
        let file: String
        let frame: Frame, out: Frame
        var graph: FilterGraph?
        var result: (integrated: Double, truePeak: Double)?

        init(decoder: Decoder, timeBase: AVRational, window: Range<Int64>, file: String) throws {
            (self.decoder, self.timeBase, self.window, self.file) = (decoder, timeBase, window, file)
            frame = try Frame()
            out = try Frame()
        }

        /// A packet; nil at the end.
        func send(_ packet: Packet?) throws {
            do {
                _ = try decoder.send(packet)
            } catch VMergeError.ffmpeg where packet != nil {
                return  // a damaged packet: the merge itself reports those
            }
            try decoded()
        }

        func finish(durationMicros: Int64) throws -> Loudness {
            try send(nil)
            if let graph {
                try graph.close(at: durationMicros)
                try drain()
            }
            guard let result else { return Loudness(integrated: -.infinity, truePeak: -.infinity) }
            return Loudness(integrated: result.integrated, truePeak: 20 * log10(max(result.truePeak, 1e-10)))
        }

        /// The decoded frames inside the window into the graph.
        private func decoded() throws {
            while try decoder.receive(frame) == .ok {
                defer { frame.unref() }
                var ts = frame.pointer.pointee.best_effort_timestamp
                if ts == noPTS { ts = frame.pointer.pointee.pts }
                if ts != noPTS && ts >= window.upperBound { continue }  // past what the output uses
                let samples = av_rescale_q(
                    Int64(frame.pointer.pointee.nb_samples),
                    AVRational(num: 1, den: max(1, frame.pointer.pointee.sample_rate)),
                    timeBase)
                // Cut away by the trim.
                if ts != noPTS && ts.addingSaturating(samples) <= window.lowerBound { continue }
                frame.pts = ts == noPTS ? 0 : av_rescale_q(ts, timeBase, microsBase)
                if graph == nil {
                    graph = try FilterGraph.audio(
                        for: frame.pointer, description: "ebur128=metadata=1:peak=true", file: file)
                }
                try graph!.push(frame)
                try drain()
            }
        }

        /// The graph's latest integrated loudness and true peak (its frames' metadata).
        private func drain() throws {
            guard let graph else { return }
            while try graph.pull(out) == .ok {
                let metadata = out.pointer.pointee.metadata
                func value(_ key: String) -> Double? {
                    av_dict_get(metadata, key, nil, 0).flatMap { Double(String(cString: $0.pointee.value)) }
                }
                if let integrated = value("lavfi.r128.I") { result = (integrated, value("lavfi.r128.true_peak") ?? 0) }
                out.unref()
            }
        }
    }
}
