/// The one channel diagnostics leave every layer by, from the FFmpeg layer up: a job's warnings,
/// notes and deleted files, each naming its file, and a worker's diary (watch, batch, the queue's
/// workers: `log("claimed job1")`, `log.warning(...)`, `log.error(...)`, naming no file).
///
/// Made once, at the top, by whoever owns the run (the command line's printer, the API's list of
/// warnings, a test), and handed down; each layer that knows more about the work adds it as a
/// scope (`tagged("batch: [2/5] trip")`, `namingFiles(claim.showing)`), so the layers below say
/// only what they know. Sendable: the decoding thread says its warnings through the same sink as
/// the encoding one.
package struct DiagnosticSink: Sendable {
    package let send: @Sendable (Diagnostic) -> Void

    package init(_ send: @escaping @Sendable (Diagnostic) -> Void) { self.send = send }

    /// Says nothing: for work whose diagnostics nobody reads (a plan made only to judge a done
    /// output, resolving a batch's names, the fuzzer).
    package static let silent = DiagnosticSink { _ in }

    package func callAsFunction(_ diagnostic: Diagnostic) { send(diagnostic) }
    package func callAsFunction(_ text: String) { send(Diagnostic(.info, file: nil, text)) }
    package func warning(_ text: String) { send(Diagnostic(.warning, file: nil, text)) }
    package func error(_ text: String) { send(Diagnostic(.error, file: nil, text)) }

    /// A scope whose every diagnostic is said as `tag`'s (see `Diagnostic.tagged`): whose it is,
    /// when several jobs speak at once.
    package func tagged(_ tag: String) -> DiagnosticSink {
        let send = send
        return DiagnosticSink { send($0.tagged(tag)) }
    }

    /// A scope that names each diagnostic's file as `shown` does (a watch claim's files, named
    /// where the log says they are, though the claim's folder moves on).
    package func namingFiles(_ shown: @escaping @Sendable (String) -> String) -> DiagnosticSink {
        let send = send
        return DiagnosticSink { diagnostic in
            var diagnostic = diagnostic
            if let file = diagnostic.file { diagnostic.subject = .file(FileName(shown(file.escaped))) }
            send(diagnostic)
        }
    }

    /// A scope that also hands each diagnostic to `record` (a queue job's own log) as said to it,
    /// without what the scopes this one was made from add.
    package func recording(_ record: @escaping @Sendable (Diagnostic) -> Void) -> DiagnosticSink {
        let send = send
        return DiagnosticSink { diagnostic in
            send(diagnostic)
            record(diagnostic)
        }
    }
}
