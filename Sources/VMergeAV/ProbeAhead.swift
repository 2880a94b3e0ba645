import Foundation
import VMergeCore

/// Probes the inputs a few ahead of the one the plan is reading, each on a thread of its own.
///
/// Probing a 1080p clip takes about 0.15 s of one core (`avformat_find_stream_info` decodes its
/// first pictures on one thread), so six probed in turn left the other core idle for most of a
/// second before any merge could start (BENCH.md, issue 36). The plan still reads the results in
/// input order, so what it decides (where it stops at an invalid input or at --max-duration) is
/// what it was; an input probed ahead but never reached costs only the reading.
final class ProbeAhead: @unchecked Sendable {
    typealias Outcome = Result<(ClipInfo, [Diagnostic]), Error>

    private let paths: [String]
    private let confinement: InputConfinement?
    /// How many probes may run at once: the cores this process may use, at most 4 (each holds
    /// a demuxer and a decoder's first pictures).
    private let width: Int
    private let condition = NSCondition()
    private var outcomes: [Int: Outcome] = [:]
    /// Inputs [0, started) have had their probe started.
    private var started = 0
    private var running = 0

    init(_ paths: [String], confinedTo confinement: InputConfinement?, width: Int = min(4, CPUBudget.cores)) {
        self.paths = paths
        self.confinement = confinement
        self.width = max(1, width)
    }

    /// Input `index`'s probe, once it is done; the probes of the inputs after it start meanwhile.
    func outcome(_ index: Int) -> Outcome {
        condition.lock()
        defer { condition.unlock() }
        while started < min(paths.count, index + width) {
            start(started)
            started += 1
        }
        while outcomes[index] == nil { condition.wait() }
        return outcomes.removeValue(forKey: index)!
    }

    /// Waits for the probes still running (inputs probed ahead but not reached), so that no file
    /// is read after the plan is made.
    func finish() {
        condition.lock()
        defer { condition.unlock() }
        while running > 0 { condition.wait() }
    }

    /// Starts input `index`'s probe; called with the lock held.
    private func start(_ index: Int) {
        running += 1
        let path = paths[index]
        let confinement = confinement
        let thread = Thread { [self] in
            POSIX.nameThread("vmerge-probe")
            FFmpegLog.setThreadFile(path)
            let outcome = Outcome { try Probe.clip(at: path, confinedTo: confinement) }
            FFmpegLog.setThreadFile(nil)
            condition.lock()
            outcomes[index] = outcome
            running -= 1
            condition.broadcast()
            condition.unlock()
        }
        // As the decoding thread's: FFmpeg's decoders need more than a secondary thread's default.
        thread.stackSize = 8 << 20
        thread.start()
    }
}
