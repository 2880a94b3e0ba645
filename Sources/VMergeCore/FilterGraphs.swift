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
        switch colour {
        case .toneMap:
            // Keep the source's bit depth and range into the tone mapper.
            chain.append("scale=w=\(scaleW):h=\(scaleH):flags=bicubic")
            chain += colour.filters
            chain.append("format=pix_fmts=yuv420p")
        case .matrix, .unmappedHDR:
            // A matrix change mixes chroma into luma, so it is done with a chroma sample for every
            // pixel (4:4:4), then subsampled: done on 4:2:0, each 2x2 block's luma took one shared
            // chroma value (luma 40 dB from an exact conversion on bench set B; 53 dB this way).
            chain.append("scale=w=\(scaleW):h=\(scaleH):flags=bicubic:out_range=tv")
            chain.append("format=pix_fmts=yuv444p")
            chain += colour.filters
            chain.append("scale=flags=bicubic")
            chain.append("format=pix_fmts=yuv420p")
        case .none:
            chain.append("scale=w=\(scaleW):h=\(scaleH):flags=bicubic:out_range=tv")
            chain.append("format=pix_fmts=yuv420p")
        }
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
