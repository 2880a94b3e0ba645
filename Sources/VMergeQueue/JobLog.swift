import Foundation
import VMergeCore

/// What a worker said about one job (its log lines and the warnings of its merge), kept with the
/// job in the queue (`jobs.log`) for its page: each line with the UTC time and the worker's name
/// in front, control characters made visible (a line is one line), and bounded as the row is.
package struct JobLog: Sendable, Equatable {
    /// The row keeps the last this many lines, of every attempt, and at most `maxBytes` of them
    /// (see `JobQueue.appendLog`).
    package static let maxLines = 200
    package static let maxBytes = 65536
    /// A longer line is cut (with "..."), so that one line cannot push all the others out.
    package static let maxLineBytes = 4096

    package private(set) var lines: [String] = []
    let worker: String

    package init(worker: String) { self.worker = worker }

    package mutating func append(_ text: String, at time: Date = Date()) {
        var line = utcText(time) + " " + VisibleText.of(worker) + ": " + VisibleText.of(text)
        if line.utf8.count > JobLog.maxLineBytes {
            // Cut at a character, within the bound with the mark.
            var cut = "", bytes = 3
            for scalar in line.unicodeScalars {
                bytes += UTF8.width(scalar)
                if bytes > JobLog.maxLineBytes { break }
                cut.unicodeScalars.append(scalar)
            }
            line = cut + "..."
        }
        lines.append(line)
        // Only the last lines can reach the row: an attempt with a warning per clip of thousands
        // keeps no more than that in memory.
        if lines.count > JobLog.maxLines { lines.removeFirst(lines.count - JobLog.maxLines) }
    }

    package mutating func append(_ diagnostic: Diagnostic) {
        append(diagnostic.severity == .warning ? "warning: " + diagnostic.text : diagnostic.text)
    }
}
