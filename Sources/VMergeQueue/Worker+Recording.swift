import Foundation
import VMergeCore

/// How a worker records what its jobs ended with (Worker.swift runs them).
extension Worker {
    /// Records every job that ended, oldest claim first, until the database cannot be reached.
    func record(on link: QueueLink) {
        let ended = lock.withLock { held.values.filter { $0.ending != nil }.sorted { $0.claim.id < $1.claim.id } }
        for job in ended {
            guard record(job, on: link) else { return }
            lock.withLock { held[job.claim.id] = nil }
        }
    }

    /// Records how `job` ended; false if the database could not be reached (tried again later).
    func record(_ job: HeldJob, on link: QueueLink) -> Bool {
        let (ending, stopped, progress) = lock.withLock { (job.ending, job.stopped, job.progress) }
        let claim = job.claim
        // The row keeps how far the job got: a merged job's last progress is its end (phase done).
        let finalProgress = progress.map { $0.json.text() }
        switch ending {
        case nil:
            return false
        case let .done(summary)?:
            guard let completed = link.attempt({ try $0.complete(claim, progress: finalProgress) }) else {
                return false
            }
            if completed {
                jobsDone += 1
                log("\(job.label): \(summary)")
            } else {
                log.problem(
                    "\(job.label): \(summary), but the job is no longer this worker's to record (\(lostReason(stopped)))"
                )
            }
        case .cancelled?:
            if let stopped {
                log("\(job.label): stopped: \(lostReason(stopped))")
                return true
            }
            // Stopped by a signal: back in the queue, the attempt not counted.
            guard let released = link.attempt({ try $0.release(claim) }) else { return false }
            log("\(job.label): \(released ? "put back in the queue" : "stopped (\(lostReason(nil)))")")
        case let .failed(failure, inputs)?:
            let retryable = Worker.isRetryable(failure, output: job.output, inputs: inputs)
            let message = Worker.message(for: failure)
            guard
                let result = link.attempt({
                    try $0.fail(claim, error: message, retryable: retryable, progress: finalProgress)
                })
            else {
                return false
            }
            switch result {
            case let .retrying(seconds):
                log.problem(
                    "\(job.label): failed: \(message); tried again in \(formatSeconds(seconds)) s (attempt "
                        + "\(claim.attempt) of \(claim.maxAttempts))")
            case .failed:
                jobsFailed += 1
                log.problem("\(job.label): failed: \(message)")
            case .lost:
                log.problem("\(job.label): failed: \(message) (not recorded: \(lostReason(stopped)))")
            }
        }
        return true
    }

    private func lostReason(_ stopped: JobQueue.Heartbeat?) -> String {
        stopped == .cancelled
            ? "it was cancelled in the queue" : "its lease ran out and another worker took it, or it was cancelled"
    }
}
