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
        let input = try InputFile(
            path: path, analyse: !planned.clip.container.hasPrefix("mov,"), confinement: context.confinement,
            expected: planned.clip.fileID, cancel: context.cancel)
        let stream = try input.stream(audio.streamIndex)
        try input.keepOnly(streams: [audio.streamIndex])
        let decoder = try Decoder(stream: stream, file: path)
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
        var graph: FilterGraph?
        var result: (integrated: Double, truePeak: Double)?
        let packet = try Packet(), frame = try Frame(), out = try Frame()

        func drain() throws {
            guard let graph else { return }
            while try graph.pull(out) == .ok {
                let metadata = out.pointer.pointee.metadata
                func value(_ key: String) -> Double? {
                    av_dict_get(metadata, key, nil, 0).flatMap { Double(String(cString: $0.pointee.value)) }
                }
                if let integrated = value("lavfi.r128.I") {
                    result = (integrated, value("lavfi.r128.true_peak") ?? 0)
                }
                out.unref()
            }
        }
        func decoded() throws {
            while try decoder.receive(frame) == .ok {
                defer { frame.unref() }
                var ts = frame.pointer.pointee.best_effort_timestamp
                if ts == noPTS { ts = frame.pointer.pointee.pts }
                if ts != noPTS && ts >= end { continue }  // past what the output uses
                let samples = av_rescale_q(
                    Int64(frame.pointer.pointee.nb_samples), AVRational(num: 1, den: max(1, frame.pointer.pointee.sample_rate)),
                    timeBase)
                if ts != noPTS && ts.addingSaturating(samples) <= start { continue }  // cut away by the trim
                frame.pts = ts == noPTS ? 0 : av_rescale_q(ts, timeBase, microsBase)
                if graph == nil {
                    graph = try FilterGraph.audio(
                        for: frame.pointer, description: "ebur128=metadata=1:peak=true", file: path)
                }
                try graph!.push(frame)
                try drain()
            }
        }
        while try input.read(into: packet) {
            defer { packet.unref() }
            try context.cancel.check()
            if packet.pointer.pointee.dts != noPTS && packet.pointer.pointee.dts > end { break }
            do {
                _ = try decoder.send(packet)
            } catch VMergeError.ffmpeg {
                continue  // a damaged packet: the merge itself reports those
            }
            try decoded()
        }
        _ = try decoder.send(nil)
        try decoded()
        if let graph {
            try graph.close(at: planned.durationMicros)
            try drain()
        }
        guard let result else { return Loudness(integrated: -.infinity, truePeak: -.infinity) }
        return Loudness(integrated: result.integrated, truePeak: 20 * log10(max(result.truePeak, 1e-10)))
    }
}
