import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// One clip's pictures on the output: each decoded picture, at its time on the clip (from its
/// trim start), through each picture's filter graph (the job's own and each rendition's,
/// `PicturePath`) onto the output frame grid; the fps filter, closed at the clip's planned end,
/// makes them tile its slot exactly.
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
    /// The job's own picture and each rendition's.
    private let pictures: [PicturePath]
    /// Those fed the decoded pictures, the same pictures each (the others are fed theirs by the
    /// path they are scaled from, `DerivedPictures`).
    private let paths: [PicturePath]
    /// A second reference to a picture, for every path but the last (each graph takes one).
    private let copy: Frame
    /// The next output frame index this clip will deliver.
    var nextFrameIndex: Int64 { pictures[0].nextFrameIndex }
    /// The last picture's place on the output (Int64.min: none yet).
    private var lastMicros = Int64.min
    /// The latest picture from before the clip's time zero (its trim start): what shows at zero
    /// unless a picture falls on it exactly.
    private let early: Frame
    private var hasEarly = false

    init(_ planned: PlannedClip, options: MergeOptions, sink: FrameQueue, silence: AudioPlacer?, file: String) throws {
        (self.planned, self.options, self.sink, self.silence, self.file) = (planned, options, sink, silence, file)
        timeline = options.timeline
        let startFrame = timeline.frameIndex(atMicros: planned.startMicros)
        let all = (0...options.renditions.count).map {
            PicturePath(index: $0, planned: planned, options: options, sink: sink, file: file, startFrame: startFrame)
        }
        for (path, source) in zip(all, planned.scaledFrom) {
            if let source { try all[source].feed(path) }
        }
        pictures = all
        paths = all.filter { !$0.isDerived }
        self.startFrame = startFrame
        copy = try Frame()
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
        for path in paths { try path.close(at: planned.endMicros) }
        try padSilence()
        try sink.put(.fillVideo(upTo: timeline.frameIndex(atMicros: planned.endMicros)))
    }

    /// Sends a picture placed at clip time `micros` into the filters, timed at the start of
    /// output frame `index` when known: the fps filter then keeps exactly the pictures the exact
    /// timestamps make it keep (microseconds alone break ties either way).
    private func show(_ picture: Frame, at micros: Int64, frame index: Int64?) throws {
        guard micros > lastMicros else { return }
        lastMicros = micros
        picture.pts = index.map { timeline.micros(ofFrame: $0) } ?? micros
        for path in paths.dropLast() {
            copy.unref()
            try check(av_frame_ref(copy.pointer, picture.pointer), "copying a picture", file: file)
            try path.show(copy)
        }
        try paths[paths.count - 1].show(picture)
        try padSilence()
    }

    /// Keeps a silent clip's sound up with its pictures.
    private func padSilence() throws {
        try silence?.padSilence(upTo: timeline.sampleIndex(ofFrame: nextFrameIndex))
    }

    static func sampleAspect(of f: UnsafeMutablePointer<AVFrame>) -> Rational {
        let sar = f.pointee.sample_aspect_ratio
        return sar.num > 0 && sar.den > 0 ? Rational(Int(sar.num), Int(sar.den)) : Rational(1, 1)
    }
}
