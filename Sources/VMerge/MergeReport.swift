import Foundation
internal import VMergeCore

/// What a merge did (or, for a dry run or ``MergeSession/inspect()``, would do), as values: the
/// same account as the command line's `--report` JSON, made from the same run (set
/// ``MergeJob/reportFile`` for that JSON itself).
public struct MergeReport: Sendable, Hashable, Codable {
    /// How the run ended.
    public enum Status: String, Sendable, Hashable, Codable {
        /// The output was written.
        case ok
        /// Planned only (``MergeJob/isDryRun``, ``MergeSession/inspect()``): nothing was written.
        case dryRun = "dry-run"
        /// Something stopped it (see ``MergeReport/error``); no output was published.
        case failed
        /// It was cancelled; no output was published.
        case cancelled
        /// Every clip was dropped.
        case nothingToMerge = "nothing-to-merge"
        /// The output already held this very job's result; nothing was done.
        case skipped
    }

    /// How the run ended.
    public var status: Status
    /// What stopped the run ("<file>: <what is wrong>"); nil when nothing did. For a dry run, the
    /// first of ``problems``.
    public var error: String?
    /// A dry run (``MergeSession/inspect()``): everything that would stop the merge, in the order
    /// it would meet them (each invalid clip without ``MergeJob/skipsInvalidClips``, an output
    /// name it would not replace, too little space, nothing to merge); empty when
    /// ``MergeSession/run()`` would work or find its output already made (``Output/existing`` is then
    /// ``Output/Existing/thisJob``). Empty for other runs: their failure is thrown.
    public var problems: [MergeError]
    /// Each input, in order, and what became of it.
    public var clips: [Clip]
    /// The file written (or, for a dry run, planned); nil when the run published no video.
    public var output: Output?
    /// Each of ``MergeJob/renditions``' files, in their order: written, or planned (a dry run);
    /// `nil` when the job has none.
    public var renditions: [Output]?
    /// The inputs ``MergeJob/deletesSources`` deleted once the output was read back whole.
    public var deletedSources: [FileLocation]
    /// The inputs ``MergeJob/deletesSources`` kept, each with why: for a file some bytes of which
    /// are in no output, which bytes ("kept: bytes 1,234,567-1,434,566 after the last box are in
    /// no output").
    public var keptSources: [KeptSource]
    /// See ``KeptOutput``; nil when the run published its video or the name is empty.
    public var keptOutput: KeptOutput?
    /// Warnings and notes the merge gave on the way (a clip dropped, a clip's corrupt packets),
    /// in order.
    public var warnings: [Warning]
    /// How long the run took, in seconds.
    public var wallSeconds: Double

    init(_ report: RunReport, failure: VMergeError?, warnings: [Warning]) {
        status = Status(report.status)
        problems = (report.preflight?.problems ?? []).map { MergeError($0) }
        // In this API's words, as the error thrown says it (the JSON keeps the command line's).
        error = failure.map { MergeError($0).description } ?? problems.first?.description ?? report.error?.message
        clips = report.inputEntries.map(Clip.init)
        output = Output(report)
        renditions =
            report.options.renditions.isEmpty
            ? nil : report.options.renditions.indices.compactMap { Output(report, picture: $0 + 1) }
        deletedSources = report.deletedSources.map(FileLocation.init(escaped:))
        keptSources = report.keptSources.map { KeptSource(file: FileLocation(escaped: $0.path), reason: $0.reason) }
        keptOutput = report.keptOutput.map(KeptOutput.init)
        self.warnings = warnings
        wallSeconds = report.wallSeconds
    }
}

extension MergeReport {
    /// An input ``MergeJob/deletesSources`` kept, and why.
    public struct KeptSource: Sendable, Hashable, Codable {
        /// The input.
        public var file: FileLocation
        /// Why it was kept ("kept: ...").
        public var reason: String
    }
}

extension MergeReport.Status {
    init(_ status: RunReport.Status) {
        switch status {
        case .ok: self = .ok
        case .dryRun: self = .dryRun
        case .failed: self = .failed
        case .cancelled: self = .cancelled
        case .nothingToMerge: self = .nothingToMerge
        case .skipped: self = .skipped
        }
    }
}

extension MergeReport {
    /// Something the merge said on the way that did not stop it.
    public struct Warning: Sendable, Hashable, Codable, CustomStringConvertible {
        /// How much it matters.
        public enum Severity: String, Sendable, Hashable, Codable {
            /// Worth a look: a clip dropped, corrupt packets concealed, colours that cannot be mapped.
            case warning
            /// For the record: a trim past a clip's end, a file deleted.
            case note
        }

        /// How much it matters.
        public var severity: Severity
        /// The file it is about, when there is one.
        public var file: FileLocation?
        /// What happened, without the file.
        public var message: String

        /// "<file>: <message>", as `vmerge` prints it.
        public var description: String { file.map { "\($0): \(message)" } ?? message }

        init(_ diagnostic: Diagnostic) {
            severity = diagnostic.severity == .warning || diagnostic.severity == .error ? .warning : .note
            file = diagnostic.file.map { FileLocation(fileSystemPath: $0.bytes) }
            message = diagnostic.message
        }
    }

    /// What a run that published no video (failed, cancelled, nothing to merge) left under its
    /// output's name: an earlier run's file, untouched (an overwriting run replaces it only once
    /// its new output is complete).
    public struct KeptOutput: Sendable, Hashable, Codable {
        /// The file.
        public var file: FileLocation
        /// Its size.
        public var bytes: Int64
        /// The job key the file records (batch, watch and queue outputs); nil for none.
        public var jobKey: String?
        /// The poster beside it, when the job asks for one and a file is there.
        public var poster: FileLocation?

        init(_ kept: VMergeCore.KeptOutput) {
            file = FileLocation(escaped: kept.path)
            bytes = kept.bytes
            jobKey = kept.jobKey
            poster = kept.poster.map(FileLocation.init(escaped:))
        }

        // The keys the earlier version wrote (the file was `url`), so its JSON still reads.
        private enum CodingKeys: String, CodingKey { case file = "url", bytes, jobKey, poster }
    }
}
