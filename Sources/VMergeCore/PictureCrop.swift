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
}

/// How a clip's frames are cut down to the crop window before they are scaled.
///
/// FFmpeg's crop filter is wrong at the edges of its domain: above 8 bits it moves a subsampled
/// chroma plane's pointer by (x * bytes per sample) >> subsampling, so an odd x lands between
/// two 16-bit samples and the chroma comes out as noise (a portrait HDR iPhone clip crops at
/// x = 555: false colours everywhere); NV12-like formats swap U and V the same way. Cropping is
/// only pointer arithmetic, so the pipeline does it with FFmpeg's own frame cropping
/// (av_frame_apply_cropping, what decoders use for conformance windows), which is right for every
/// plane layout, and tells the scaler where the first chroma sample lies: at an odd offset it sits
/// half a chroma sample before the window's first pixel, and the scaler, which resamples anyway,
/// takes the chroma from there. Exact at any offset, and free.
package enum PictureCrop: Sendable, Hashable {
    /// Frames reach the filters already cropped to the window; `ChromaSubsampling` is their
    /// pixel format's.
    case framesCropped(ChromaSubsampling)
    /// The filters crop, after converting the whole picture to `format`, an unsubsampled format
    /// of 16 bits a sample that the crop filter handles exactly: for pixel formats whose planes
    /// cannot be cut by pointer (bit-packed, hardware frames), and the tests' reference picture
    /// (it costs a conversion at the source size).
    case inGraph(afterConvertingTo: String)

    package static let yuv420 = PictureCrop.framesCropped(.yuv420)
}

extension FilterGraphs {
    /// The scaler's chroma-position options for a picture cropped by pointer at `crop`'s offset:
    /// in swscale's units (1/256 of a luma sample), a chroma sample centred on the 2^s luma
    /// samples it covers is at 128 * (2^s - 1) (swscale's own default, so an offset on the chroma
    /// grid changes nothing); each luma sample the window starts past the chroma grid moves the
    /// first chroma sample 256 further back. Empty for unsubsampled formats.
    static func chromaPositions(crop: CropRect, subsampling: ChromaSubsampling) -> String {
        func position(offset: Int, log2: Int) -> Int {
            let step = 1 << log2
            return 128 * (step - 1) - 256 * (offset & (step - 1))
        }
        var options = ""
        if subsampling.log2Width > 0 {
            options += ":in_h_chr_pos=\(position(offset: crop.x, log2: subsampling.log2Width))"
        }
        if subsampling.log2Height > 0 {
            options += ":in_v_chr_pos=\(position(offset: crop.y, log2: subsampling.log2Height))"
        }
        return options
    }

    /// Whether the window starts off the chroma grid (an odd column or row of a 4:2:0 picture).
    static func isOffChromaGrid(_ crop: CropRect, _ subsampling: ChromaSubsampling) -> Bool {
        crop.x & ((1 << subsampling.log2Width) - 1) != 0 || crop.y & ((1 << subsampling.log2Height) - 1) != 0
    }
}
