import Foundation
internal import VMergeCore

/// A merge to run: the clips in order, the output file, and how the output is made.
///
/// Every option left `nil` takes the command line's default (a 320x240 4:3 picture at 30 fps,
/// clips under 2 s dropped). Values are checked when the job runs, by the same rules as the
/// command line's options; a value out of range fails ``MergeSession/run()`` with
/// ``MergeError/Kind-swift.enum/invalidJob`` naming the option.
///
/// ```swift
/// var job = MergeJob(clips: [first, second], output: URL(fileURLWithPath: "out.mp4"))
/// job.width = 640
/// job.overwrites = true
/// ```
public struct MergeJob: Sendable {
    /// One input: a recording (or a folder of them, taken in natural name order), optionally
    /// trimmed, optionally titled (the chapter's title when ``MergeJob/chapters`` is on).
    public struct Clip: Sendable, Hashable {
        /// The file (or folder). Setting it forgets a ``fileSystemPath`` given at `init`.
        public var url: URL {
            get { location.url }
            set { location = FileLocation(newValue) }
        }
        /// The file's name as the file system holds it: `url`'s, exactly, or the bytes given at
        /// `init(fileSystemPath:)`, for a name that is not UTF-8 (Foundation's URL on Linux turns
        /// such bytes into U+FFFD, which would name another file).
        public var fileSystemPath: [UInt8] { location.bytes }
        private var location: FileLocation
        /// Where the part used starts and ends on the clip's own timeline, in seconds; `nil`: its
        /// start, its end.
        public var start: Double?
        public var end: Double?
        public var title: String?

        public init(_ url: URL, start: Double? = nil, end: Double? = nil, title: String? = nil) {
            location = FileLocation(url)
            self.start = start
            self.end = end
            self.title = title
        }

        /// A clip named by its path's bytes (absolute, or relative to the current folder).
        public init(fileSystemPath: [UInt8], start: Double? = nil, end: Double? = nil, title: String? = nil) {
            location = FileLocation(bytes: fileSystemPath)
            self.start = start
            self.end = end
            self.title = title
        }
    }

    /// How a clip of another shape than the output fills the picture.
    public enum Fit: String, Sendable, CaseIterable {
        /// The centred region of the output's aspect; the rest is cut off.
        case crop
        /// All of the picture, with black bars.
        case pad
        /// All of the picture over a blurred, darkened copy of itself scaled to fill.
        case blur
    }

    /// The encoder's trade between size and quality.
    public enum Quality: String, Sendable, CaseIterable {
        case low, medium, high
    }

    public var clips: [Clip]
    /// The MP4 to write. It appears only once it is complete; a run that fails or is cancelled
    /// leaves no part of it. Setting it forgets an ``outputFileSystemPath`` given at `init`.
    public var output: URL {
        get { outputLocation.url }
        set { outputLocation = FileLocation(newValue) }
    }
    /// The output's name as the file system will hold it (see ``Clip/fileSystemPath``).
    public var outputFileSystemPath: [UInt8] { outputLocation.bytes }
    private var outputLocation: FileLocation

    /// Clips whose video is shorter than this many seconds are dropped; 0 keeps every clip.
    public var minimumClipDuration: Double?
    /// The output picture's width in pixels, even; the height follows from ``aspect``.
    public var width: Int?
    /// The output picture's shape, such as `(4, 3)`.
    public var aspect: (width: Int, height: Int)?
    /// Frames per second of the output: 30, 29.97, 25...
    public var frameRate: Double?
    public var fit: Fit?
    public var quality: Quality?
    /// The output stops at this many seconds.
    public var maxDuration: Double?
    /// The output never grows past this many bytes (it ends early instead).
    public var maxSize: Int64?
    /// A JPEG of the output's picture, this file name in the output's folder ("{name}" stands
    /// for the output's name without its extension).
    public var posterName: String?
    /// Each clip's sound gained to this integrated loudness, in LUFS (such as -16).
    public var loudness: Double?
    /// One chapter per kept clip.
    public var chapters = false
    /// Write no creation time, place, device or software tags into the output.
    public var stripsMetadata = false
    /// A clip that cannot be read is dropped (and reported) instead of stopping the merge.
    public var skipsInvalidClips = false
    /// Corrupt packets stop the merge instead of being concealed.
    public var isStrict = false
    /// Replace an existing output file (otherwise the merge fails with
    /// ``MergeError/Kind-swift.enum/outputExists``).
    public var overwrites = false
    /// Plan only: probe every clip and report what would be made, writing nothing.
    public var isDryRun = false
    /// Once the output is written and read back, delete each input file it holds whole (a trimmed,
    /// dropped or partly used clip is kept).
    public var deletesSources = false
    /// Also write the JSON report (the command line's `--report`, schema `report.schema.json`)
    /// here, published with the output.
    public var reportURL: URL?
    /// Any other option a job file may carry, by its command-line name without the dashes and
    /// its value as text: `["crf": "20", "preset": "slow", "tonemap": "hable"]`.
    public var options: [String: String] = [:]

    public init(clips: [Clip], output: URL) {
        self.clips = clips
        outputLocation = FileLocation(output)
    }

    /// The output named by its path's bytes (see ``Clip/init(fileSystemPath:start:end:title:)``).
    public init(clips: [Clip], outputFileSystemPath: [UInt8]) {
        self.clips = clips
        outputLocation = FileLocation(bytes: outputFileSystemPath)
    }

    /// Clips taken whole.
    public init(inputs: [URL], output: URL) {
        self.init(clips: inputs.map { Clip($0) }, output: output)
    }

    /// The job as the runner takes it, every value checked by the option rows the command line
    /// uses (`JobOption`), so the API accepts exactly what `vmerge` accepts.
    func runnable() throws(MergeError) -> Job {
        var settings = JobSettings()
        var given: [(String, String)] = []
        func number(_ value: Double?) -> String? { value.map { "\($0)" } }
        given += [
            ("min-duration", number(minimumClipDuration)), ("width", width.map(String.init)),
            ("aspect", aspect.map { "\($0.width):\($0.height)" }), ("fps", number(frameRate)),
            ("fit", fit?.rawValue), ("quality", quality?.rawValue), ("max-duration", number(maxDuration)),
            ("max-size", maxSize.map(String.init)), ("poster", posterName), ("loudness", number(loudness)),
        ].compactMap { name, value in value.map { (name, $0) } }
        given += [
            ("chapters", chapters), ("strip-metadata", stripsMetadata), ("skip-invalid", skipsInvalidClips),
            ("strict", isStrict),
        ].filter(\.1).map { ($0.0, "true") }
        var inputs: [JobInput] = []
        do throws(JobOptionError) {
            // One value per option: a typed property and the same option in `options` would
            // leave one of them silently unused.
            let typed = Set(given.map(\.0))
            for name in options.keys.sorted() where typed.contains(name) {
                throw JobOptionError("'\(name)' is given twice: by its property and in options")
            }
            given += options.sorted { $0.key < $1.key }
            for (name, text) in given {
                guard let row = JobOption.named(name) else {
                    throw JobOptionError("unknown option '\(name)'")
                }
                try row.apply(text, to: &settings)
            }
            try settings.validate()
            try JobFile.checkInputCount(clips.count)
            for clip in clips {
                guard clip.url.isFileURL else { throw JobOptionError("\(clip.url): not a file URL") }
                var edit = InputEdit(title: clip.title)
                if let start = clip.start { edit.startMicros = try InputEdit.micros(seconds: start, field: "start") }
                if let end = clip.end { edit.endMicros = try InputEdit.micros(seconds: end, field: "end") }
                try edit.validate()
                inputs.append(JobInput(FileName.decode(clip.fileSystemPath), edit: edit))
            }
            guard output.isFileURL else { throw JobOptionError("\(output): not a file URL") }
            // The container follows the name, as on the command line: never an MP4 under another name.
            guard OutputContainer(path: outputPath) != nil, outputFileSystemPath.last != UInt8(ascii: "/") else {
                throw JobOptionError(
                    "\(VisibleText.of(outputPath)): vmerge writes MP4 or QuickTime files; the name must end in "
                        + OutputContainer.accepted)
            }
            if let reportURL, !reportURL.isFileURL { throw JobOptionError("\(reportURL): not a file URL") }
        } catch {
            throw MergeError(kind: .invalidJob, file: nil, message: error.description)
        }
        guard !inputs.isEmpty else { throw MergeError(kind: .invalidJob, file: nil, message: "the job names no clips") }
        settings.merge.overwrite = overwrites
        var job = Job(name: outputPath, inputs: inputs, output: outputPath, settings: settings)
        job.dryRun = isDryRun
        job.deleteSources = deletesSources
        return job
    }
}

extension MergeJob {
    /// The output's path as vmerge carries names (`FileName`).
    var outputPath: String { FileName.decode(outputFileSystemPath) }
}

/// A file named by a URL or by its path's bytes; the bytes are what reaches the file system.
struct FileLocation: Sendable, Hashable {
    let url: URL
    let bytes: [UInt8]

    init(_ url: URL) {
        self.url = url
        // The file system's form of the URL: exact on Apple's platforms, where a URL can carry any
        // byte; on Linux what Foundation kept of it.
        bytes = url.withUnsafeFileSystemRepresentation { path in
            path.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? Array(url.path.utf8)
        }
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
        url = FileLocation.url(bytes)
    }

    /// A file URL for a path's bytes (on Linux a byte that is not UTF-8 shows as U+FFFD in it:
    /// use the bytes to name the file).
    static func url(_ bytes: [UInt8]) -> URL {
        let path = bytes + [0]
        return path.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) {
                URL(fileURLWithFileSystemRepresentation: $0.baseAddress!, isDirectory: false, relativeTo: nil)
            }
        }
    }
}
