import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// What a finished merge produced.
public struct MergeResult: Sendable {
    public var output: String
    public var plan: MergePlan
    public var bytes: Int64
    public var durationMicros: Int64
    public var wallSeconds: Double
}

/// Probe -> Plan -> per clip (Demux -> Decode -> Filter) -> Encode -> Mux -> Finalize.
public struct Merger {
    public var options: MergeOptions
    /// Receives warnings and notes as they happen (dropped clips, skipped inputs...).
    public var report: (Diagnostic) -> Void

    public init(options: MergeOptions, report: @escaping (Diagnostic) -> Void) {
        self.options = options
        self.report = report
    }

    /// Makes FFmpeg quiet (vmerge reports problems itself) and lets SIGINT/SIGTERM stop a run
    /// cleanly instead of killing it with a half-written file.
    public static func prepareProcess(ffmpegLogLevel: Int32 = AV_LOG_QUIET) {
        av_log_set_level(ffmpegLogLevel)
        vm_install_cancel_handlers()
    }

    /// Merges `inputs` into `output`, which appears only if everything succeeded.
    public func merge(inputs: [String], output: String) throws -> MergeResult {
        let started = Date()
        try OutputTarget.check(output, inputs: inputs, overwrite: options.overwrite)
        let plan = try cancellable { try makePlan(inputs: inputs) }
        let target = try OutputTarget(path: output)
        do {
            try cancellable { try encode(plan, to: target.temporaryPath) }
            try target.commit(overwrite: options.overwrite)
        } catch {
            target.discard()
            throw error
        }
        return MergeResult(
            output: output, plan: plan, bytes: target.committedSize,
            durationMicros: plan.durationMicros,
            wallSeconds: Date().timeIntervalSince(started))
    }

    /// Probes every input, then decides what to keep. Throws on the first invalid input
    /// unless `skipInvalid`, and when nothing is left to merge.
    public func makePlan(inputs: [String]) throws -> MergePlan {
        var clips: [ClipInfo] = []
        var invalid: [(path: String, reason: String)] = []
        for path in inputs {
            do {
                let (clip, diagnostics) = try Probe.clip(at: path)
                diagnostics.forEach(report)
                clips.append(clip)
            } catch let VMergeError.invalidInput(file, reason) where options.skipInvalid {
                invalid.append((file, reason))
            }
        }
        let plan = MergePlan(clips: clips, invalid: invalid, options: options)
        for (path, reason) in plan.dropped { report(Diagnostic(.warning, file: path, reason.message)) }
        if plan.clips.isEmpty { throw VMergeError.nothingToMerge(dropped: plan.dropped.count) }
        return plan
    }

    /// A signal makes FFmpeg calls fail through the interrupt callback with whatever error
    /// they return; report those as the cancellation they are.
    private func cancellable<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            let signal = vm_cancel_signal()
            if signal != 0 { throw VMergeError.cancelled(signal: signal) }
            throw error
        }
    }

    private func encode(_ plan: MergePlan, to path: String) throws {
        let writer = try Writer(path: path, options: options, creationTime: plan.clips.first?.clip.creationTime)
        // Decode/filter on a thread of its own, encode/mux here: on two cores the two halves
        // overlap instead of taking turns.
        let queue = FrameQueue(capacity: 32)
        let producer = Producer(plan: plan, options: options, queue: queue, report: report)
        let thread = Thread { producer.run() }
        thread.stackSize = 8 << 20
        thread.start()
        defer { producer.waitUntilDone() }
        do {
            try queue.consume { try writer.apply($0) }
        } catch {
            queue.stop(error)
            throw error
        }
        let signal = vm_cancel_signal()
        if signal != 0 { throw VMergeError.cancelled(signal: signal) }
        try writer.finish()
    }
}

/// The decode/filter stage: every clip in turn, one open at a time, so memory stays flat
/// however many there are.
private final class Producer: @unchecked Sendable {
    private let plan: MergePlan
    private let options: MergeOptions
    private let queue: FrameQueue
    private let report: (Diagnostic) -> Void
    private let done = DispatchSemaphore(value: 0)

    init(plan: MergePlan, options: MergeOptions, queue: FrameQueue, report: @escaping (Diagnostic) -> Void) {
        self.plan = plan
        self.options = options
        self.queue = queue
        self.report = report
    }

    func run() {
        defer { done.signal() }
        do {
            for clip in plan.clips {
                try ClipPipeline(clip, options: options, sink: queue, report: report).run()
            }
            queue.finish(nil)
        } catch {
            queue.finish(error)
        }
    }

    func waitUntilDone() { done.wait() }
}
