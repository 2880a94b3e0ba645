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
        let subsampling = ChromaSubsampling(log2Width: Int(d.log2_chroma_w), log2Height: Int(d.log2_chroma_h))
        if packedSubsampled, d.flags & unsplittable == 0, let planar = subsampling.planarFormat(bits: 16) {
            self = .inGraph(afterConvertingTo: planar, subsampling: subsampling)
            return
        }
        guard d.flags & unsplittable == 0, !packedSubsampled else {
            let rgb = d.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0 || d.flags & UInt64(AV_PIX_FMT_FLAG_BAYER) != 0
            self = .inGraph(afterConvertingTo: rgb ? "gbrp16le" : d.nb_components < 3 ? "gray16le" : "yuv444p16le")
            return
        }
        self = .framesCropped(subsampling)
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

/// Cuts a clip's pictures to their crop window (see PictureCrop): by pointer, and off the chroma
/// grid of a subsampled format by pointer to the chroma samples that cover the window and then
/// in a small graph of its own, made again when the pictures change size.
final class PictureCutter {
    private let subsampling: ChromaSubsampling
    private let file: String
    /// The graph that finishes cuts off the chroma grid, for the window and picture format it
    /// was made for.
    private var finishing: (window: CropRect, format: Int32, graph: FilterGraph)?
    /// The cut picture a finishing graph hands back (blank again once the next graph takes it).
    private let finished: Frame

    init(subsampling: ChromaSubsampling, file: String) throws {
        (self.subsampling, self.file) = (subsampling, file)
        finished = try Frame()
    }

    /// `picture` cut to `window`: itself, cut by pointer, or a copy of the window with full chroma
    /// along the axis off the grid.
    func cut(_ picture: Frame, to window: CropRect) throws -> Frame {
        guard FilterGraphs.isOffChromaGrid(window, subsampling) else {
            try picture.crop(to: window, file: file)
            return picture
        }
        let f = picture.pointer
        let region = window.onChromaGrid(
            subsampling, pictureSize: (Int(f.pointee.width), Int(f.pointee.height)))
        if finishing == nil || finishing?.window != window || finishing?.format != f.pointee.format {
            finishing = nil
            let args = FilterGraph.videoSourceArgs(
                for: f, width: region.width, height: region.height, timeBase: "1/1000000",
                sampleAspect: VideoPlacer.sampleAspect(of: f))
            let descriptor = av_pix_fmt_desc_get(AVPixelFormat(rawValue: f.pointee.format))
            let bits = descriptor.map { Int($0.pointee.comp.0.depth) }
            let graph = try FilterGraph(
                sourceName: "buffer", sourceArgs: args, sinkName: "buffersink",
                description: FilterGraphs.offGridCut(crop: window, subsampling: subsampling, bits: bits ?? 16),
                file: file)
            finishing = (window, f.pointee.format, graph)
        }
        guard let graph = finishing?.graph else { return picture }
        try picture.crop(to: region, file: file)
        try graph.push(picture)
        // scale, format and crop give one picture for each they take.
        guard try graph.pull(finished) == .ok else {
            throw VMergeError.ffmpeg(file: file, operation: "cropping the picture", message: "no picture came back")
        }
        return finished
    }
}
