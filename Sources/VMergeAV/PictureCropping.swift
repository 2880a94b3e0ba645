import CFFmpeg
import VMergeCore

extension PictureCrop {
    /// How frames of `format` are cut to the crop window: by pointer, unless the format's planes
    /// cannot be cut that way (bit-packed samples, a Bayer mosaic whose colour pattern an odd
    /// offset would shift, packed 4:2:2 such as UYVY whose pixel pairs an odd offset would split,
    /// swapping U and V, frames in hardware memory), then by the filters after a conversion.
    init(pixelFormat format: Int32) {
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(rawValue: format)) else {
            self = .yuv420  // unknown until decoded; the pipeline decides again from the frames
            return
        }
        let d = descriptor.pointee
        let unsplittable = UInt64(AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BAYER)
        let packedSubsampled =
            (d.log2_chroma_w > 0 || d.log2_chroma_h > 0) && d.flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) == 0
        guard d.flags & unsplittable == 0, !packedSubsampled else {
            let rgb = d.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0 || d.flags & UInt64(AV_PIX_FMT_FLAG_BAYER) != 0
            self = .inGraph(afterConvertingTo: rgb ? "gbrp16le" : d.nb_components < 3 ? "gray16le" : "yuv444p16le")
            return
        }
        self = .framesCropped(
            ChromaSubsampling(log2Width: Int(d.log2_chroma_w), log2Height: Int(d.log2_chroma_h)))
    }
}

extension Frame {
    /// Cuts the picture to `window` by moving its planes' pointers (FFmpeg's frame cropping,
    /// exact at any offset and for every plane layout); nothing is copied.
    func crop(to window: CropRect, file: String) throws {
        let f = pointer
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        guard window.x >= 0, window.y >= 0, window.width > 0, window.height > 0,
            window.width <= width - window.x, window.height <= height - window.y
        else {
            throw VMergeError.ffmpeg(
                file: file, operation: "cropping the picture",
                message: "a \(width)x\(height) picture has no \(window.width)x\(window.height) region at "
                    + "(\(window.x), \(window.y))")
        }
        f.pointee.crop_left = window.x
        f.pointee.crop_top = window.y
        f.pointee.crop_right = width - window.x - window.width
        f.pointee.crop_bottom = height - window.y - window.height
        try check(
            av_frame_apply_cropping(f, Int32(AV_FRAME_CROP_UNALIGNED)), "cropping the picture", file: file)
        // Formats it cannot cut on the left or top are left partly uncut: never sent here, but a
        // picture that is not the window must not pass as one.
        guard Int(f.pointee.width) == window.width, Int(f.pointee.height) == window.height else {
            throw VMergeError.ffmpeg(
                file: file, operation: "cropping the picture", message: "this pixel format cannot be cut by pointer")
        }
    }
}
