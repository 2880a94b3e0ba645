/// libavfilter graph descriptions, built from data so they can be tested without media.
package enum FilterGraphs {
    /// Per-clip video chain: scale the region of the coded picture that becomes the output aspect
    /// to the output size (pre-transpose), convert to BT.709 limited-range yuv420p, then turn it
    /// upright. With `cropping` `.framesCropped` (the pipeline's way) the frames arrive cut to
    /// `crop` already (with full chroma along an axis off their chroma grid); with `.inGraph` the
    /// chain crops (see PictureCrop). Rotating after scaling moves a 320x240 picture instead of
    /// a full-resolution one. The fps filter goes where it does the least work: first when it
    /// drops frames (60 -> 30), last when it repeats them (24 -> 30); frame choice depends only
    /// on timestamps, so the output is the same either way.
    ///
    /// With `fitted` (--fit pad or blur: the whole picture's size once scaled to fit, in coded
    /// orientation), `crop` is the whole picture and the scaled picture is framed after the colour
    /// work: with black bars, or over a blurred, darkened copy of itself scaled up to fill.
    package static func video(
        crop: CropRect, orientation: Orientation, inputRate: Rational, colour: ColourConversion = .none,
        options: MergeOptions, fitted: (width: Int, height: Int)? = nil, cropping: PictureCrop = .yuv420
    ) -> String {
        let size = options.outputSize
        let box = orientation.swapsAxes ? (size.height, size.width) : (size.width, size.height)
        let (scaleW, scaleH) = fitted ?? box
        let fps = "fps=fps=\(options.frameRate.num)/\(options.frameRate.den):round=near"
        var chain: [String] = []
        let dropsFrames = !inputRate.isPositive || inputRate.doubleValue > options.frameRate.doubleValue
        if dropsFrames { chain.append(fps) }
        // How the chroma reaching the first scaler is sampled, which it is told (see PictureCrop):
        // off the chroma grid, made full along the axis that is off as the picture was cut.
        let sampling: ChromaSubsampling
        switch cropping {
        case let .framesCropped(subsampling):
            sampling = subsampling.full(whereOffGridOf: crop)
        case let .inGraph(format, subsampling):
            chain.append("format=pix_fmts=\(format)")
            if isOffChromaGrid(crop, subsampling) {
                let region = crop.onChromaGrid(subsampling)
                chain.append("crop=w=\(region.width):h=\(region.height):x=\(region.x):y=\(region.y):exact=1")
                chain.append(offGridCut(crop: crop, subsampling: subsampling, bits: 16))
            } else {
                chain.append("crop=w=\(crop.width):h=\(crop.height):x=\(crop.x):y=\(crop.y):exact=1")
            }
            sampling = subsampling.full(whereOffGridOf: crop)
        }
        var siting = chromaPositions(sampling)
        if (crop.width, crop.height) == (scaleW, scaleH) && sampling != .none && sampling != .yuv420 {
            // Same size in and out: swscale takes a shortcut that ignores chroma positions and
            // drops chroma rows unfiltered (4:2:2 to 4:2:0: 39 dB), so the chroma is resampled
            // onto the luma grid first (at output size: next to nothing).
            chain.append("scale=flags=bicubic" + siting)
            chain.append("format=pix_fmts=yuv444p16le")
            siting = ""
        }
        chain += scaled(to: (scaleW, scaleH), siting: siting, colour: colour)
        if let fitted { chain.append(frame(fitted, in: box, blurred: options.fit == .blur)) }
        chain += orientation.filters
        chain.append("setsar=1")
        if !dropsFrames { chain.append(fps) }
        return chain.joined(separator: ",")
    }

    /// The scale to the output's size and the colour work, which happens on the small picture:
    /// scaling first makes it cost a fraction of what it would at the source size. Ends in 8-bit
    /// 4:2:0, limited range.
    private static func scaled(to size: (width: Int, height: Int), siting: String, colour: ColourConversion) -> [String] {
        let (scaleW, scaleH) = size
        var chain: [String] = []
        switch colour {
        case .toneMap:
            // Keep the source's bit depth and range into the tone mapper, with a chroma sample
            // for every pixel in and out: zscale places subsampled chroma by its own convention
            // (left-sited), not the scaler's (centred), which a mirror or a turn then shows as a
            // one-pixel chroma shift; the scaler subsamples at the end, like every other path.
            chain.append("scale=w=\(scaleW):h=\(scaleH):flags=bicubic" + siting)
            chain.append("format=pix_fmts=yuv444p16le")
            chain += colour.filters
            chain.append("format=pix_fmts=yuv444p16le")
            chain.append("scale=flags=bicubic")
            chain.append("format=pix_fmts=yuv420p")
        case .matrix, .unmappedHDR:
            // A matrix change mixes chroma into luma, so it is done with a chroma sample for every
            // pixel (4:4:4), then subsampled: done on 4:2:0, each 2x2 block's luma took one shared
            // chroma value (luma 40 dB from an exact conversion on bench set B; 53 dB this way).
            chain.append("scale=w=\(scaleW):h=\(scaleH):flags=bicubic" + siting + ":out_range=tv")
            chain.append("format=pix_fmts=yuv444p")
            chain += colour.filters
            chain.append("scale=flags=bicubic")
            chain.append("format=pix_fmts=yuv420p")
        case .none:
            chain.append("scale=w=\(scaleW):h=\(scaleH):flags=bicubic" + siting + ":out_range=tv")
            chain.append("format=pix_fmts=yuv420p")
        }
        return chain
    }

    /// The scaled picture (`fitted`, 8-bit 4:2:0 by now) in the middle of the `box`: over black,
    /// or over a copy of itself cropped to the box's shape, scaled up to fill it, blurred and
    /// darkened (blurring a picture already this small costs next to nothing).
    static func frame(_ fitted: (width: Int, height: Int), in box: (Int, Int), blurred: Bool) -> String {
        let (boxW, boxH) = box
        // Even offsets: chroma is subsampled.
        let x = (boxW - fitted.width) / 4 * 2, y = (boxH - fitted.height) / 4 * 2
        guard blurred else { return "pad=w=\(boxW):h=\(boxH):x=\(x):y=\(y):color=black" }
        let cropW = min(fitted.width, max(2, fitted.height * boxW / boxH / 2 * 2))
        let cropH = min(fitted.height, max(2, fitted.width * boxH / boxW / 2 * 2))
        // boxblur's radius must stay under half the smaller side of each plane (FFmpeg 9 refuses
        // exactly half, which 5.1 allowed): a 4-pixel-high box blurs its 2-sample chroma by 0.
        let side = min(boxW, boxH)
        let lumaRadius = min(max(1, side / 16), (side - 1) / 2)
        let chromaRadius = min(max(1, side / 32), (side / 2 - 1) / 2)
        return "split=2[fit_back][fit_front];"
            + "[fit_back]crop=w=\(cropW):h=\(cropH):x=\((fitted.width - cropW) / 2):y=\((fitted.height - cropH) / 2),"
            + "scale=w=\(boxW):h=\(boxH):flags=bilinear,"
            + "boxblur=luma_radius=\(lumaRadius):luma_power=3:chroma_radius=\(chromaRadius):chroma_power=3,"
            + "lutyuv=y=16+(val-16)*0.55:u=128+(val-128)*0.7:v=128+(val-128)*0.7[fit_blurred];"
            + "[fit_blurred][fit_front]overlay=x=\(x):y=\(y)"
    }

    /// Per-clip audio chain: resample and remix to the output format. `trimmed`: the sound before
    /// time zero (the trim start) is cut off first, to the source's sample, so the resampler
    /// starts on the trim whatever packet reading started at.
    package static func audio(options: MergeOptions, trimmed: Bool = false) -> String {
        (trimmed ? "atrim=start=0," : "")
            + "aresample=\(options.sampleRate),aformat=sample_fmts=fltp:sample_rates=\(options.sampleRate)"
            + ":channel_layouts=\(channelLayoutName(options.channels))"
    }

    package static func channelLayoutName(_ channels: Int) -> String {
        switch channels {
        case 1: return "mono"
        case 2: return "stereo"
        default: return "\(channels)c"
        }
    }
}
