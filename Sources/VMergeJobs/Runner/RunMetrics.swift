import Foundation
import VMergeCore

/// What one `watch` or `worker` process has done since it started, for `--metrics-listen`:
/// counters and histograms kept in memory, fed by the job loop, read by the metrics server's
/// threads. Plain values under a lock: the module that serves them (VMergeWeb) renders a
/// `Snapshot`, so the job modules never depend on the HTTP server.
package final class RunMetrics: @unchecked Sendable {
    /// How a job this process ran came to an end.
    package enum Result: String, Sendable, CaseIterable {
        /// Merged, or its output found to hold it already.
        case done
        /// Failed for good: not tried again.
        case failed
        /// Stopped before its end (cancelled in the queue, its lease lost, SIGINT/SIGTERM).
        case cancelled
    }

    /// Why a job failed, in a closed set a label can carry (the error's text never goes in a
    /// label: it is unbounded and from outside).
    package enum FailureReason: String, Sendable, CaseIterable {
        /// An input that cannot be used, or a job that cannot be read.
        case input
        /// A write error, an output name refused or taken by a file the job did not write.
        case output
        /// Too little free space for the output.
        case noSpace = "no_space"
        /// Every input clip was dropped.
        case nothingToMerge = "nothing_to_merge"
        /// Watch: its workers kept dying while running it.
        case crashed
        case other

        /// The reason for `error`, a job writing `output` from `inputs` (which tell the output's
        /// side of an I/O error from an input's); with no output (the job could not be read), an
        /// I/O error is the input's.
        package init(_ error: VMergeError, output: String?, inputs: [FileName]) {
            switch error {
            case .nothingToMerge: self = .nothingToMerge
            case .noSpace, .cannotFit: self = .noSpace
            case .invalidInput: self = .input
            case .outputExists, .outputIsInput, .outputNotOurs, .badOutputName: self = .output
            case .io, .ffmpeg:
                guard let output else { self = .input; return }
                self = error.isOnOutputSide(of: output, inputs: inputs) ? .output : .input
            case .database, .cancelled: self = .other
            }
        }
    }

    /// Counts of observations at or below each bound (not cumulative), their sum and count.
    package struct Histogram: Sendable, Equatable {
        package let bounds: [Double]
        package private(set) var counts: [UInt64]
        package private(set) var sum = 0.0
        package private(set) var count: UInt64 = 0

        package init(bounds: [Double]) {
            self.bounds = bounds.sorted()
            counts = Array(repeating: 0, count: bounds.count)
        }

        package mutating func observe(_ value: Double) {
            guard value.isFinite else { return }
            if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
            sum += value
            count += 1
        }

        /// Each bound with the observations at or below it, as Prometheus's buckets count them.
        package var cumulative: [(upperBound: Double, count: UInt64)] {
            var total: UInt64 = 0
            return zip(bounds, counts).map { bound, count in
                total += count
                return (bound, total)
            }
        }
    }

    /// Everything at one moment.
    package struct Snapshot: Sendable {
        package var finished: [Result: UInt64] = [:]
        package var failed: [FailureReason: UInt64] = [:]
        /// Wall seconds, and output media seconds per wall second, of each job that wrote an output.
        package var duration = Histogram(bounds: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200])
        package var speed = Histogram(bounds: [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64])
        /// The inputs merged into those outputs (their sizes when probed), and the outputs' bytes.
        package var readBytes: Int64 = 0
        package var writtenBytes: Int64 = 0
        package var sourcesDeleted: UInt64 = 0
        /// Event deliveries tried (--notify): taken by their receiver, or not.
        package var deliveries: (delivered: UInt64, failed: UInt64) = (0, 0)
        /// A watcher's events owed (the inbox's .events) and how long the oldest has waited, as
        /// its last look found them; nil: it keeps no outbox (no secret).
        package var outbox: (waiting: Int, oldestAge: Double)?
        /// Unix time of the last sign of life: a worker's last statement the queue answered, a
        /// watcher's last full look at its inbox.
        package var lastHeartbeat: Double?
        package var startTime: Double
    }

    private let lock = NSLock()
    private var state: Snapshot

    package init(startTime: Date = Date()) {
        state = Snapshot(startTime: startTime.timeIntervalSince1970)
    }

    package var snapshot: Snapshot { lock.withLock { state } }

    /// A job ended; `reason` for a failed one.
    package func finished(_ result: Result, reason: FailureReason? = nil) {
        lock.withLock {
            state.finished[result, default: 0] += 1
            if result == .failed { state.failed[reason ?? .other, default: 0] += 1 }
        }
    }

    /// A run that wrote an output: its time, speed and bytes. Runs that found their output done
    /// already, or wrote nothing, are not observed (they would read as absurdly fast jobs).
    package func wrote(_ outcome: JobOutcome) {
        guard case let .published(publication) = outcome.end else { return }
        let output = publication.result.output
        let read = publication.result.plan.clips.reduce(Int64(0)) { $0.addingSaturating($1.clip.fileSize) }
        let report = outcome.report
        let wall = max(report.wallSeconds, 1e-3)
        lock.withLock {
            state.duration.observe(report.wallSeconds)
            state.speed.observe(Double(output.durationMicros) / 1e6 / wall)
            state.readBytes = state.readBytes.addingSaturating(read)
            state.writtenBytes = state.writtenBytes.addingSaturating(output.bytes)
        }
    }

    package func deleted(_ count: Int) {
        guard count > 0 else { return }
        lock.withLock { state.sourcesDeleted += UInt64(count) }
    }

    /// An event's delivery was tried.
    package func delivered(_ taken: Bool) {
        lock.withLock {
            if taken { state.deliveries.delivered += 1 } else { state.deliveries.failed += 1 }
        }
    }

    /// What the outbox holds now.
    package func outbox(waiting: Int, oldestAge: Double) {
        lock.withLock { state.outbox = (waiting, oldestAge) }
    }

    package func heartbeat(at time: Date = Date()) {
        lock.withLock { state.lastHeartbeat = time.timeIntervalSince1970 }
    }
}
