import Foundation
import VMergeCore

/// The one channel of diagnostics out of a run that goes on past them: a job's (warnings, notes,
/// deleted files, each naming its file) and a worker's diary (watch, batch, the queue's workers:
/// `log("claimed job1")`, `log.warning(...)`, `log.error(...)`, naming no file). Whoever owns
/// the run decides how they are printed or recorded.
package struct DiagnosticSink: Sendable {
    package let send: @Sendable (Diagnostic) -> Void

    package init(_ send: @escaping @Sendable (Diagnostic) -> Void) { self.send = send }

    package func callAsFunction(_ diagnostic: Diagnostic) { send(diagnostic) }
    package func callAsFunction(_ text: String) { send(Diagnostic(.info, file: nil, text)) }
    package func warning(_ text: String) { send(Diagnostic(.warning, file: nil, text)) }
    package func error(_ text: String) { send(Diagnostic(.error, file: nil, text)) }
}
