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
        /// The file (or folder).
        public var file: FileLocation
        /// Where the part used starts on the clip's own timeline, in seconds; `nil`: its start.
        public var start: Double?
        /// Where the part used ends on the clip's own timeline, in seconds; `nil`: its end.
        public var end: Double?
        /// The chapter's title when ``MergeJob/chapters`` is on; `nil`: the file's name without its extension.
        public var title: String?

        /// A clip, optionally trimmed and titled.
        public init(_ file: FileLocation, start: Double? = nil, end: Double? = nil, title: String? = nil) {
            self.file = file
            self.start = start
            self.end = end
            self.title = title
        }

        /// A clip named by its URL (a file URL, `s3://bucket/key`, or `https://`), optionally
        /// trimmed and titled.
        public init(_ url: URL, start: Double? = nil, end: Double? = nil, title: String? = nil) {
            self.init(FileLocation(url), start: start, end: end, title: title)
        }

        // Its JSON keeps the key it had when the file was a URL, so jobs written then still read.
        private enum CodingKeys: String, CodingKey {
            case file = "url", start, end, title
        }
    }

    /// The inputs, in the order they are joined.
    public var clips: [Clip]
    /// The MP4 to write. It appears only once it is complete; a run that fails or is cancelled
    /// leaves no part of it.
    public var output: FileLocation

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
    /// here, published with the output: a file, or an object (`s3://bucket/key.json`, under
    /// ``allowedRemotePrefixes`` when they are set), which replaces only an earlier report.
    public var reportFile: FileLocation?
    /// More files of the same merge, each its own picture size and shape (``Rendition``), decoded
    /// once; `nil` or empty: the output alone.
    public var renditions: [Rendition]?
    /// Where clips and the output named by URL may be. `nil`, as on the command line: any public
    /// https host and any bucket (an https host at a loopback, link-local or private address is
    /// refused). A list (`s3://bucket/prefix/`, `https://host/path/`), as a batch's
    /// `--allow-remote`: every URL must lie under one of them, and those may be private. Set it
    /// when the clips come from someone else (a form, a request).
    public var allowedRemotePrefixes: [FileLocation]?

    /// The clips, in order, and the output (its name must end in .mp4, .m4v or .mov).
    public init(clips: [Clip], output: FileLocation) {
        self.clips = clips
        self.output = output
    }

    /// The clips, in order, and the output named by its URL (a file URL or `s3://bucket/key.mp4`).
    public init(clips: [Clip], output: URL) {
        self.init(clips: clips, output: FileLocation(output))
    }

    /// Clips taken whole.
    public init(inputs: [URL], output: URL) {
        self.init(clips: inputs.map { Clip($0) }, output: output)
    }

    // The JSON form names each value by its property, but for the report's file, which keeps the
    // key it had when it was a URL (jobs written then still read); every stored property is
    // listed, as one left out would silently not round-trip.
    private enum CodingKeys: String, CodingKey {
        case clips, output, minimumClipDuration, width, aspect, frameRate, fit, quality, crf,
            preset, toneMapping, skipDeblocking, maxDuration, maxSize, maxPixels, minimumFreeSpace, posterName,
            posterTime, loudness, chapters, stripsMetadata, skipsInvalidClips, isStrict, overwrites, isDryRun,
            deletesSources, reportFile = "reportURL", allowedRemotePrefixes, renditions
    }
}
