import Foundation

/// What a job asks of one input beyond its name: the part of it to use (on the clip's own
/// timeline) and its chapter title. From a job file's input object
/// `{"path": "a.mov", "start": 1.5, "end": 8, "title": "Arrival"}` or `--trim START,END` after
/// the file on the command line.
package struct InputEdit: Sendable, Equatable, Hashable {
    /// Where the used part begins, in microseconds from the clip's start; nil: its beginning.
    package var startMicros: Int64?
    /// Where it ends; nil: the clip's end.
    package var endMicros: Int64?
    /// The chapter title (--chapters); nil: the file name without its extension.
    package var title: String?

    package init(startMicros: Int64? = nil, endMicros: Int64? = nil, title: String? = nil) {
        self.startMicros = startMicros
        self.endMicros = endMicros
        self.title = title
    }

    package static let whole = InputEdit()

    package var isTrimmed: Bool { (startMicros ?? 0) > 0 || endMicros != nil }

    /// The part used of a clip lasting `durationMicros`: the trim clamped to the clip.
    package func range(inClipOf durationMicros: Int64) -> (start: Int64, end: Int64) {
        let start = startMicros ?? 0
        return (start, min(endMicros ?? durationMicros, durationMicros))
    }

    /// Why this trim cannot apply to a clip lasting `durationMicros`, or nil.
    package func problem(withClipOf durationMicros: Int64) -> String? {
        guard let start = startMicros, start >= durationMicros else { return nil }
        return "the trim starts at \(formatSeconds(Double(start) / 1e6)) s, but the video lasts only "
            + "\(formatSeconds(Double(durationMicros) / 1e6)) s"
    }

    /// For the job key: empty for a whole clip, so keys of untrimmed jobs stay as they were.
    var keyText: String {
        guard self != .whole else { return "" }
        return "\tstart=\(startMicros.map(String.init) ?? "-")\tend=\(endMicros.map(String.init) ?? "-")"
            + "\ttitle=\(title.map { SHA256.hex($0) } ?? "-")"
    }

    /// Reads `--trim START,END` (either side may be empty, not both): times as in
    /// `InputEdit.micros(from:)`, nothing around them (" 1,2" is refused, as " 1" is anywhere).
    package static func trim(_ text: String) throws(JobOptionError) -> InputEdit {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, !(parts[0].isEmpty && parts[1].isEmpty) else {
            throw JobOptionError(
                "invalid value '\(text)' for '--trim': expected START,END in seconds (either may be left out: 2.5, or ,8)")
        }
        var edit = InputEdit()
        do throws(JobOptionError) {
            if !parts[0].isEmpty { edit.startMicros = try micros(from: parts[0]) }
            if !parts[1].isEmpty { edit.endMicros = try micros(from: parts[1]) }
        } catch {
            throw JobOptionError("invalid value '\(text)' for '--trim': \(error.description)")
        }
        try edit.validate()
        return edit
    }

    /// A point on a clip's timeline, typed: a time as every door reads one
    /// (`JobOption.seconds(ofTime:in:)`: 8, 1.5, 1e2, 1:02.5, 0:01:02), to the microsecond; at
    /// most `Limits.maxClipSeconds`.
    package static func micros(from text: String) throws(JobOptionError) -> Int64 {
        do throws(TimeRefusal) {
            return Int64((try JobOption.seconds(ofTime: text, in: .inClip) * 1_000_000).rounded())
        } catch {
            throw error.about(text)
        }
    }

    /// A time given as a number of seconds (a job file's JSON number, the Swift API's Double), in
    /// the range and words a typed one has.
    package static func micros(seconds: Double, field: String) throws(JobOptionError) -> Int64 {
        guard !seconds.isNaN else { throw JobOptionError("'\(field)' must be a number of seconds") }
        guard TimeRange.inClip.contains(seconds) else {
            throw JobOptionError("'\(field)': \(TimeRefusal.outOfRange(.inClip).about(formatDecimal(seconds)))")
        }
        return Int64((seconds * 1_000_000).rounded())
    }

    /// A time given as a JSON number of seconds, or as a string `micros(from:)` reads.
    package static func micros(fromJSON value: Any, field: String) throws(JobOptionError) -> Int64 {
        if let number = value as? NSNumber, type(of: number) != type(of: NSNumber(value: true)) {
            return try micros(seconds: number.doubleValue, field: field)
        }
        if let text = value as? String {
            do throws(JobOptionError) {
                return try micros(from: text)
            } catch {
                throw JobOptionError("'\(field)': \(error.description)")
            }
        }
        throw JobOptionError("'\(field)' must be a number of seconds")
    }

    /// An end at or before the start leaves nothing.
    package func validate() throws(JobOptionError) {
        if let end = endMicros, end <= (startMicros ?? 0) {
            throw JobOptionError(
                "the trim ends at \(formatSeconds(Double(end) / 1e6)) s, not after its start "
                    + "(\(formatSeconds(Double(startMicros ?? 0) / 1e6)) s)")
        }
    }
}

/// One input as a job names it: a file or a folder, with what is asked of it (a folder only
/// as a whole).
package struct JobInput: Sendable, Equatable, Hashable {
    package var path: FileName
    package var edit: InputEdit

    package init(_ path: FileName, edit: InputEdit = .whole) {
        self.path = path
        self.edit = edit
    }

    /// An input named in the lossless text form (a job file, argv, the queue's spec).
    package init(_ escaped: String, edit: InputEdit = .whole) { self.init(FileName(escaped), edit: edit) }

    /// Inputs from paths and the edits of some of them (by position).
    package static func list(_ paths: [String], edits: [Int: InputEdit]) -> [JobInput] {
        paths.enumerated().map { JobInput($1, edit: edits[$0] ?? .whole) }
    }

    /// The fields of a job file's input object.
    package static let fields = ["path", "start", "end", "title"]
}
