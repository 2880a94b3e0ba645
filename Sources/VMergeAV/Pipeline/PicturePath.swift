import CFFmpeg
import VMergeCore

/// One picture the job makes of a clip (its own, or a `--rendition`'s): the decoded pictures,
/// placed on the output's frame grid, cut to this picture's window and through its own filter
/// graph, to the writer's encoder for it. Every path of a clip is fed the same pictures at the
/// same times, so each rendition has the same frames on the same grid.
final class PicturePath {
    /// Which picture: 0 the job's own, then each rendition's (`WriterCommand.video`).
    let index: Int
    private let planned: PlannedClip
    private let options: MergeOptions
    private let sink: FrameQueue
    private let file: String
    private var graph: FilterGraph?
    /// The chain `graph` is made of, planned from the first picture.
    private var description: String?
    /// When the pipeline cuts the frames reaching `graph` to the crop window (see PictureCrop):
    /// the window for frames of the size the graph was made for; nil when the graph crops.
    private var graphCrop: (width: Int, height: Int, window: CropRect, cutter: PictureCutter)?
    /// A blank frame kept between pulls.
    private var spare: Frame?
    /// The next output frame index this path will deliver.
    private(set) var nextFrameIndex: Int64
    /// Whether this picture is scaled from another's finished frames (`DerivedPictures`): it is
    /// shown that picture's frames, on the output's frame grid already, not the decoded ones.
    let isDerived: Bool
    /// The pictures scaled from this one's frames, each shown every frame this path makes.
    private var derived: [PicturePath] = []
    /// A second reference to a finished frame, for the derived pictures' graphs (made when the
    /// first is fed).
    private var copy: Frame?

    init(index: Int, planned: PlannedClip, options: MergeOptions, sink: FrameQueue, file: String, startFrame: Int64) {
        (self.index, self.planned, self.sink, self.file) = (index, planned, sink, file)
        self.options = planned.shape(index).options ?? options
        nextFrameIndex = startFrame
        isDerived = planned.scaledFrom[index] != nil
        if isDerived {
            let size = self.options.outputSize
            description = DerivedPictures.filter(width: size.width, height: size.height)
        }
    }

    /// Has this path show `path` every frame it makes.
    func feed(_ path: PicturePath) throws {
        if copy == nil { copy = try Frame() }
        derived.append(path)
    }

    /// Takes `picture` (its pts set on the output's clock, or for a derived picture its output
    /// frame index): the graph keeps its own reference.
    func show(_ picture: Frame) throws {
        if description == nil { try planPicturePath(for: picture.pointer) }
        let shown = try graphCrop.map { try crop(picture, graphCrop: $0) } ?? picture
        if graph == nil, let description { graph = try makeGraph(for: shown.pointer, description: description) }
        try graph?.push(shown)
        try drain()
    }

    /// Ends the graph at `micros` (the fps filter fills up to it) and hands on what is left.
    func close(at micros: Int64) throws {
        guard let graph else { throw VMergeError.invalidInput(file: file, reason: "no video frame could be decoded") }
        // A derived graph's clock is the frame grid (no fps filter waits on its end).
        try graph.close(at: isDerived ? options.timeline.frameIndex(atMicros: micros) : micros)
        try drain()
        for path in derived { try path.close(at: micros) }
    }

    /// The crop window and filter chain for pictures like `f`.
    private func planPicturePath(for f: UnsafeMutablePointer<AVFrame>) throws {
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        let cropping = PictureCrop(pixelFormat: f.pointee.format)
        let (window, chain) = planned.picturePath(
            frameWidth: width, frameHeight: height, sampleAspect: VideoPlacer.sampleAspect(of: f), cropping: cropping,
            options: options, picture: index)
        if case let .framesCropped(subsampling) = cropping {
            graphCrop = (width, height, window, try PictureCutter(subsampling: subsampling, file: file))
        }
        description = chain
    }

    /// The graph, fed pictures like `f` (as cut, when the pipeline cuts them).
    private func makeGraph(for f: UnsafeMutablePointer<AVFrame>, description: String) throws -> FilterGraph {
        let rate = options.frameRate
        let args = FilterGraph.videoSourceArgs(
            for: f, width: Int(f.pointee.width), height: Int(f.pointee.height),
            timeBase: isDerived ? "\(rate.den)/\(rate.num)" : "1/1000000", sampleAspect: VideoPlacer.sampleAspect(of: f)
        )
        return try FilterGraph(
            sourceName: "buffer", sourceArgs: args, sinkName: "buffersink", description: description, file: file)
    }

    /// Cuts a picture to its crop window: the graph's, or for a picture of another size than the
    /// graph was made for (a stream that changes size), its own centred one (the scaler follows
    /// size changes; the picture stays whole and centred).
    private func crop(
        _ picture: Frame, graphCrop: (width: Int, height: Int, window: CropRect, cutter: PictureCutter)
    ) throws -> Frame {
        let f = picture.pointer
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        let window =
            (width, height) == (graphCrop.width, graphCrop.height)
            ? graphCrop.window
            : planned.framing(
                frameWidth: width, frameHeight: height, sampleAspect: VideoPlacer.sampleAspect(of: f), options: options
            ).crop
        return try graphCrop.cutter.cut(picture, to: window)
    }

    private func drain() throws {
        guard let graph else { return }
        while let out = try sink.pull(from: graph, reusing: &spare) {
            // pts is in 1/fps: the output frame index.
            nextFrameIndex = max(nextFrameIndex, out.pts + 1)
            if let copy {
                for path in derived {
                    copy.unref()
                    try check(av_frame_ref(copy.pointer, out.pointer), "copying a picture", file: file)
                    try path.show(copy)
                }
            }
            try sink.put(.video(out, picture: index))
        }
    }
}
