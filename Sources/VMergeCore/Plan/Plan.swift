import Foundation

/// What probing found for one input, in input order.
package enum InputProbe: Sendable {
    case clip(ClipInfo)
    case invalid(path: String, reason: String)
    /// Not examined: the run stopped before reaching it.
    case notProbed(path: String)

    package var path: String {
        switch self {
        case let .clip(clip): return clip.path
        case let .invalid(path, _), let .notProbed(path): return path
        }
    }
}

/// What became of one input.
package enum InputDisposition: Sendable, Equatable {
    /// Kept: the index into `MergePlan.clips`.
    case kept(Int)
    case dropped(DropReason)
    case notProbed
}

/// The whole merge, decided from probes and options alone.
package struct MergePlan: Sendable {
    package var clips: [PlannedClip]
    /// Every input in order, with what probing found, what the job asked of it and what the
    /// plan made of it.
    package var inputs: [(probe: InputProbe, edit: InputEdit, disposition: InputDisposition)]
    package var options: MergeOptions

    package var durationMicros: Int64 { clips.last?.endMicros ?? 0 }
    package var timeline: Timeline { options.timeline }
    /// What the written file will last (clip ends are on the frame grid already).
    package var outputDurationMicros: Int64 { durationMicros }

    /// One chapter per kept clip, where it sits on the output, titled with its file name, as many
    /// as both of the MP4's chapter lists hold (see Chapter.fitted).
    package var chapters: [Chapter] {
        Chapter.fitted(clips.map { Chapter(title: $0.title, startMicros: $0.startMicros, endMicros: $0.endMicros) })
    }

    /// The inputs left out, in input order.
    package var dropped: [(path: String, reason: DropReason)] {
        inputs.compactMap { input in
            if case let .dropped(reason) = input.disposition { return (input.probe.path, reason) }
            return nil
        }
    }

    /// Keeps the clips long enough to count (their trimmed part), in order, and lays them end to
    /// end, up to the maximum length if there is one. `edits` go with `probes` by position.
    /// `capabilities`: the build's, which decide how HDR is brought to SDR.
    package init(
        probes: [InputProbe], edits: [InputEdit] = [], options: MergeOptions, capabilities: Capabilities = .full
    ) {
        self.options = options
        clips = []
        inputs = []
        var start: Int64 = 0
        let limitMicros = options.maxDurationMicros
        for (index, probe) in probes.enumerated() {
            let edit = index < edits.count ? edits[index] : .whole
            let disposition: InputDisposition
            switch probe {
            case .notProbed:
                // Inputs after the limit are not probed at all.
                if let limitMicros, start >= limitMicros {
                    disposition = .dropped(.beyondLimit(limitSeconds: options.maxDuration ?? 0))
                } else {
                    disposition = .notProbed
                }
            case let .invalid(_, reason):
                disposition = .dropped(.invalid(reason))
            case let .clip(clip):
                let (from, to) = edit.range(inClipOf: clip.durationMicros)
                let length = max(0, to - from)
                if let problem = edit.problem(withClipOf: clip.durationMicros) {
                    disposition = .dropped(.invalid(problem))
                } else if !options.isLongEnough(length) {
                    disposition = .dropped(
                        .tooShort(
                            durationSeconds: Double(length) / 1e6, limitSeconds: options.minDuration,
                            trimmed: from > 0 || to < clip.durationMicros))
                } else if let limitMicros, start >= limitMicros || endsBeforeItsFirstFrame(start, limitMicros) {
                    disposition = .dropped(.beyondLimit(limitSeconds: options.maxDuration ?? 0))
                } else {
                    let used = limitMicros.map { min(length, $0 - start) } ?? length
                    let planned = PlannedClip(
                        clip: clip, edit: edit, exactStartMicros: start, durationMicros: used, options: options,
                        capabilities: capabilities)
                    if planned.endMicros > planned.startMicros {
                        disposition = .kept(clips.count)
                        clips.append(planned)
                        start = start.addingSaturating(used)
                    } else {
                        disposition = .dropped(
                            .noFrame(
                                durationSeconds: Double(length) / 1e6, frameSeconds: 1 / options.frameRate.doubleValue,
                                trimmed: from > 0 || to < clip.durationMicros))
                    }
                }
            }
            inputs.append((probe, edit, disposition))
        }
    }

    /// Whether a clip starting at `start` would be cut by the limit before its first output
    /// frame: it would show nothing, so it counts as left out.
    private func endsBeforeItsFirstFrame(_ start: Int64, _ limit: Int64) -> Bool {
        timeline.frameIndex(atMicros: limit) <= timeline.frameIndex(atMicros: start)
    }

    /// Whether --max-duration ended the output before the plan's inputs did.
    package var isCutByMaxDuration: Bool {
        clips.last?.isCut == true
            || dropped.contains { if case .beyondLimit = $0.reason { return true } else { return false } }
    }

    /// The same, from probed clips and a list of unreadable inputs (listed first).
    package init(clips probed: [ClipInfo], invalid: [(path: String, reason: String)] = [], options: MergeOptions) {
        self.init(
            probes: invalid.map { .invalid(path: $0.path, reason: $0.reason) } + probed.map { .clip($0) },
            options: options)
    }
}

/// "40 min", "3.2 hours": a long time for messages, rounded.
package func formatDuration(_ seconds: Double) -> String {
    if seconds < 5400 { return "\(Int((seconds / 60).rounded())) min" }
    return "\(formatSeconds((seconds / 360).rounded() / 10)) hours"
}

/// "2.5", "1.467", "2": seconds for messages, without trailing zeros.
package func formatSeconds(_ seconds: Double) -> String {
    var text = String(format: "%.3f", seconds)
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
}
