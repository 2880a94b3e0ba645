import Foundation
internal import VMergeCore

/// What a merge did, as a value: the same account as the command line's `--report` JSON (read
/// from it, so the two never disagree), with the full JSON in ``json``.
public struct MergeReport: Sendable {
    public enum Status: String, Sendable {
        case ok
        case dryRun = "dry-run"
        case failed
        case cancelled
        case nothingToMerge = "nothing-to-merge"
        /// The output already held this very job's result; nothing was done.
        case skipped
    }

    /// What became of one input file.
    public struct Clip: Sendable {
        public enum Status: String, Sendable {
            /// In the output (the whole clip, or the part asked for).
            case kept
            /// Shorter than ``MergeJob/minimumClipDuration``, or without a frame.
            case droppedShort = "dropped-short"
            /// Not a usable video (see ``reason``).
            case invalid
            /// Past ``MergeJob/maxDuration`` or ``MergeJob/maxSize``.
            case beyondLimit = "beyond-limit"
            /// Read, but the merge stopped before writing it.
            case probed
            /// The merge stopped before reading it.
            case notProbed = "not-probed"
        }

        /// The path as given, as text: a byte that is not UTF-8 is U+10FF00 plus the byte (the
        /// report JSON's form); ``fileSystemPath`` has the bytes.
        public var path: String
        /// The path's bytes, as the file system holds them.
        public var fileSystemPath: [UInt8] { FileName.bytes(of: path) }
        public var status: Status
        public var reason: String?
        /// The clip's own length, in seconds, once read.
        public var duration: Double?
        /// Where it sits on the output and for how long, in seconds (kept clips).
        public var outputStart: Double?
        public var outputDuration: Double?
    }

    /// The file written (or, for a dry run, planned).
    public struct Output: Sendable {
        /// The file (on Linux, a name that is not UTF-8 shows U+FFFD here: see ``fileSystemPath``).
        public var url: URL
        /// The output's path as the file system holds it.
        public var fileSystemPath: [UInt8]
        public var isWritten: Bool
        public var bytes: Int64?
        public var duration: Double
        public var videoFrames: Int64?
        public var audioSamples: Int64?
        public var width: Int
        public var height: Int
        public var frameRate: Double
        /// The index (moov) is before the media data: playback starts before the download ends.
        public var isFastStart: Bool?
        /// Why it ends before the clips do: "max-duration" or "max-size"; nil when it does not.
        public var truncatedBy: String?
        public var poster: URL?
        /// The poster's path as the file system holds it.
        public var posterFileSystemPath: [UInt8]?
    }

    /// What a run that published no video (failed, cancelled, nothing to merge) left under its
    /// output's name: an earlier run's file, untouched (an overwriting run replaces it only once
    /// its new output is complete).
    public struct KeptOutput: Sendable {
        public var url: URL
        /// Its path as the file system holds it.
        public var fileSystemPath: [UInt8]
        public var bytes: Int64
        /// The job key the file records (batch, watch and queue outputs); nil for none.
        public var jobKey: String?
        /// The poster beside it, when the job asks for one and a file is there.
        public var poster: URL?
    }

    public var status: Status
    /// What `vmerge` exits with for this run: 0 done, 1 failed, 3 nothing to merge, 130/143
    /// stopped by a signal.
    public var exitCode: Int32
    public var error: String?
    public var clips: [Clip]
    public var output: Output?
    public var deletedSources: [URL]
    /// The deleted sources' paths as the file system held them.
    public var deletedSourceFileSystemPaths: [[UInt8]]
    /// See ``KeptOutput``; nil when the run published its video or the name is empty.
    public var keptOutput: KeptOutput?
    /// Warnings and notes the merge gave on the way ("b.mov: dropped: 1.2 s is shorter than..."),
    /// in order.
    public var warnings: [String]
    public var wallSeconds: Double
    /// The report as `vmerge --report` writes it.
    public var json: String

    init(_ report: RunReport, warnings: [String]) {
        let object = report.json
        json = object.text(pretty: true) + "\n"
        status = Status(rawValue: report.status.rawValue) ?? .failed
        exitCode = report.exitCode
        error = report.error.map { error in error.message }
        clips = object["inputs"]?.arrayValue.map { input in
            let placement = input["placement"]
            return Clip(
                path: input["path"]?.stringValue ?? "",
                status: input["status"]?.stringValue.flatMap(Clip.Status.init(rawValue:)) ?? .notProbed,
                reason: input["reason"]?.stringValue, duration: input["duration"]?.doubleValue,
                outputStart: placement?["start"]?.doubleValue, outputDuration: placement?["duration"]?.doubleValue)
        } ?? []
        if let out = object["output"], case .object = out {
            let path = FileName.bytes(of: out["path"]?.stringValue ?? report.outputPath)
            let poster = out["poster"]?.stringValue.map(FileName.bytes(of:))
            output = Output(
                url: FileLocation.url(path), fileSystemPath: path,
                isWritten: out["written"]?.boolValue ?? false, bytes: out["bytes"]?.int64Value,
                duration: out["duration"]?.doubleValue ?? 0, videoFrames: out["video_frames"]?.int64Value,
                audioSamples: out["audio_samples"]?.int64Value, width: Int(out["width"]?.int64Value ?? 0),
                height: Int(out["height"]?.int64Value ?? 0), frameRate: out["frame_rate"]?.doubleValue ?? 0,
                isFastStart: out["faststart"]?.boolValue, truncatedBy: out["truncated_by"]?.stringValue,
                poster: poster.map(FileLocation.url), posterFileSystemPath: poster)
        }
        deletedSourceFileSystemPaths = report.deletedSources.map(FileName.bytes(of:))
        deletedSources = deletedSourceFileSystemPaths.map(FileLocation.url)
        keptOutput = report.keptOutput.map { kept in
            let path = FileName.bytes(of: kept.path)
            return KeptOutput(
                url: FileLocation.url(path), fileSystemPath: path, bytes: kept.bytes, jobKey: kept.jobKey,
                poster: kept.poster.map { FileLocation.url(FileName.bytes(of: $0)) })
        }
        self.warnings = warnings
        wallSeconds = report.wallSeconds
    }
}
