import Foundation
import VMergeCore
import VMergeJobs

/// How a worker records what its jobs ended with (Worker.swift runs them): the job's state, and
/// with it the run's report and what the worker said about the job (its lines and its merge's
/// warnings, `JobLog`), so the job's page shows them.
extension Worker {
    /// Records every job that ended, oldest claim first, until the database cannot be reached.
    func record(on link: QueueLink) {
        let ended = lock.withLock { held.values.filter { $0.ending != nil }.sorted { $0.claim.id < $1.claim.id } }
        for job in ended {
            guard record(job, on: link) else { return }
            lock.withLock { held[job.claim.id] = nil }
        }
    }

    /// Says `text` about `job` (on the worker's log, "job <id> <name>: <text>") and keeps it in the
    /// job's log.
    func say(_ text: String, of job: HeldJob, problem: Bool = false) {
        let line = "\(job.label): \(text)"
        problem ? log.error(line) : log(line)
        lock.withLock { job.log.append(line) }
    }

    /// What is recorded with the job: its last progress (a merged job's is its end, phase
    /// done), report and log lines, and the line that ends them (said once recorded).
    private struct Record {
        var progress: String?
        var report: String?
        var log: [String]
    }

    /// The record of `job`, with `last` (its final line) in its log as it will be said.
    private func record(of job: HeldJob, last: String?) -> Record {
        lock.withLock {
            var log = job.log
            if let last { log.append("\(job.label): \(last)") }
            return Record(progress: job.progress.map { $0.json.text() }, report: job.report, log: log.lines)
        }
    }

    /// Records how `job` ended; false if the database could not be reached (tried again later).
    func record(_ job: HeldJob, on link: QueueLink) -> Bool {
        switch lock.withLock({ job.ending }) {
        case nil: return false
        case let .done(summary)?: return recordDone(job, summary: summary, on: link)
        case .cancelled?: return recordCancelled(job, on: link)
        case let .failed(failure, inputs)?: return recordFailure(job, failure, inputs: inputs, on: link)
        }
    }

    /// Done, even when cancelled in the queue meanwhile: its output is published (see
    /// `JobQueue.attemptEnds`).
    private func recordDone(_ job: HeldJob, summary: String, on link: QueueLink) -> Bool {
        let lateCancel = lock.withLock { job.stopped } == .cancelled
        let summary = summary + (lateCancel ? " (cancelled in the queue once its output was published)" : "")
        let record = record(of: job, last: summary)
        // Its event is written with its state: both or neither.
        let events = outboxEvents(.completed, of: job, data: reportData(of: job))
        guard
            let completed = link.attempt({ queue in
                try queue.recording(job: job.claim.id, events: { $0 ? events : [] }) {
                    try $0.complete(job.claim, progress: record.progress, report: record.report, log: record.log)
                }
            })
        else { return false }
        if completed {
            jobsDone += 1
            metrics.finished(.done)
            log("\(job.label): \(summary)")
        } else {
            log.error(
                "\(job.label): \(summary), but the job is no longer this worker's to record (\(lostReason(job)))")
        }
        return true
    }

    /// Cancelled in the queue: its report (status cancelled) and log kept in the cancelled row.
    /// Lost to another claim: nothing (the row is the other claim's). Stopped by a signal: back
    /// in the queue, the attempt not counted; or, when it was cancelled in the queue meanwhile
    /// (before a heartbeat saw it), kept in the cancelled row as above.
    private func recordCancelled(_ job: HeldJob, on link: QueueLink) -> Bool {
        let stopped = lock.withLock { job.stopped }
        if stopped == .lost {
            metrics.finished(.cancelled)
            log("\(job.label): stopped: \(lostReason(job))")
            return true
        }
        let cancelledLine = "stopped: it was cancelled in the queue"
        var last = stopped == .cancelled ? cancelledLine : "put back in the queue"
        var record = record(of: job, last: last)
        var recorded: Bool
        let events = outboxEvents(.cancelled, of: job, data: reportData(of: job))
        if stopped == .cancelled {
            guard
                let kept = link.attempt({ queue in
                    try queue.recording(job: job.claim.id, events: { $0 ? events : [] }) {
                        try $0.recordCancelled(
                            job.claim, progress: record.progress, report: record.report, log: record.log)
                    }
                })
            else { return false }
            recorded = kept
        } else {
            guard let released = link.attempt({ try $0.release(job.claim, report: record.report, log: record.log) })
            else { return false }
            recorded = released
            if !released {
                last = cancelledLine
                record = self.record(of: job, last: last)
                guard
                    let kept = link.attempt({ queue in
                        try queue.recording(job: job.claim.id, events: { $0 ? events : [] }) {
                            try $0.recordCancelled(
                                job.claim, progress: record.progress, report: record.report, log: record.log)
                        }
                    })
                else { return false }
                recorded = kept
            }
        }
        metrics.finished(.cancelled)
        // A cancelled row that moved on meanwhile (retried) keeps its own record: said all the same.
        log("\(job.label): \(recorded || stopped == .cancelled ? last : "stopped (\(lostReason(job)))")")
        return true
    }

    private func recordFailure(_ job: HeldJob, _ failure: VMergeError, inputs: [FileName], on link: QueueLink) -> Bool {
        let claim = job.claim
        let retryable = Worker.isRetryable(failure, output: job.output, inputs: inputs)
        let message = Worker.message(for: failure)
        // A cancel seen before the failure was recorded: the row stays cancelled, never retried.
        let cancelled = lock.withLock { job.stopped } == .cancelled
        let last =
            JobQueue.retry(after: claim, retryable: retryable && !cancelled).map {
                "failed: \(message); tried again in \(formatSeconds($0)) s (attempt \(claim.attempt) of "
                    + "\(claim.maxAttempts))"
            } ?? "failed: \(message)"
        let record = record(of: job, last: last)
        let error: JSON = .object([("file", .string(failure.file)), ("message", .string(message))])
        let failedEvents = outboxEvents(
            .failed, of: job, data: [("error", error), ("retryable", .bool(retryable))] + reportData(of: job))
        let cancelledEvents = outboxEvents(.cancelled, of: job, data: reportData(of: job))
        guard
            let result = link.attempt({ queue in
                try queue.recording(
                    job: claim.id,
                    events: { result in result == .failed ? failedEvents : result == .cancelled ? cancelledEvents : [] }
                ) {
                    try $0.fail(
                        claim, error: message, retryable: retryable, progress: record.progress,
                        report: record.report, log: record.log)
                }
            })
        else { return false }
        switch result {
        case .retrying, .failed:
            if result == .failed {
                jobsFailed += 1
                metrics.finished(.failed, reason: RunMetrics.FailureReason(failure, output: job.output, inputs: inputs))
            }
            log.error("\(job.label): \(last)")
        case .cancelled:
            metrics.finished(.cancelled)
            log.error("\(job.label): failed: \(message) (it was cancelled in the queue: left cancelled)")
        case .lost:
            log.error("\(job.label): failed: \(message) (not recorded: \(lostReason(job)))")
        }
        return true
    }

    private func lostReason(_ job: HeldJob) -> String {
        lock.withLock { job.stopped } == .cancelled
            ? "it was cancelled in the queue" : "its lease ran out and another worker took it, or it was cancelled"
    }
}
