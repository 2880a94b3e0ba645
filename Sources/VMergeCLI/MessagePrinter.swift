import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// The one owner of stderr during a run: diagnostics, errors and a progress display share it
/// without tearing each other's lines, from any thread.
final class MessagePrinter: @unchecked Sendable {
    private let console: Console
    private let verbosity: Verbosity
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
    static func forRun(console: Console, verbosity: Verbosity) -> MessagePrinter {
        let printer = MessagePrinter(console: console, verbosity: verbosity)
        if verbosity == .verbose {
            FFmpegLog.install(level: 24) { file, message in printer.print(.note, file: file, message) }
        }
        return printer
    }

    init(console: Console, verbosity: Verbosity) {
        self.console = console
        self.verbosity = verbosity
        colour = console.usesColour
    }

    /// The sink of a run that goes on past its jobs (batch, watch, worker): a job's diagnostics,
    /// each naming its file, as any run's; the worker's own diary, naming no file, as
    /// "vmerge: <mode>: ..."; with -q only its errors and warnings.
    func sink(_ mode: String) -> @Sendable (Diagnostic) -> Void {
        { diagnostic in
            guard diagnostic.file == nil else { return self.diagnostic(diagnostic) }
            switch diagnostic.severity {
            case .info, .note, .deleted: self.print(.info, file: nil, "\(mode): " + diagnostic.message)
            // Shown with -q too, in the warning's colour.
            case .warning: self.print(.warning, file: nil, "\(mode): warning: " + diagnostic.message, evenIfQuiet: true)
            case .error: self.print(.error, file: nil, "\(mode): " + diagnostic.message)
            }
        }
    }

    /// "vmerge: <file>: <message>"; errors always, the rest unless quiet.
    func print(_ severity: Diagnostic.Severity, file: String?, _ message: String, evenIfQuiet: Bool = false) {
        guard severity == .error || evenIfQuiet || verbosity != .quiet else { return }
        let body = (file.map { "\($0): " } ?? "") + message
        var prefix = "vmerge:"
        if colour {
            switch severity {
            case .error: prefix = "\u{1B}[1;31mvmerge:\u{1B}[0m"
            case .warning: prefix = "\u{1B}[1;33mvmerge:\u{1B}[0m"
            case .note, .info, .deleted: break
            }
        }
        lock.lock()
        defer { lock.unlock() }
        if statusLine != nil { console.writeErrText(drawer.replace(with: nil)) }
        console.writeErrText("\(prefix) \(VisibleText.of(body))\n")
        if let statusLine { console.writeErrText(drawer.replace(with: statusLine)) }
    }

    /// A diagnostic as "vmerge: <file>: <message>"; with -q a deleted file is counted instead
    /// (see `sayDeletedCount`).
    func diagnostic(_ diagnostic: Diagnostic) {
        guard diagnostic.severity == .deleted && verbosity == .quiet else {
            return print(diagnostic.severity, file: diagnostic.file, diagnostic.message)
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
