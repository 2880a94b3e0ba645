import Foundation

/// How far a run has got, as reported to progress displays.
package struct MergeProgress: Sendable, Equatable {
    package enum Phase: String, Sendable { case probing, encoding, done }

    package var phase: Phase
    /// The input being probed, or the clip being encoded: 1-based, and how many there are.
    package var item: Int
    package var itemCount: Int
    package var file: String?
    /// Output media time written so far and the planned total, in microseconds.
    package var doneMicros: Int64
    package var totalMicros: Int64
    package var elapsedSeconds: Double
    /// Bytes of the output written so far (0 while probing).
    package var outputBytes: Int64

    package init(
        phase: Phase, item: Int, itemCount: Int, file: String?, doneMicros: Int64, totalMicros: Int64,
        elapsedSeconds: Double, outputBytes: Int64 = 0
    ) {
        self.phase = phase
        self.item = item
        self.itemCount = itemCount
        self.file = file
        self.doneMicros = doneMicros
        self.totalMicros = totalMicros
        self.elapsedSeconds = elapsedSeconds
        self.outputBytes = outputBytes
    }

    /// 0...1 of the whole merge (probing counts as the start: it is quick next to encoding).
    package var fraction: Double {
        switch phase {
        case .probing: return 0
        case .done: return 1
        case .encoding: return totalMicros > 0 ? min(1, Double(doneMicros) / Double(totalMicros)) : 0
        }
    }

    /// Output seconds made per wall-clock second, once there is enough to tell.
    package var speed: Double? {
        guard phase != .probing, elapsedSeconds > 0.2, doneMicros > 0 else { return nil }
        return Double(doneMicros) / 1e6 / elapsedSeconds
    }

    /// Seconds left at the speed so far.
    package var etaSeconds: Double? {
        if phase == .done { return 0 }
        guard let speed, speed > 0 else { return nil }
        return Double(max(0, totalMicros.subtractingSaturating(doneMicros))) / 1e6 / speed
    }

    /// Read back from `json`'s object as JSONSerialization parses it (a status file, a queue
    /// row): nil when it is not one. What `json` derives (percent, speed, eta) is derived again.
    package init?(jsonObject object: [String: Any]) {
        func number(_ key: String) -> Double? {
            guard let value = (object[key] as? NSNumber)?.doubleValue, value.isFinite else { return nil }
            return max(0, value)
        }
        guard let phase = (object["phase"] as? String).flatMap(Phase.init(rawValue:)),
            let item = number("clip"), let itemCount = number("clips"), let done = number("out_time"),
            let total = number("total_time"), let elapsed = number("elapsed")
        else { return nil }
        self.init(
            phase: phase, item: Int(saturating: item), itemCount: Int(saturating: itemCount),
            file: object["file"] as? String, doneMicros: Int64(saturating: done * 1e6),
            totalMicros: Int64(saturating: total * 1e6), elapsedSeconds: elapsed,
            outputBytes: number("total_size").map { Int64(saturating: $0) } ?? 0)
    }

    /// One line of the `--progress json` stream.
    package var json: JSON {
        .object([
            ("phase", .string(phase.rawValue)),
            // While probing these count inputs; while encoding, kept clips.
            ("clip", .int(item)),
            ("clips", .int(itemCount)),
            ("file", .string(file)),
            ("percent", .number((fraction * 1000).rounded() / 10)),
            ("out_time", .number(Double(doneMicros) / 1e6)),
            ("total_time", .number(Double(totalMicros) / 1e6)),
            ("elapsed", .number((elapsedSeconds * 1000).rounded() / 1000)),
            // ffmpeg -progress's name for it.
            ("total_size", .int(outputBytes)),
            ("speed", .number(speed.map { ($0 * 100).rounded() / 100 })),
            ("eta", .number(etaSeconds.map { ($0 * 10).rounded() / 10 })),
            ("progress", .string(phase == .done ? "end" : "continue")),
        ])
    }
}
