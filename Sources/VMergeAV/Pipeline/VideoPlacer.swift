import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// One clip's pictures on the output: each decoded picture, at its time on the clip (from its
/// trim start), through the clip's filter graph onto the output frame grid; the fps filter,
/// closed at the clip's planned end, makes them tile its slot exactly.
final class VideoPlacer {
    private let planned: PlannedClip
    private let options: MergeOptions
    private let timeline: Timeline
    private let sink: FrameQueue
    private let file: String
    /// Where silence goes when the clip has no sound of its own: kept interleaved with the
    /// pictures as they go. nil: the clip's sound fills its samples.
    private let silence: AudioPlacer?
    /// The output frame the clip starts on.
    private let startFrame: Int64
    /// The next output frame index this clip will deliver.
    private(set) var nextFrameIndex: Int64
    private var graph: FilterGraph?
    /// The chain `graph` is made of, planned from the first picture.
    private var description: String?
    /// When the pipeline cuts the frames reaching `graph` to the crop window (see PictureCrop):
    /// the window for frames of the size the graph was made for; nil when the graph crops.
    private var graphCrop: (width: Int, height: Int, window: CropRect, cutter: PictureCutter)?
    /// The last picture's place on the output (Int64.min: none yet).
    private var lastMicros = Int64.min
    /// The latest picture from before the clip's time zero (its trim start): what shows at zero
    /// unless a picture falls on it exactly.
    private let early: Frame
    private var hasEarly = false
    /// A blank frame kept between pulls.
    private var spare: Frame?

    init(_ planned: PlannedClip, options: MergeOptions, sink: FrameQueue, silence: AudioPlacer?, file: String) throws {
        (self.planned, self.options, self.sink, self.silence, self.file) = (planned, options, sink, silence, file)
        timeline = options.timeline
        startFrame = timeline.frameIndex(atMicros: planned.startMicros)
        nextFrameIndex = startFrame
        early = try Frame()
    }

    /// A decoded picture. `relative`: its time on the clip from the trim start (nil: it has no
    /// timestamp, and follows the previous picture); `slot`: the output frame its exact
    /// timestamp falls on, when it has one.
    func place(_ frame: Frame, relative: Int64?, slot: Int64?) throws {
        let relative =
            relative ?? (lastMicros == Int64.min ? 0 : lastMicros.subtractingSaturating(planned.startMicros) + 1)
        // Frames past the end belong to no one (trailing frames, what a trim cuts away).
        guard relative < planned.durationMicros else { return }
        if relative < 0 {
            // Before zero (what a trim cuts away, edit-list lead-in): only the latest is kept,
            // the picture on screen at zero if none falls on it exactly.
            if lastMicros == Int64.min {
                early.unref()
                av_frame_move_ref(early.pointer, frame.pointer)
                hasEarly = true
            }
            return
        }
        if relative > 0 { try showEarlyPicture() }
        hasEarly = false
        early.unref()
        // The clip's first picture opens its slot even if the stream starts a little late
        // (leading frames that could not be decoded), so the output frame grid has no hole.
        if lastMicros == Int64.min {
            try show(frame, at: planned.startMicros, frame: startFrame)
        } else {
            try show(frame, at: planned.startMicros.addingSaturating(relative), frame: slot.map { max(startFrame, $0) })
        }
    }

    /// Shows the picture kept from before time zero at the clip's start, if nothing is shown yet
    /// (a clip whose every picture lies before its trim start shows the last of them).
    func showEarlyPicture() throws {
        guard hasEarly else { return }
        hasEarly = false
        defer { early.unref() }
        if lastMicros == Int64.min { try show(early, at: planned.startMicros, frame: startFrame) }
    }

    /// The fps filter fills up to exactly the clip's planned end (the writer makes sure of it).
    func finish() throws {
        guard let graph else { throw VMergeError.invalidInput(file: file, reason: "no video frame could be decoded") }
        try graph.close(at: planned.endMicros)
        try drain()
        try sink.put(.fillVideo(upTo: timeline.frameIndex(atMicros: planned.endMicros)))
    }

    /// Sends a picture placed at clip time `micros` into the filters, timed at the start of
    /// output frame `index` when known: the fps filter then keeps exactly the pictures the exact
    /// timestamps make it keep (microseconds alone break ties either way).
    private func show(_ picture: Frame, at micros: Int64, frame index: Int64?) throws {
        guard micros > lastMicros else { return }
        lastMicros = micros
        if description == nil { try planPicturePath(for: picture.pointer) }
        picture.pts = index.map { timeline.micros(ofFrame: $0) } ?? micros
        let shown = try graphCrop.map { try crop(picture, graphCrop: $0) } ?? picture
        if graph == nil, let description { graph = try makeGraph(for: shown.pointer, description: description) }
        try graph?.push(shown)
        try drain()
    }

    /// The crop window and filter chain for pictures like `f`.
    private func planPicturePath(for f: UnsafeMutablePointer<AVFrame>) throws {
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        let cropping = PictureCrop(pixelFormat: f.pointee.format)
        let (window, chain) = planned.picturePath(
            frameWidth: width, frameHeight: height, sampleAspect: VideoPlacer.sampleAspect(of: f), cropping: cropping,
            options: options)
        if case let .framesCropped(subsampling) = cropping {
            graphCrop = (width, height, window, try PictureCutter(subsampling: subsampling, file: file))
        }
        description = chain
    }

    /// The clip's graph, fed pictures like `f` (as cut, when the pipeline cuts them).
    private func makeGraph(for f: UnsafeMutablePointer<AVFrame>, description: String) throws -> FilterGraph {
        let args = FilterGraph.videoSourceArgs(
            for: f, width: Int(f.pointee.width), height: Int(f.pointee.height), timeBase: "1/1000000",
            sampleAspect: VideoPlacer.sampleAspect(of: f))
        return try FilterGraph(
            sourceName: "buffer", sourceArgs: args, sinkName: "buffersink", description: description, file: file)
    }

    static func sampleAspect(of f: UnsafeMutablePointer<AVFrame>) -> Rational {
        let sar = f.pointee.sample_aspect_ratio
        return sar.num > 0 && sar.den > 0 ? Rational(Int(sar.num), Int(sar.den)) : Rational(1, 1)
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
            try sink.put(.video(out))
            try silence?.padSilence(upTo: timeline.sampleIndex(ofFrame: nextFrameIndex))
        }
    }
}
