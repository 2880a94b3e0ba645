/// What probing found in one input, copied out of FFmpeg into plain values.
public struct ClipInfo: Sendable, Equatable {
    public var path: String
    public var container: String
    /// The video stream's own duration, in microseconds (not the container's).
    public var durationMicros: Int64
    public var video: VideoInfo
    public var audio: AudioInfo?
    /// ISO 8601 creation time from the container or the video track, when recorded.
    public var creationTime: String?
    /// The file's size when probed (a file that shrinks while being read is an error).
    public var fileSize: Int64 = 0

    public init(
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

    public var durationSeconds: Double { Double(durationMicros) / 1_000_000 }
}

public struct VideoInfo: Sendable, Equatable {
    public var streamIndex: Int
    public var codec: String
    public var width: Int
    public var height: Int
    public var sampleAspect: Rational
    public var pixelFormat: String
    public var frameRate: Rational
    public var orientation: Orientation
    public var colour: ColourInfo

    public init(
        streamIndex: Int, codec: String, width: Int, height: Int, sampleAspect: Rational,
        pixelFormat: String, frameRate: Rational, orientation: Orientation, colour: ColourInfo = ColourInfo()
    ) {
        self.colour = colour
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

public struct AudioInfo: Sendable, Equatable {
    public var streamIndex: Int
    public var codec: String
    public var sampleRate: Int
    public var channels: Int

    public init(streamIndex: Int, codec: String, sampleRate: Int, channels: Int) {
        self.streamIndex = streamIndex
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
    }
}
