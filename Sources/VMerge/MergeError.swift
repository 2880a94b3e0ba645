import Foundation
internal import VMergeCore

/// Why a merge did not produce its output.
///
/// ``description`` is the one line `vmerge` itself prints after "vmerge: ", such as
/// `"a.mov: not a video (no video stream)"`, and ``errorDescription`` says the same, so an alert
/// or `localizedDescription` shows it rather than "The operation could not be completed". When
/// the message is about a file, ``file`` names it. When the merge got as far as a report,
/// ``report`` holds it: which clips were read, dropped or invalid, and why.
public struct MergeError: Error, Sendable, Hashable, Codable, CustomStringConvertible, LocalizedError {
    /// What kind of failure it is. An open set, as `Errno` is: match the codes you handle
    /// (`if error.code == .noSpace`), and expect others; a later version may add codes.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        /// The code's name, as the report and `vmerge` say it ("no-space").
        public let rawValue: String
        /// A code by its name: one of those below, or one a later version adds.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Its name.
        public var description: String { rawValue }

        /// The job itself is wrong: a value out of range, no clips, a report named onto a video.
        public static let invalidJob = Code(rawValue: "invalid-job")
        /// A clip cannot be used: missing, not a video, damaged, too large.
        public static let invalidInput = Code(rawValue: "invalid-input")
        /// Every clip was dropped (too short, or invalid with ``MergeJob/skipsInvalidClips``).
        public static let nothingToMerge = Code(rawValue: "nothing-to-merge")
        /// The output file exists and ``MergeJob/overwrites`` is off, or it is one of the inputs,
        /// or another user's file.
        public static let outputExists = Code(rawValue: "output-exists")
        /// The output's folder lacks the space the output needs.
        public static let noSpace = Code(rawValue: "no-space")
        /// Reading or writing failed (FFmpeg's or the system's error text is in ``message``).
        public static let failed = Code(rawValue: "failed")
        /// The merge was stopped by the process's own SIGINT/SIGTERM handling (vmerge's, when the
        /// host installs it), or by ``MergeSession/cancel()``; cancelling the task throws
        /// `CancellationError` instead.
        public static let cancelled = Code(rawValue: "cancelled")
    }

    /// What kind of failure it is.
    public var code: Code
    /// The file the error is about, when there is one.
    public var file: FileLocation?
    /// What is wrong, without the file.
    public var message: String
    /// What the merge did before it stopped, when it got as far as a report.
    public var report: MergeReport?

    /// "<file>: <what is wrong>", or only what is wrong when no file is at fault.
    public var description: String { file.map { "\($0): \(message)" } ?? message }

    /// The same one line as ``description``: what `localizedDescription` and an alert show.
    public var errorDescription: String? { description }

    init(code: Code, file: FileLocation?, message: String, report: MergeReport? = nil) {
        self.code = code
        self.file = file
        self.message = message
        self.report = report
    }

    init(_ error: VMergeError, report: MergeReport? = nil) {
        let code: Code
        switch error {
        case .invalidInput: code = .invalidInput
        case .badOutputName: code = .invalidJob
        case .nothingToMerge: code = .nothingToMerge
        case .outputExists, .outputIsInput, .outputNotOurs: code = .outputExists
        case .noSpace, .cannotFit: code = .noSpace
        case .cancelled: code = .cancelled
        case .ffmpeg, .io, .database: code = .failed
        }
        // Said in Swift's terms where the command line's would name its flag.
        let message =
            if case .outputExists = error { "output exists (set overwrites to replace it)" } else { error.reason }
        self.init(code: code, file: error.file.map(FileLocation.init(escaped:)), message: message, report: report)
    }
}
