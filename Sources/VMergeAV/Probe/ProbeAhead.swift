import Foundation
import VMergeCore

/// Probes the inputs a few ahead of the one the plan is reading, on a few threads of its own.
///
/// Probing a 1080p clip takes about 0.15 s of one core (`avformat_find_stream_info` decodes its
/// first pictures on one thread), so six probed in turn left the other core idle for most of a
/// second before any merge could start (BENCH.md, issue 36: 0.93 s -> 0.53 s for set P). The plan
/// still reads the results in input order, so what it decides (where it stops at an invalid input
/// or at --max-duration) is what it was. An input probed ahead but never reached costs only the
/// reading; with --verbose, FFmpeg's messages about it may show although the report calls it
/// not probed.
final class ProbeAhead: @unchecked Sendable {
    typealias Outcome = Result<(ClipInfo, [Diagnostic]), Error>

    private let paths: [String]
    private let confinement: InputConfinement?
    private let cancel: CancelToken?
    private let sources: (any InputSources)?
    /// How many inputs may be probed at once (the one asked for and those after it): the cores
    /// this process may use, at most 4 (each probe holds a demuxer and a decoder's first pictures).
    private let lookahead: Int
    private let condition = NSCondition()
    private var outcomes: [Int: Outcome] = [:]
    /// The next input a worker takes; inputs before `allowed` may be taken.
    private var next = 0
    private var allowed = 0
    private var workers = 0
    private var stopped = false

    init(
        _ paths: [String], confinedTo confinement: InputConfinement?, sources: (any InputSources)? = nil,
        cancel: CancelToken?,
        lookahead: Int = min(4, CPUBudget.cores)
    ) {
        self.paths = paths
        self.confinement = confinement
        self.sources = sources
        self.cancel = cancel
        self.lookahead = max(1, lookahead)
    }

    /// Input `index`'s probe, once it is done; the probes of the inputs after it go on meanwhile.
    func outcome(_ index: Int) -> Outcome {
        condition.lock()
        defer { condition.unlock() }
        allowed = max(allowed, min(paths.count, index + lookahead))
        while workers < min(lookahead, paths.count) && !stopped {
            workers += 1
            startWorker()
        }
        condition.broadcast()
        while outcomes[index] == nil { condition.wait() }
        return outcomes.removeValue(forKey: index)!
    }

    /// Stops the workers and waits for the probes still running (inputs probed ahead but not
    /// reached), so that no file is read once the plan is made.
    func finish() {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        condition.broadcast()
        while workers > 0 { condition.wait() }
    }

    private func startWorker() {
        let thread = Thread { [self] in
            POSIX.nameThread("vmerge-probe")
            condition.lock()
            while true {
                while !stopped && next < paths.count && next >= allowed { condition.wait() }
                if stopped || next >= paths.count { break }
                let index = next
                next += 1
                condition.unlock()
                let outcome = probe(paths[index])
                condition.lock()
                outcomes[index] = outcome
                condition.broadcast()
            }
            workers -= 1
            condition.broadcast()
            condition.unlock()
        }
        // As the decoding thread's: FFmpeg's decoders need more than a secondary thread's default.
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func probe(_ path: String) -> Outcome {
        FFmpegLog.setThreadFile(path)
        defer { FFmpegLog.setThreadFile(nil) }
        return Outcome { try Probe.clip(at: path, confinedTo: confinement, sources: sources, cancel: cancel) }
    }
}
