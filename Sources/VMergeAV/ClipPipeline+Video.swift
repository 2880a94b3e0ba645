import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Video placement: each decoded picture through the clip's filter graph onto the output frame
/// grid.
extension ClipPipeline {
    // MARK: video

    func handleVideoFrame() throws {
        let f = frame.pointer
        var ts = f.pointee.best_effort_timestamp
        if ts == noPTS { ts = f.pointee.pts }
        if videoStart == noPTS {
            videoStart = ts != noPTS ? ts : 0
            videoStartMicros = av_rescale_q(videoStart, videoTimeBase, microsBase)
        }
        // Frames without any timestamp follow the previous one. Time zero is the trim start.
        let relative =
            ts == noPTS
            ? (lastVideoMicros == Int64.min ? 0 : lastVideoMicros.subtractingSaturating(planned.startMicros) + 1)
            : clipMicros(ts).subtractingSaturating(planned.trimStartMicros)
        // Frames past the end belong to no one (trailing frames, what a trim cuts away).
        guard relative < planned.durationMicros else { return }
        if relative < 0 {
            // Before zero (what a trim cuts away, edit-list lead-in): only the latest is kept,
            // the picture on screen at zero if none falls on it exactly.
            if lastVideoMicros == Int64.min {
                early.unref()
                av_frame_move_ref(early.pointer, f)
                hasEarly = true
            }
            return
        }
        if relative > 0 { try showEarlyPicture() }
        hasEarly = false
        early.unref()
        // The clip's first picture opens its slot even if the stream starts a little late
        // (leading frames that could not be decoded), so the output frame grid has no hole.
        if lastVideoMicros == Int64.min {
            try show(frame, at: planned.startMicros, frame: startFrame)
        } else {
            try show(
                frame, at: planned.startMicros.addingSaturating(relative),
                frame: ts == noPTS ? nil : max(startFrame, outputFrame(of: ts)))
        }
    }

    /// Shows the picture kept from before time zero at the clip's start, if nothing is shown yet.
    func showEarlyPicture() throws {
        guard hasEarly else { return }
        hasEarly = false
        defer { early.unref() }
        if lastVideoMicros == Int64.min { try show(early, at: planned.startMicros, frame: startFrame) }
    }

    /// Sends a picture placed at clip time `micros` into the filters, timed at the start of
    /// output frame `index` when known: the fps filter then keeps exactly the pictures the exact
    /// timestamps make it keep (microseconds alone break ties either way).
    func show(_ picture: Frame, at micros: Int64, frame index: Int64?) throws {
        guard micros > lastVideoMicros else { return }
        lastVideoMicros = micros
        if videoGraph == nil { videoGraph = try makeVideoGraph(for: picture.pointer) }
        if let videoCrop { try crop(picture, graphCrop: videoCrop) }
        picture.pts = index.map { timeline.micros(ofFrame: $0) } ?? micros
        try videoGraph!.push(picture)
        try drainVideo()
    }

    func makeVideoGraph(for f: UnsafeMutablePointer<AVFrame>) throws -> FilterGraph {
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        let cropping = PictureCrop(pixelFormat: f.pointee.format)
        let sar = sampleAspect(of: f)
        let (window, description) = planned.picturePath(
            frameWidth: width, frameHeight: height, sampleAspect: sar, cropping: cropping, options: options)
        var size = (width, height)
        if case .framesCropped = cropping {
            videoCrop = (width, height, window)
            size = (window.width, window.height)
        }
        let args = FilterGraph.videoSourceArgs(
            for: f, width: size.0, height: size.1, timeBase: "1/1000000", sampleAspect: sar)
        return try FilterGraph(
            sourceName: "buffer", sourceArgs: args, sinkName: "buffersink",
            description: description, file: path)
    }

    func sampleAspect(of f: UnsafeMutablePointer<AVFrame>) -> Rational {
        let sar = f.pointee.sample_aspect_ratio
        return sar.num > 0 && sar.den > 0 ? Rational(Int(sar.num), Int(sar.den)) : Rational(1, 1)
    }

    /// Cuts a picture to its crop window: the graph's, or for a picture of another size than the
    /// graph was made for (a stream that changes size), its own centred one (the scaler follows
    /// size changes; the picture stays whole and centred).
    func crop(_ picture: Frame, graphCrop: (width: Int, height: Int, window: CropRect)) throws {
        let f = picture.pointer
        let width = Int(f.pointee.width), height = Int(f.pointee.height)
        let window =
            (width, height) == (graphCrop.width, graphCrop.height)
            ? graphCrop.window
            : planned.framing(frameWidth: width, frameHeight: height, sampleAspect: sampleAspect(of: f), options: options)
                .crop
        try picture.crop(to: window, file: path)
    }

    func drainVideo() throws {
        guard let videoGraph else { return }
        while let out = try nextFiltered(from: videoGraph) {
            // pts is in 1/fps: the output frame index.
            nextFrameIndex = max(nextFrameIndex, out.pts + 1)
            try sink.put(.video(out))
            if audioDecoder == nil {
                // No sound of its own: keep silence interleaved with the pictures as they go.
                let upTo = timeline.sampleIndex(ofFrame: nextFrameIndex)
                try sink.put(.padAudio(to: min(upTo, sampleEnd)))
            }
        }
    }
}
