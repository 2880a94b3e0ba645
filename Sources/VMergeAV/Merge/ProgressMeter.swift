import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Turns the writer's position into progress reports: which clip, how far, at most every
/// 100 ms.
final class ProgressMeter {
    private let plan: MergePlan
    private let clock = Stopwatch()
    private let sink: ((MergeProgress) -> Void)?
    private var lastReport = -1.0
    private var clip = 0

    init(plan: MergePlan, sink: ((MergeProgress) -> Void)?) {
        self.plan = plan
        self.sink = sink
    }

    /// `bytes`: the output's size so far, read only when a report is due.
    func update(outputFrames: Int64, bytes: () -> Int64) {
        guard let sink else { return }
        let now = clock.seconds
        guard lastReport < 0 || now - lastReport >= 0.1 else { return }
        lastReport = now
        let micros = plan.timeline.micros(ofFrame: outputFrames)
        while clip + 1 < plan.clips.count && plan.clips[clip + 1].startMicros <= micros { clip += 1 }
        sink(
            MergeProgress(
                phase: .encoding, item: clip + 1, itemCount: plan.clips.count, file: plan.clips[clip].clip.path,
                doneMicros: micros, totalMicros: plan.outputDurationMicros,
                elapsedSeconds: clock.seconds, outputBytes: bytes()))
    }

    func finish(outputMicros: Int64, bytes: Int64) {
        sink?(
            MergeProgress(
                phase: .done, item: plan.clips.count, itemCount: plan.clips.count, file: nil,
                doneMicros: outputMicros, totalMicros: plan.outputDurationMicros,
                elapsedSeconds: clock.seconds, outputBytes: bytes))
    }
}
