/// libavfilter graph descriptions, built from data so they can be tested without media.
public enum FilterGraphs {
    /// Per-clip video chain: crop the coded picture to the region that becomes the output
    /// aspect, scale it to the output size (pre-transpose), convert to BT.709 limited-range
    /// yuv420p, then turn it upright. Rotating after scaling moves a 320x240 picture instead of
    /// a full-resolution one. The fps filter goes where it does the least work: first when it
    /// drops frames (60 -> 30), last when it repeats them (24 -> 30); frame choice depends only
    /// on timestamps, so the output is the same either way.
    public static func video(
        crop: CropRect, orientation: Orientation, inputRate: Rational, colour: ColourConversion = .none,
        options: MergeOptions
    ) -> String {
        let size = options.outputSize
        let (scaleW, scaleH) = orientation.swapsAxes ? (size.height, size.width) : (size.width, size.height)
        let fps = "fps=fps=\(options.frameRate.num)/\(options.frameRate.den):round=near"
        var chain: [String] = []
        let dropsFrames = !inputRate.isPositive || inputRate.doubleValue > options.frameRate.doubleValue
        if dropsFrames { chain.append(fps) }
        chain.append("crop=w=\(crop.width):h=\(crop.height):x=\(crop.x):y=\(crop.y):exact=1")
        // Colour work happens on the small picture: scaling first makes it cost a fraction of
        // what it would at the source size.
        if case .toneMap = colour {
            // Keep the source's bit depth and range into the tone mapper.
            chain.append("scale=w=\(scaleW):h=\(scaleH):flags=bicubic")
        } else {
            chain.append("scale=w=\(scaleW):h=\(scaleH):flags=bicubic:out_range=tv")
            chain.append("format=pix_fmts=yuv420p")
        }
        chain += colour.filters
        if case .toneMap = colour { chain.append("format=pix_fmts=yuv420p") }
        chain += orientation.filters
        chain.append("setsar=1")
        if !dropsFrames { chain.append(fps) }
        return chain.joined(separator: ",")
    }

    /// Per-clip audio chain: resample and remix to the output format.
    public static func audio(options: MergeOptions) -> String {
        "aresample=\(options.sampleRate),aformat=sample_fmts=fltp:sample_rates=\(options.sampleRate)"
            + ":channel_layouts=\(channelLayoutName(options.channels))"
    }

    public static func channelLayoutName(_ channels: Int) -> String {
        switch channels {
        case 1: return "mono"
        case 2: return "stereo"
        default: return "\(channels)c"
        }
    }
}
