/// Everything that shapes one merge, independent of how it was asked for (CLI, batch, watch).
public struct MergeOptions: Sendable, Equatable {
    /// Clips whose video lasts less than this many seconds are dropped; 0 keeps all.
    public var minDuration: Double = 2.0
    public var width: Int = 320
    public var aspect = Rational(4, 3)
    public var frameRate = Rational(30, 1)
    public var quality: Quality = .medium
    public var sampleRate: Int = 44_100
    public var channels: Int = 2
    public var overwrite = false
    public var skipInvalid = false

    public init() {}

    public var outputSize: (width: Int, height: Int) { VMergeCore.outputSize(width: width, aspect: aspect) }

    /// The output's frame and sample grid.
    public var timeline: Timeline { Timeline(frameRate: frameRate, sampleRate: sampleRate) }
}
