import Foundation
internal import VMergeCore

/// A merge to run: the clips in order, the output file, and how the output is made.
///
/// Every option left `nil` takes the command line's default (a 320x240 4:3 picture at 30 fps,
/// clips under 2 s dropped). Values are checked when the job runs, by the same rules as the
/// command line's options; a value out of range fails ``MergeSession/run()`` with
/// ``MergeError/Code-swift.struct/invalidJob`` naming the property ("invalid value 17 for width:
/// expected an even number from 16 to 7680").
///
/// ```swift
/// var job = MergeJob(clips: [first, second], output: URL(fileURLWithPath: "out.mp4"))
/// job.width = 640
/// job.overwrites = true
/// ```
public struct MergeJob: Sendable, Hashable, Codable {
    /// One input: a recording (or a folder of them, taken in natural name order), optionally
    /// trimmed, optionally titled (the chapter's title when ``MergeJob/chapters`` is on).
    public struct Clip: Sendable, Hashable, Codable {
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
        /// Where the part used starts on the clip's own timeline, in seconds; `nil`: its start.
        public var start: Double?
        /// Where the part used ends on the clip's own timeline, in seconds; `nil`: its end.
        public var end: Double?
        /// The chapter's title when ``MergeJob/chapters`` is on; `nil`: the file's name without its extension.
        public var title: String?

        /// A clip named by its URL (a file URL), optionally trimmed and titled.
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

        // Its JSON names it by its property: "url", the path (see `FileLocation`'s coding).
        private enum CodingKeys: String, CodingKey {
            case location = "url", start, end, title
        }
    }

    /// The inputs, in the order they are joined.
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
    /// The output picture's shape (4:3 unless set).
    public var aspect: Aspect?
    /// Frames per second of the output: 30, 25, 29.97 (taken as NTSC's 30000/1001)...
    public var frameRate: Double?
    /// How a clip of another shape than the output fills the picture.
    public var fit: Fit?
    /// The encoder's trade between size and quality.
    public var quality: Quality?
    /// x264's constant rate factor, 0 (lossless) to 51, in steps of 0.01: lower is a better picture
    /// and a larger file. Overrides ``quality``'s.
    public var crf: Double?
    /// x264's speed preset: slower ones make a smaller file at the same picture. Overrides
    /// ``quality``'s (medium).
    public var preset: Preset?
    /// How HDR clips (HLG, PQ, Dolby Vision 8.x) are brought to SDR.
    public var toneMapping: ToneMapping?
    /// Which pictures the decoder leaves without its deblocking filter.
    public var skipDeblocking: SkipDeblocking?
    /// The output stops at this many seconds.
    public var maxDuration: Double?
    /// The output never grows past this many bytes (it ends early instead); at least 16 KiB.
    public var maxSize: Int64?
    /// Clips whose picture has more pixels than this are refused before decoding (8192 x 8192
    /// unless set).
    public var maxPixels: Int?
    /// The merge refuses to start when the output's folder has less free space than this many
    /// bytes (unless set: 1 MiB plus an estimate of the output).
    public var minimumFreeSpace: Int64?
    /// A JPEG of the output's picture, this file name in the output's folder ("{name}" stands
    /// for the output's name without its extension).
    public var posterName: String?
    /// Where on the output the poster is taken, in seconds (unless set: 1 s, or the middle of a
    /// shorter output).
    public var posterTime: Double?
    /// Each clip's sound gained to this integrated loudness, in LUFS (-70 to -1, such as -16).
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
    /// ``MergeError/Code-swift.struct/outputExists``).
    public var overwrites = false
    /// Plan only: probe every clip and report what would be made, writing nothing.
    public var isDryRun = false
    /// Once the output is written and read back, delete each input file it holds whole (a trimmed,
    /// dropped or partly used clip is kept).
    public var deletesSources = false
    /// Also write the JSON report (the command line's `--report`, schema `report.schema.json`)
    /// here, published with the output.
    public var reportURL: URL?

    /// The clips, in order, and the output (its name must end in .mp4, .m4v or .mov).
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

    // The JSON form names each value by its property ("output", not the storage's name); every
    // stored property is listed, as one left out would silently not round-trip.
    private enum CodingKeys: String, CodingKey {
        case clips, outputLocation = "output", minimumClipDuration, width, aspect, frameRate, fit, quality, crf,
            preset, toneMapping, skipDeblocking, maxDuration, maxSize, maxPixels, minimumFreeSpace, posterName,
            posterTime, loudness, chapters, stripsMetadata, skipsInvalidClips, isStrict, overwrites, isDryRun,
            deletesSources, reportURL
    }
}

extension MergeJob {
    /// The output's path as vmerge carries names (`FileName`).
    var outputPath: String { FileName.decode(outputFileSystemPath) }
}

/// A file named by a URL or by its path's bytes; the bytes are what reaches the file system, and
/// what makes two locations the same.
struct FileLocation: Sendable, Hashable, Codable {
    let url: URL
    let bytes: [UInt8]

    /// What names a file: its bytes; a URL that is no file's (refused when the job runs) by itself.
    static func == (a: FileLocation, b: FileLocation) -> Bool {
        a.url.isFileURL && b.url.isFileURL ? a.bytes == b.bytes : a.url == b.url
    }
    func hash(into hasher: inout Hasher) { url.isFileURL ? hasher.combine(bytes) : hasher.combine(url) }

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

    // Encoded as its path, as text, when the bytes are UTF-8; else as {"pathBytes": [...]}; a URL
    // that is no file's as {"url": ...}, so it is still refused after a round trip. ({"path": ...}
    // is read too.)
    private enum CodingKeys: String, CodingKey { case path, pathBytes, url }

    init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let path = try? single.decode(String.self) {
            self.init(bytes: Array(path.utf8))
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let url = try container.decodeIfPresent(URL.self, forKey: .url) {
            self.init(url)
        } else if let path = try container.decodeIfPresent(String.self, forKey: .path) {
            self.init(bytes: Array(path.utf8))
        } else {
            self.init(bytes: try container.decode([UInt8].self, forKey: .pathBytes))
        }
    }

    func encode(to encoder: any Encoder) throws {
        if url.isFileURL, let path = String(bytes: bytes, encoding: .utf8) {
            var single = encoder.singleValueContainer()
            try single.encode(path)
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !url.isFileURL {
            try container.encode(url, forKey: .url)
        } else {
            try container.encode(bytes, forKey: .pathBytes)
        }
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
