/// What probing found in one input, copied out of FFmpeg into plain values.
package struct ClipInfo: Sendable, Equatable {
    package var path: String
    package var container: String
    /// The video stream's own duration, in microseconds (not the container's).
    package var durationMicros: Int64
    package var video: VideoInfo
    package var audio: AudioInfo?
    /// ISO 8601 creation time from the container or the video track, when recorded.
    package var creationTime: String?
    /// The file's size when probed (a file that shrinks while being read is an error).
    package var fileSize: Int64 = 0
    /// The file probed (device, inode), so --delete-sources deletes that file and no other that
    /// took its name since; nil for memory.
    package var fileID: FileID?
    /// The folder it was probed in (device, inode): --delete-sources deletes through that folder
    /// only, not one swapped in under the folder's name since.
    package var folderID: FileID?
    /// When, where and with what it was recorded, as the container says.
    package var recording = RecordingTags()
    /// Why the file is not footage a merge can consume whole (a still image, a single picture),
    /// for --delete-sources; nil for a recording.
    package var notARecording: String?
    /// What of the file no output carries, for --delete-sources: other video, sound or subtitle
    /// tracks, sound that cannot be decoded, sound that runs on past the picture, data tracks
    /// (telemetry, timed metadata: `MetadataTrack`).
    package var leftOut: [String] = []

    package init(
        path: String, container: String, durationMicros: Int64, video: VideoInfo,
        audio: AudioInfo?, creationTime: String?
    ) {
        self.path = path
        self.container = container
        self.durationMicros = durationMicros
        self.video = video
        self.audio = audio
        self.creationTime = creationTime
    }

    package var durationSeconds: Double { Double(durationMicros) / 1_000_000 }
}

package struct VideoInfo: Sendable, Equatable {
    package var streamIndex: Int
    package var codec: String
    package var width: Int
    package var height: Int
    package var sampleAspect: Rational
    package var pixelFormat: String
    package var frameRate: Rational
    package var orientation: Orientation
    package var colour: ColourInfo
    /// How its frames are cut to the crop window: by its pixel format (the probe's decoder's).
    package var cropping: PictureCrop

    package init(
        streamIndex: Int, codec: String, width: Int, height: Int, sampleAspect: Rational,
        pixelFormat: String, frameRate: Rational, orientation: Orientation, colour: ColourInfo = ColourInfo(),
        cropping: PictureCrop = .yuv420
    ) {
        self.colour = colour
        self.cropping = cropping
        self.streamIndex = streamIndex
        self.codec = codec
        self.width = width
        self.height = height
        self.sampleAspect = sampleAspect
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
        self.orientation = orientation
    }
}

package struct AudioInfo: Sendable, Equatable {
    package var streamIndex: Int
    package var codec: String
    package var sampleRate: Int
    package var channels: Int

    package init(streamIndex: Int, codec: String, sampleRate: Int, channels: Int) {
        self.streamIndex = streamIndex
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// When, where and with what a clip was recorded: what a merge carries over from its first kept
/// clip (or drops, with --strip-metadata). Read from both forms phones write: the QuickTime
/// metadata keys iPhones use (`com.apple.quicktime.*`, "mdta") and the classic user-data tags
/// (`location` = ©xyz, `make`, `model`, `software`).
package struct RecordingTags: Sendable, Equatable {
    /// ISO 6709, e.g. "+48.8566+002.3522+035.000/".
    package var location: String?
    package var make: String?
    package var model: String?
    package var software: String?
    /// The local date and time with its offset, as iPhones record it ("2024-05-01T12:00:00+0200").
    package var creationDate: String?

    package init() {}

    /// The container keys each field is read from, the QuickTime metadata key first.
    nonisolated(unsafe) static let sources: [(WritableKeyPath<RecordingTags, String?>, [String])] = [
        (\.location, ["com.apple.quicktime.location.ISO6709", "location", "location-eng"]),
        (\.make, ["com.apple.quicktime.make", "make"]),
        (\.model, ["com.apple.quicktime.model", "model"]),
        (\.software, ["com.apple.quicktime.software", "software"]),
        (\.creationDate, ["com.apple.quicktime.creationdate"]),
    ]

    /// Reads the fields from a container's tags (`value(key)`); values with control characters
    /// or over 1 KiB are not carried.
    package init(reading value: (String) -> String?) {
        for (field, keys) in RecordingTags.sources {
            self[keyPath: field] = keys.lazy.compactMap(value).first {
                $0.utf8.count <= 1024 && !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
            }
        }
    }

    /// The tags to write on the output: the QuickTime metadata keys (what Apple's apps read) and
    /// `location`, which the MP4 muxer also writes as a 3GPP 'loci' box.
    package var outputTags: [(String, String)] {
        var tags: [(String, String)] = []
        if let location { tags += [("com.apple.quicktime.location.ISO6709", location), ("location", location)] }
        if let make { tags.append(("com.apple.quicktime.make", make)) }
        if let model { tags.append(("com.apple.quicktime.model", model)) }
        if let software { tags.append(("com.apple.quicktime.software", software)) }
        if let creationDate { tags.append(("com.apple.quicktime.creationdate", creationDate)) }
        return tags
    }
}
