internal import VMergeCore

/// Why a merge did not produce its output.
///
/// ``description`` is the one line `vmerge` itself prints after "vmerge: ", such as
/// `"a.mov: not a video (no video stream)"`. When the merge got as far as a report, ``report``
/// holds it: which clips were read, dropped or invalid, and why.
public struct MergeError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The job itself is wrong: an option out of range, no clips, a report named onto a video.
        case invalidJob
        /// A clip cannot be used: missing, not a video, damaged, too large.
        case invalidInput
        /// Every clip was dropped (too short, or invalid with ``MergeJob/skipsInvalidClips``).
        case nothingToMerge
        /// The output file exists and ``MergeJob/overwrites`` is off, or it is one of the inputs.
        case outputExists
        /// The output's folder lacks the space the output needs.
        case noSpace
        /// Reading or writing failed (FFmpeg's or the system's error text is in ``message``).
        case failed
        /// The merge was stopped by the process's own SIGINT/SIGTERM handling (vmerge's, when the
        /// host installs it); cancelling the task throws `CancellationError` instead.
        case cancelled
    }

    public var kind: Kind
    /// The file the error is about, when there is one.
    public var file: String?
    /// What is wrong, without the file.
    public var message: String
    public var report: MergeReport?

    public var description: String { file.map { "\($0): \(message)" } ?? message }

    init(kind: Kind, file: String?, message: String, report: MergeReport? = nil) {
        self.kind = kind
        self.file = file
        self.message = message
        self.report = report
    }

    init(_ error: VMergeError, report: MergeReport? = nil) {
        let kind: Kind
        switch error {
        case .invalidInput: kind = .invalidInput
        case .badOutputName: kind = .invalidJob
        case .nothingToMerge: kind = .nothingToMerge
        case .outputExists, .outputIsInput, .outputNotOurs: kind = .outputExists
        case .noSpace, .cannotFit: kind = .noSpace
        case .cancelled: kind = .cancelled
        case .ffmpeg, .io, .database: kind = .failed
        }
        // The description is "<file>: <what is wrong>" whenever there is a file.
        let text = error.description
        let message = error.file.map { text.hasPrefix($0 + ": ") ? String(text.dropFirst($0.count + 2)) : text } ?? text
        self.init(kind: kind, file: error.file, message: message, report: report)
    }
}
