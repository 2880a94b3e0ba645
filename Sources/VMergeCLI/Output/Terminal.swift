import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// Where messages go: results to stdout, everything for people to stderr; and what stderr is.
package struct Console: Sendable {
    let writeOut: @Sendable (String) -> Void
    /// Writes text to stderr as is (lines carry their own newline).
    let writeErrText: @Sendable (String) -> Void
    /// Whether stderr is a terminal (progress bar, colour).
    let errorIsTerminal: Bool
    let environment: [String: String]
    /// The width of the terminal stdout is, if it is one.
    let outputColumns: Int?

    package init() {
        writeOut = { writeAll(1, $0) }
        writeErrText = { writeAll(2, $0) }
        errorIsTerminal = isatty(2) == 1
        environment = ProcessInfo.processInfo.environment
        outputColumns = terminalColumns(1)
    }

    package init(
        output: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void,
        errorIsTerminal: Bool = false, environment: [String: String] = [:], outputColumns: Int? = nil
    ) {
        writeOut = output
        writeErrText = error
        self.errorIsTerminal = errorIsTerminal
        self.environment = environment
        self.outputColumns = outputColumns
    }

    /// What help is wrapped to: COLUMNS, else the terminal's width when stdout is one, else 80.
    var helpWidth: Int {
        if let columns = environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return outputColumns ?? 80
    }

    func output(_ text: String) { writeOut(text) }
    /// One line to stderr, with anything in it that could break the line or drive the terminal
    /// shown as an escape (names from outside reach here inside messages).
    func error(_ line: String) { writeErrText(VisibleText.of(line) + "\n") }

    /// Colour only on a terminal, never with NO_COLOR set (https://no-color.org) or TERM=dumb.
    var usesColour: Bool { Console.usesColour(isTerminal: errorIsTerminal, environment: environment) }

    static func usesColour(isTerminal: Bool, environment: [String: String]) -> Bool {
        isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }
}

/// A terminal's width in columns, read (one ioctl) at each draw, so a status line is never drawn
/// wider than the window it is in now. SIGWINCH is no help: only the terminal's foreground process
/// group gets it, and under `timeout` (a group of its own) or as a background job none comes.
final class TerminalWidth: Sendable {
    private let fd: Int32
    /// COLUMNS, else 80: for a descriptor that is no terminal (`--progress bar` into a pipe).
    private let fallback: Int

    init(fd: Int32, environment: [String: String]) {
        self.fd = fd
        fallback = environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 80
    }

    var columns: Int { terminalColumns(fd) ?? fallback }
}

/// A line (or a block of lines: batch's) drawn over itself on a terminal. Knows how long each line
/// on screen is, so after the window was made narrower than one, the rows the terminal wrapped it
/// onto are cleared too: terminals that reflow on resize (tmux, iTerm2, Terminal.app, VTE, kitty)
/// wrap the old line, and the carriage return only goes back to the start of its last row. (A row
/// the reflow pushed above the top of the window is in the scrollback, out of reach.)
final class StatusLine {
    let width: TerminalWidth
    /// The lengths of the lines on screen.
    private var shown: [Int] = []

    init(width: TerminalWidth) { self.width = width }

    /// The bytes that put `text` (lines apart by "\n") where the current one is (nil: just clear it).
    func replace(with text: String?) -> String {
        var bytes = "\r\u{1B}[K"
        let columns = max(1, width.columns)
        // Each line takes its rows at the width now; the cursor is on the last one's last row.
        let rows = shown.reduce(0) { $0 + max(1, ($1 + columns - 1) / columns) }
        if rows > 1 { bytes += String(repeating: "\u{1B}[1A\u{1B}[K", count: rows - 1) }
        shown = text.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(\.count) } ?? []
        return bytes + (text ?? "")
    }
}

/// The width of the terminal `fd` is, or nil when it is none.
func terminalColumns(_ fd: Int32) -> Int? {
    var size = winsize()
    guard isatty(fd) == 1, ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
    return Int(size.ws_col)
}

/// Writes all of `text` to a file descriptor, retrying short writes; a closed reader is
/// ignored (SIGPIPE is ignored, so that is EPIPE, not death).
/// Writes all of `text`, waiting for a slow reader, but never past a request to stop: a reader
/// that stops reading (a full --progress-fd pipe, a terminal held with ^S) must not keep SIGINT or
/// SIGTERM from stopping vmerge. It waits for room in slices of 200 ms (poll) and gives up once
/// a stop was asked for, whichever thread the signal reached; pieces of at most 512 bytes, so a
/// write that poll said has room does not block either.
func writeAll(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let polled = poll(&ready, 1, 200)
        if polled < 0 && errno != EINTR { return }
        if polled <= 0 {
            if VMergeProcess.pendingSignal != 0 { return }
            continue
        }
        if ready.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && ready.revents & Int16(POLLOUT) == 0 { return }
        let piece = bytes.prefix(512)
        let written = piece.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 && (errno == EINTR || errno == EAGAIN) { continue }
        if written <= 0 { return }
        bytes = bytes.dropFirst(written)
    }
}
