/// How a pixel format's chroma is subsampled: log2 of the luma samples per chroma sample across
/// and down (4:2:0: 1, 1; 4:2:2: 1, 0; 4:1:1: 2, 0; 4:4:4, RGB and grey: 0, 0).
package struct ChromaSubsampling: Sendable, Hashable {
    package var log2Width: Int
    package var log2Height: Int

    package init(log2Width: Int, log2Height: Int) {
        self.log2Width = log2Width
        self.log2Height = log2Height
    }

    package static let none = ChromaSubsampling(log2Width: 0, log2Height: 0)
    package static let yuv420 = ChromaSubsampling(log2Width: 1, log2Height: 1)
    package static let yuv422 = ChromaSubsampling(log2Width: 1, log2Height: 0)

    /// This sampling with a chroma sample for every pixel along each axis on which `crop`
    /// starts off the grid: what the pipeline makes of a picture cut there (see PictureCrop).
    package func full(whereOffGridOf crop: CropRect) -> ChromaSubsampling {
        ChromaSubsampling(
            log2Width: crop.x & ((1 << log2Width) - 1) != 0 ? 0 : log2Width,
            log2Height: crop.y & ((1 << log2Height) - 1) != 0 ? 0 : log2Height)
    }

    /// The planar YUV pixel format sampled like this whose samples hold `bits` bits (8, 10, 12
    /// or 16, the least that is enough; nil: FFmpeg has none).
    package func planarFormat(bits: Int) -> String? {
        let depth = bits <= 8 ? 8 : bits <= 10 ? 10 : bits <= 12 ? 12 : 16
        let name: String
        switch (log2Width, log2Height) {
        case (0, 0): name = "yuv444p"
        case (1, 0): name = "yuv422p"
        case (1, 1): name = "yuv420p"
        case (0, 1) where depth <= 12: name = "yuv440p"
        case (2, 0) where depth == 8: name = "yuv411p"
        default: return nil
        }
        return depth == 8 ? name : "\(name)\(depth)le"
    }
}

/// How a clip's frames are cut down to the crop window before they are scaled.
///
/// FFmpeg's crop filter is wrong at the edges of its domain: above 8 bits it moves a subsampled
/// chroma plane's pointer by (x * bytes per sample) >> subsampling, so an odd x lands between
/// two 16-bit samples and the chroma comes out as noise (a portrait HDR iPhone clip crops at
/// x = 555: false colours everywhere); NV12-like formats swap U and V the same way. Cropping is
/// only pointer arithmetic, so the pipeline does it with FFmpeg's own frame cropping
/// (av_frame_apply_cropping, what decoders use for conformance windows), which is right for every
/// plane layout. On the chroma grid that is the whole cut, and free.
///
/// Off the grid (an odd offset of a 4:2:0 picture: portrait 1080p phone clips) the window's
/// first and last pixels share a chroma sample with a pixel outside, and a cut by pointer cannot
/// be exact: its chroma plane has half the window's width, one sample fewer than cover the window
/// (the last pixel's is left out, and the scaler repeats its neighbour's, 1.5 pixels away). So
/// the picture is cut by pointer to the chroma samples that cover the window
/// (`CropRect.onChromaGrid`), given a chroma sample for every pixel along the axis that is off
/// the grid (4:2:0 to 4:4:0 for an odd column) and cut to the window in a small graph of its own
/// (`FilterGraphs.offGridCut`): every edge pixel takes its own chroma sample, nothing wholly
/// outside reaches the scaler. Measured on a 1080p portrait clip (812x1080 converted): about
/// 1 ms a frame on this machine (0.1-0.3 ms at 8 bits, 0.8 at 10); 4:4:4 at 16 bits cost 2-4.
package enum PictureCrop: Sendable, Hashable {
    /// Frames reach the filters already cropped to the window; `ChromaSubsampling` is their
    /// pixel format's.
    case framesCropped(ChromaSubsampling)
    /// The filters crop, after converting the whole picture to `format`, a planar format of
    /// 16 bits a sample that the crop filter handles exactly: for pixel formats whose planes
    /// cannot be cut by pointer (bit-packed, hardware frames, packed 4:2:2), and the tests'
    /// reference picture (it costs a conversion at the source size). A format with subsampled
    /// chroma (`subsampling`: packed 4:2:2 laid out as planar 4:2:2, unchanged) is cut like
    /// frames off the chroma grid: to the chroma samples that cover the window, then to the
    /// window in 4:4:4; converted to 4:4:4 whole, the window's edge chroma would be made from
    /// samples outside it.
    case inGraph(afterConvertingTo: String, subsampling: ChromaSubsampling = .none)

    package static let yuv420 = PictureCrop.framesCropped(.yuv420)
}

extension CropRect {
    /// The smallest region on the chroma grid of `subsampling` that holds this one: the chroma
    /// samples that cover a pixel of the window, and no other. In a picture of `pictureSize`
    /// whose side is not a whole number of chroma samples (4:1:1 322 wide: 80.5) the last sample
    /// covers fewer pixels, and the region ends with the picture: rounded up past it, a cut by
    /// pointer would ask for pixels the frame does not have.
    package func onChromaGrid(_ subsampling: ChromaSubsampling, pictureSize: (width: Int, height: Int)? = nil)
        -> CropRect
    {
        let maskX = (1 << subsampling.log2Width) - 1, maskY = (1 << subsampling.log2Height) - 1
        let left = x & ~maskX, top = y & ~maskY
        var right = (x + width + maskX) & ~maskX, bottom = (y + height + maskY) & ~maskY
        if let pictureSize {
            right = min(right, max(x + width, pictureSize.width))
            bottom = min(bottom, max(y + height, pictureSize.height))
        }
        return CropRect(x: left, y: top, width: right - left, height: bottom - top)
    }
}

extension FilterGraphs {
    /// The scaler's chroma-position options for a picture cut on the chroma grid: in swscale's
    /// units (1/256 of a luma sample), a chroma sample centred on the 2^s luma samples it covers
    /// is at 128 * (2^s - 1). That is swscale's own default on 5.1; said so that newer versions,
    /// which may take the frame's chroma location instead, site it the same. Empty for
    /// unsubsampled formats.
    static func chromaPositions(_ subsampling: ChromaSubsampling) -> String {
        var options = ""
        if subsampling.log2Width > 0 { options += ":in_h_chr_pos=\(128 * ((1 << subsampling.log2Width) - 1))" }
        if subsampling.log2Height > 0 { options += ":in_v_chr_pos=\(128 * ((1 << subsampling.log2Height) - 1))" }
        return options
    }

    /// Whether the window starts off the chroma grid (an odd column or row of a 4:2:0 picture).
    package static func isOffChromaGrid(_ crop: CropRect, _ subsampling: ChromaSubsampling) -> Bool {
        crop.x & ((1 << subsampling.log2Width) - 1) != 0 || crop.y & ((1 << subsampling.log2Height) - 1) != 0
    }

    /// The filters that finish cutting a picture of `bits` bits a sample to `crop` off the chroma
    /// grid (see PictureCrop): the picture arrives cut to `crop.onChromaGrid(subsampling)`, gets
    /// a chroma sample for every pixel along each axis off the grid, from its own samples (edges
    /// repeated), at its own depth, and is cut to the window exactly (the crop filter is right
    /// on an axis that is not subsampled).
    package static func offGridCut(crop: CropRect, subsampling: ChromaSubsampling, bits: Int) -> String {
        let region = crop.onChromaGrid(subsampling)
        let full = subsampling.full(whereOffGridOf: crop)
        let format = full.planarFormat(bits: bits) ?? ChromaSubsampling.none.planarFormat(bits: bits) ?? "yuv444p16le"
        return "scale=flags=bicubic" + chromaPositions(subsampling) + ",format=pix_fmts=\(format),"
            + "crop=w=\(crop.width):h=\(crop.height):x=\(crop.x - region.x):y=\(crop.y - region.y):exact=1"
    }
}
