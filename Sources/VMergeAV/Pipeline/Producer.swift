import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// The decode/filter stage: every clip in turn, one open at a time, so memory stays flat
/// however many there are.
final class Producer: @unchecked Sendable {
    private let plan: MergePlan
    private let options: MergeOptions
    private let queue: FrameQueue
    private let diagnostics: DiagnosticSink
    private let context: MergeContext
    private let done = DispatchSemaphore(value: 0)
    /// One per clip run to its end; read once the thread is done.
    private(set) var decodeCounts: [DecodeCount] = []

    init(
        plan: MergePlan, options: MergeOptions, context: MergeContext, queue: FrameQueue,
        diagnostics: DiagnosticSink
    ) {
        self.plan = plan
        self.options = options
        self.queue = queue
        self.diagnostics = diagnostics
        self.context = context
    }

    /// Runs on a thread of its own, named `vmerge-decode`: the decoders' frame threads take
    /// the name too (Linux threads inherit it), so profiles and top tell decoding from encoding.
    func start() {
        let thread = Thread { [self] in
            POSIX.nameThread("vmerge-decode")
            run()
        }
        // FFmpeg's decoders need more stack than a secondary thread's default.
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func run() {
        defer { done.signal() }
        do {
            for clip in plan.clips {
                FFmpegLog.setThreadFile(clip.clip.path)
                let pipeline = try ClipPipeline(clip, options: options, context: context, sink: queue, diagnostics: diagnostics)
                try pipeline.run()
                decodeCounts.append(pipeline.decodeCount)
            }
            queue.finish(nil)
        } catch {
            queue.finish(error)
        }
    }

    /// Returns once the thread has finished (at once, every time after the first).
    func waitUntilDone() {
        done.wait()
        done.signal()
    }
}
