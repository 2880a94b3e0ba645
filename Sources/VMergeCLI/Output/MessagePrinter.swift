import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// How a run's messages are said on stderr: lines for people, or (`--progress json` on stderr)
/// one JSON event per line, so a pipeline reading that stream meets nothing else in it.
enum MessageForm: Equatable {
    case lines
    case jsonEvents

    /// `--progress json` with no `--progress-fd` puts its objects on stderr: the messages join them
    /// as events. Sent elsewhere, stderr stays for people.
    init(progress: ProgressMode, fd: Int32?) {
        self = progress == .json && fd == nil ? .jsonEvents : .lines
    }
}

/// The one owner of stderr during a run: diagnostics, errors and a progress display share it
/// without tearing each other's lines, from any thread.
final class MessagePrinter: @unchecked Sendable {
    private let console: Console
    private let verbosity: Verbosity
    let form: MessageForm
    private let colour: Bool
    private let lock = NSLock()
    /// A status line on stderr that must be cleared before a message and drawn again after.
    private var statusLine: String?
    private var statusDrawer: StatusLine?

    /// stderr's width, for a status line drawn there.
    var statusWidth: TerminalWidth {
        lock.lock()
        defer { lock.unlock() }
        return drawer.width
    }

    private var drawer: StatusLine {
        if let statusDrawer { return statusDrawer }
        let made = StatusLine(width: TerminalWidth(fd: 2, environment: console.environment))
        statusDrawer = made
        return made
    }

    /// The printer of one run (merge, batch, watch); with -v, FFmpeg's own warnings and errors
    /// go through it too, each tagged with its file (24 = AV_LOG_WARNING: not FFmpeg's chatter).
    static func forRun(console: Console, verbosity: Verbosity, form: MessageForm = .lines) -> MessagePrinter {
        let printer = MessagePrinter(console: console, verbosity: verbosity, form: form)
        if verbosity == .verbose {
            FFmpegLog.install(level: 24, diagnostics: printer.diagnostics)
        }
        return printer
    }

    init(console: Console, verbosity: Verbosity, form: MessageForm = .lines) {
        self.console = console
        self.verbosity = verbosity
        self.form = form
        colour = console.usesColour && form == .lines
    }

    /// The sink of a run of one job (a merge): each diagnostic as `diagnostic(_:)` says it.
    var diagnostics: DiagnosticSink { DiagnosticSink { [self] in diagnostic($0) } }

    /// The sink of a run that goes on past its jobs (batch, watch, worker): a job's diagnostics,
    /// each naming its file, as any run's; the worker's own diary, naming no file, as
    /// "vmerge: <mode>: ..."; with -q only its errors and warnings.
    func sink(_ mode: String) -> DiagnosticSink {
        DiagnosticSink { diagnostic in
            guard diagnostic.heading == nil else { return self.diagnostic(diagnostic) }
            switch diagnostic.severity {
            case .info, .note, .deleted: self.print(.info, file: nil, "\(mode): " + diagnostic.message)
            // Shown with -q too, in the warning's colour.
            case .warning: self.print(.warning, file: nil, "\(mode): warning: " + diagnostic.message, evenIfQuiet: true)
            case .error: self.print(.error, file: nil, "\(mode): " + diagnostic.message)
            }
        }
    }

    /// "vmerge: <file>: <message>"; errors always, the rest unless quiet. As an event, its
    /// severity names it.
    func print(_ severity: Diagnostic.Severity, file: String?, _ message: String, evenIfQuiet: Bool = false) {
        say(Diagnostic(severity, file: file, message), event: severity.rawValue, evenIfQuiet: evenIfQuiet)
    }

    /// The run's last word ("wrote out.mp4 (...)", "batch: 3 done, ..."): a line like any, or a
    /// `summary` event with its numbers in `fields`.
    func summary(_ severity: Diagnostic.Severity, _ message: String, fields: [(String, JSON)]) {
        say(Diagnostic(severity, about: nil, message), event: "summary", fields: fields)
    }

    /// The error a command ends with: a line like any, or an `error` event with the exit status
    /// it means (the status stays the process's too).
    func failure(_ error: Diagnostic, exit: Exit) {
        say(error, event: "error", fields: [("exit", .int(Int(exit.status)))])
    }

    /// The line "vmerge: <scope>: <subject>: <message>", or its event: the event's `file` is the
    /// file the message is about, never a scope or a label (those are in its `text`).
    private func say(_ diagnostic: Diagnostic, event: String, fields: [(String, JSON)] = [], evenIfQuiet: Bool = false) {
        let (severity, message) = (diagnostic.severity, diagnostic.message)
        guard severity == .error || evenIfQuiet || verbosity != .quiet else { return }
        let body = VisibleText.of(diagnostic.text)
        var prefix = "vmerge:"
        if colour {
            switch severity {
            case .error: prefix = "\u{1B}[1;31mvmerge:\u{1B}[0m"
            case .warning: prefix = "\u{1B}[1;33mvmerge:\u{1B}[0m"
            case .note, .info, .deleted: break
            }
        }
        var line = "\(prefix) \(body)\n"
        if form == .jsonEvents {
            // The line a person would have read rides along as `text`: `jq -r .text` gives the log back.
            let object = JSON.object(
                [("event", .string(event)), ("level", .string(severity.rawValue)), ("file", .string(diagnostic.file?.escaped))]
                    + [("message", .string(message))] + fields + [("text", .string("vmerge: " + body))])
            line = object.text() + "\n"
        }
        lock.lock()
        defer { lock.unlock() }
        if statusLine != nil { console.writeErrText(drawer.replace(with: nil)) }
        console.writeErrText(line)
        if let statusLine { console.writeErrText(drawer.replace(with: statusLine)) }
    }

    /// Lines for people that are no message (the dry run's plan when stdout has the report, a
    /// usage line): as they are, or each a `kind` event.
    func text(_ lines: [String], kind: String) {
        let shown = lines.map { line in
            form == .lines
                ? VisibleText.of(line) : JSON.object([("event", .string(kind)), ("text", .string(line))]).text()
        }
        lock.lock()
        defer { lock.unlock() }
        console.writeErrText(shown.map { $0 + "\n" }.joined())
    }

    /// A diagnostic as "vmerge: <file>: <message>"; with -q a deleted file is counted instead
    /// (see `sayDeletedCount`).
    func diagnostic(_ diagnostic: Diagnostic) {
        guard diagnostic.severity == .deleted && verbosity == .quiet else {
            return say(diagnostic, event: diagnostic.severity.rawValue)
        }
        lock.lock()
        deletedQuietly += 1
        lock.unlock()
    }

    /// Files --delete-sources deleted while -q kept each line back.
    private var deletedQuietly = 0

    /// With -q, how many source files were deleted: a run that deleted anything always says so.
    func sayDeletedCount() {
        lock.lock()
        let count = deletedQuietly
        deletedQuietly = 0
        lock.unlock()
        if count > 0 { print(.note, file: nil, "deleted \(count) source file\(count == 1 ? "" : "s") (--delete-sources)", evenIfQuiet: true) }
    }

    /// Draws (or with nil, clears) the status line.
    func status(_ line: String?) {
        lock.lock()
        defer { lock.unlock() }
        let shown = statusLine != nil
        statusLine = line
        if line != nil || shown { console.writeErrText(drawer.replace(with: line)) }
    }

    /// Writes a whole line to stderr as is (plain and json progress).
    func line(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        console.error(text)
    }
}
