import Foundation
import VMergeAV
import VMergeCore

/// One line of a worker's log (watch, and the queue's workers). Problems (failed jobs, claims or
/// moves that failed) and warnings (the job went on, but something needs a look) are shown even
/// with -q; the rest is the worker's diary.
package struct WorkerLogLine: Sendable, Equatable {
    package enum Level: Sendable { case info, warning, problem }
    package var level: Level
    package var text: String

    package init(level: Level, text: String) {
        self.level = level
        self.text = text
    }
}

/// The one sink of a worker's log lines, shared by watch (its loop, claims and status file) and
/// the queue's worker: `log("...")` for the diary, `log.warning`, `log.problem`.
package struct WorkerLog: Sendable {
    package let output: @Sendable (WorkerLogLine) -> Void

    package init(_ output: @escaping @Sendable (WorkerLogLine) -> Void) { self.output = output }

    package func callAsFunction(_ text: String) { output(WorkerLogLine(level: .info, text: text)) }
    package func warning(_ text: String) { output(WorkerLogLine(level: .warning, text: text)) }
    package func problem(_ text: String) { output(WorkerLogLine(level: .problem, text: text)) }
}
