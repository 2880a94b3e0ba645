import Foundation
import VMergeCore
import VMergeRemote

/// Where a run's events go (`--notify`; a job's `notify`): `send` hands each on (a one-shot run's
/// `Notifier`), never waiting for a receiver, so an event never holds up a merge.
package struct JobEvents: Sendable {
    package var send: @Sendable (JobEvent) -> Void
    /// The job's id in the queue, when it has one.
    package var queueID: Int64?
    /// What the caller gave with the job, given back in every event.
    package var metadata: JSON?
    /// At most one `job.progress` this often.
    package var progressEvery: Double = 30

    package init(queueID: Int64? = nil, metadata: JSON? = nil, send: @escaping @Sendable (JobEvent) -> Void) {
        self.queueID = queueID
        self.metadata = metadata
        self.send = send
    }

    func event(_ kind: JobEvent.Kind, _ job: Job, data: [(String, JSON)] = []) -> JobEvent {
        JobEvent(kind, job: job.name, output: job.output.escaped, queueID: queueID, metadata: metadata, data: data)
    }
}

extension JobRunner {
    /// `job.started`: the job is to be made (not found done, not a dry run).
    func sayStarted(_ job: Job) {
        guard let events else { return }
        events.send(events.event(.started, job))
    }

    /// The run's progress callback, with `job.progress` every `progressEvery` seconds at most.
    func progress(of job: Job) -> ((MergeProgress) -> Void)? {
        guard let events else { return onProgress }
        let (own, context) = (onProgress, context)
        let last = LastSent()
        return { progress in
            own?(progress)
            guard last.due(every: context.hooks.progressEventSeconds ?? events.progressEvery) else { return }
            events.send(events.event(.progress, job, data: [("progress", progress.json)]))
        }
    }

    /// How the job ended, said once: `job.completed` with its report (made now, or found done),
    /// `job.failed` with the error and whether a retry could cure it, or `job.cancelled`.
    func sayEnded(_ job: Job, _ end: JobEnd, report: RunReport) {
        guard let events else { return }
        let reportJSON = report.json
        switch end {
        case .planned: return
        case .published, .upToDate:
            events.send(events.event(.completed, job, data: [("report", reportJSON)]))
        case .cancelled:
            events.send(events.event(.cancelled, job, data: [("report", reportJSON)]))
        case .refused, .failed, .nothingToMerge:
            let error: JSON =
                report.error.map { .object([("file", .string($0.file)), ("message", .string($0.message))]) } ?? .null
            let retryable = end.failure.map { !$0.forGood } ?? false
            events.send(
                events.event(
                    .failed, job, data: [("error", error), ("retryable", .bool(retryable)), ("report", reportJSON)]))
        }
    }
}

/// When the last progress event went: at most one each period, the first a period after the
/// first progress (a short job says none).
private final class LastSent: @unchecked Sendable {
    private let lock = NSLock()
    private var at: Date?

    func due(every seconds: Double) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let now = Date()
        guard let at else {
            self.at = now
            return false
        }
        if now.timeIntervalSince(at) < seconds { return false }
        self.at = now
        return true
    }
}

extension Notifier {
    /// Waits up to `seconds` for the events sent, says each not delivered (a warning naming its
    /// receiver), and returns every one as a report records it, with the batch job it tells of.
    package func finish(within seconds: Double, saying diagnostics: DiagnosticSink) -> [(
        job: Int?, record: NotificationRecord
    )] {
        finish(within: seconds).map { delivery in
            if !delivery.delivered {
                // Never tried (behind a receiver that did not answer), or tried and not taken.
                let why =
                    switch (delivery.attempts, delivery.lastError) {
                    case (0, _): "not tried"
                    case let (tries, error): "\(tries == 1 ? "1 try" : "\(tries) tries"); \(error ?? "no answer yet")"
                    }
                diagnostics(
                    Diagnostic(
                        .warning, file: delivery.target.shown, "\(delivery.kind.rawValue) was not delivered (\(why))"))
            }
            let record = NotificationRecord(
                url: delivery.target.shown, event: delivery.kind.rawValue, delivered: delivery.delivered,
                attempts: delivery.attempts, error: delivery.lastError)
            return (delivery.job, record)
        }
    }
}
