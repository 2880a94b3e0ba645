import Foundation

/// Why an input takes no part in the output.
package enum DropReason: Sendable, Equatable {
    /// `trimmed`: the length is of the part its trim asks for.
    case tooShort(durationSeconds: Double, limitSeconds: Double, trimmed: Bool = false)
    case invalid(String)
    /// The output reached its --max-duration before this clip.
    case beyondLimit(limitSeconds: Double)
    /// Shorter than half an output frame (whatever --min-duration says): it would take no frame
    /// of the output, so nothing of it would be seen or heard.
    case noFrame(durationSeconds: Double, frameSeconds: Double, trimmed: Bool = false)

    package var message: String {
        switch self {
        case let .tooShort(duration, limit, trimmed):
            // Rounded down, so a clip just under the limit never reads as "2 s, under the 2 s minimum".
            let shown = (duration * 1000).rounded(.down) / 1000
            let what = trimmed ? "the trimmed part lasts" : "video lasts"
            return "dropped: \(what) \(formatSeconds(shown)) s, under the \(formatSeconds(limit)) s minimum"
        case let .invalid(reason):
            return "skipped: \(reason)"
        case let .beyondLimit(limit):
            return "left out: the output reaches its \(formatSeconds(limit)) s maximum before this clip"
        case let .noFrame(duration, frame, trimmed):
            let what = trimmed ? "the trimmed part lasts" : "video lasts"
            return "dropped: \(what) \(formatSeconds(duration)) s, under half an output frame "
                + "(\(formatSeconds(frame / 2)) s): no frame of the output would show it"
        }
    }
}

/// A clip's measured loudness (--loudness): integrated over the part the output uses, in LUFS
/// (EBU R128 / ITU-R BT.1770; -inf when nothing was measured), and its true peak in dBTP.
package struct Loudness: Sendable, Equatable {
    package var integrated: Double
    package var truePeak: Double

    package init(integrated: Double, truePeak: Double) {
        self.integrated = integrated
        self.truePeak = truePeak
    }

    /// The gain in dB that brings it to `target` LUFS, held down so the true peak stays at or
    /// under -1 dBTP; 0 for silence (under -70 LUFS, where R128 measures nothing).
    package func gain(toward target: Double) -> Double {
        guard integrated.isFinite, integrated > -70 else { return 0 }
        var gain = target - integrated
        if truePeak.isFinite { gain = min(gain, -1 - truePeak) }
        return (gain * 100).rounded() / 100
    }
}

/// How much of a clip's video was decoded: packets read, and those left undecoded because the
/// output does not show their pictures and nothing references them.
package struct DecodeCount: Sendable, Equatable {
    package var videoPackets = 0
    package var skipped = 0
    /// Corrupt packets concealed (the output shows a repeated or damaged picture there): the
    /// output does not hold that footage, so --delete-sources keeps the file.
    package var corrupt = 0

    package init(videoPackets: Int = 0, skipped: Int = 0) {
        self.videoPackets = videoPackets
        self.skipped = skipped
    }
}

/// A chapter of the output: a clip's title and its place on the output timeline.
package struct Chapter: Sendable, Equatable {
    package var title: String
    package var startMicros: Int64
    package var endMicros: Int64

    /// The most chapters, and bytes of a title, the MP4's Nero chapter list (chpl) holds: its count
    /// and each title's length are one byte. FFmpeg's muxer writes the first 255 of each there and
    /// all of them in the QuickTime chapter track, so players would disagree past them.
    package static let maxCount = 255
    package static let maxTitleBytes = 255

    /// `chapters` as both lists can hold them alike: titles cut to 255 bytes on a character
    /// boundary (with "…" where cut; the muxer cut mid-character, leaving invalid UTF-8), and past
    /// 255 clips the 255th chapter spans the rest, titled with its first clip's title and how
    /// many follow ("IMG_0254 (+46 more)").
    package static func fitted(_ chapters: [Chapter]) -> [Chapter] {
        chapters.prefix(maxCount).enumerated().map { index, chapter in
            var chapter = chapter
            var more = ""
            if index == maxCount - 1, chapters.count > maxCount, let last = chapters.last {
                chapter.endMicros = last.endMicros
                more = " (+\(chapters.count - maxCount) more)"
            }
            chapter.title = cut(visible(chapter.title), toBytes: maxTitleBytes - more.utf8.count) + more
            return chapter
        }
    }

    /// A title from a file name may hold control characters (a job file's may not): each becomes
    /// a space, so no player shows a line break or a terminal escape in a chapter list. A byte of
    /// the name that is not UTF-8 (`FileName`) cannot be shown as text: it becomes U+FFFD, as a
    /// file manager shows it.
    static func visible(_ title: String) -> String {
        var scalars = String.UnicodeScalarView()
        // The name's bytes read as text (a real U+10FFFF stays itself).
        let text = FileName.hasEscapedBytes(title) ? String(decoding: FileName.bytes(of: title), as: UTF8.self) : title
        for scalar in text.unicodeScalars {
            scalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        return String(scalars)
    }

    /// `title` in at most `limit` bytes of UTF-8, cut between characters, with an ellipsis when cut.
    static func cut(_ title: String, toBytes limit: Int) -> String {
        guard title.utf8.count > limit else { return title }
        let ellipsis = "\u{2026}"
        var kept = ""
        var bytes = ellipsis.utf8.count
        for character in title {
            let size = String(character).utf8.count
            guard bytes + size <= limit else { break }
            kept.append(character)
            bytes += size
        }
        return kept + ellipsis
    }
}

/// One kept clip and everything decided about it before any decoding.
package struct PlannedClip: Sendable {
    package var clip: ClipInfo
    /// Position on the output timeline, in microseconds: always the time of an output frame, so
    /// the clip's first picture and its first sound start together.
    package var startMicros: Int64
    /// Where the next clip starts: the output frame nearest to this clip's exact end (the sum of
    /// the lengths of the clips up to here, so rounding never builds up). Its audio is cut or
    /// padded with silence to fill exactly [start, end).
    package private(set) var endMicros: Int64
    /// The region of the coded picture used (--fit crop), or the whole picture.
    package var crop: CropRect
    /// --fit pad or blur: the whole picture's size once scaled to fit the output, in coded
    /// orientation; nil when cropping to fill.
    package var fitted: (width: Int, height: Int)?
    /// What its colour needs to become BT.709 SDR.
    package var colour: ColourConversion
    package var videoFilter: String
    package var audioFilter: String
    /// Once written: how much of its video was decoded.
    package var decodeCount: DecodeCount?
    /// --loudness: what was measured, and the gain in dB its sound gets.
    package private(set) var loudness: Loudness?
    package private(set) var gainDB: Double?

    /// Gives the clip's sound the gain that brings `measured` to `target` LUFS.
    package mutating func level(_ measured: Loudness?, toward target: Double, options: MergeOptions) {
        loudness = measured
        gainDB = measured.map { $0.gain(toward: target) }
        let gain = gainDB ?? 0
        audioFilter =
            (gain == 0 ? "" : "volume=volume=\(formatDecimal(gain))dB:precision=float,")
            + FilterGraphs.audio(options: options, trimmed: trimStartMicros > 0)
    }

    /// How much of the clip is used, from `trimStartMicros` on: all of the trimmed part, unless
    /// the output's maximum length cuts it. Its slot on the output, `endMicros - startMicros`,
    /// differs from this by less than one output frame.
    package var durationMicros: Int64
    /// The part of the clip asked for (on its own timeline): all of it unless trimmed.
    package let trimStartMicros: Int64
    package let trimEndMicros: Int64
    /// Its chapter title: the input's "title", else the file name without its extension.
    package let givenTitle: String?
    package var title: String {
        if let givenTitle { return givenTitle }
        let name = clip.path.split(separator: "/").last.map(String.init) ?? clip.path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// Whether --max-duration cuts this clip short (of its trimmed part).
    package var isCut: Bool { durationMicros < trimEndMicros - trimStartMicros }
    /// Whether the clip is read only part of the way: trimmed or cut, its end is not used.
    package var endsEarly: Bool { trimStartMicros + durationMicros < clip.durationMicros }
    package var isTrimmed: Bool { trimStartMicros > 0 || trimEndMicros < clip.durationMicros }

    /// How many source pixels make one output pixel, in the direction that shrinks least.
    package var downscale: Double

    /// Which of the clip's pictures the decoder leaves without its in-loop deblocking filter:
    /// `--skip-deblocking`, where `auto` decides by how much the clip shrinks (`SkipDeblocking`).
    package var undeblocked: UndeblockedPictures

    /// - Parameters:
    ///   - exactStartMicros: the sum of the lengths of the clips before this one.
    ///   - durationMicros: how much of the trimmed part is used (all of it by default).
    init(
        clip: ClipInfo, edit: InputEdit = .whole, exactStartMicros: Int64, durationMicros: Int64? = nil,
        options: MergeOptions, capabilities: Capabilities = .full
    ) {
        self.clip = clip
        (trimStartMicros, trimEndMicros) = edit.range(inClipOf: clip.durationMicros)
        givenTitle = edit.title
        self.durationMicros = durationMicros ?? (trimEndMicros - trimStartMicros)
        let timeline = options.timeline
        startMicros = timeline.onFrameGrid(exactStartMicros)
        endMicros = timeline.onFrameGrid(exactStartMicros.addingSaturating(self.durationMicros))
        let colour = ColourConversion.plan(
            for: clip.video.colour, width: clip.video.width, height: clip.video.height, tonemap: options.tonemap,
            canToneMap: capabilities.canToneMap)
        self.colour = colour
        let own = PlannedClip.picture(of: clip, colour: colour, options: options)
        (crop, fitted, videoFilter) = (own.shape.crop, own.shape.fitted, own.shape.videoFilter)
        audioFilter = FilterGraphs.audio(options: options, trimmed: trimStartMicros > 0)
        let renditions = options.renditions.map {
            PlannedClip.picture(of: clip, colour: colour, options: options.shaped(as: $0))
        }
        self.renditions = renditions.map(\.shape)
        let sizes = options.pictures.map(\.outputSize)
        scaledFrom = DerivedPictures.sources(
            of: zip([own] + renditions, sizes).map { picture, size in
                DerivedPictures.Picture(
                    crop: picture.shape.crop, fitted: picture.shape.fitted != nil, width: size.width,
                    height: size.height, downscale: picture.downscale)
            }, colour: colour)
        // The largest picture decides: the decoder's shortcuts must not show in any rendition.
        downscale = ([own.downscale] + renditions.map(\.downscale)).min() ?? 1
        undeblocked = options.skipDeblocking.pictures(shrinkingBy: downscale)
    }

    /// One picture of the clip as `options` shape it (the job's own, or a rendition's), and how
    /// many source pixels make one of its pixels, in the direction that shrinks least.
    static func picture(
        of clip: ClipInfo, colour: ColourConversion, options: MergeOptions
    ) -> (shape: RenditionShape, downscale: Double) {
        let video = clip.video
        let (crop, fitted) = framing(
            width: video.width, height: video.height, sampleAspect: video.sampleAspect,
            orientation: video.orientation, options: options)
        let filter = FilterGraphs.video(
            crop: crop, orientation: video.orientation, inputRate: video.frameRate, colour: colour, options: options,
            fitted: fitted, cropping: video.cropping)
        let size = options.outputSize
        let (scaleW, scaleH) =
            fitted ?? (video.orientation.swapsAxes ? (size.height, size.width) : (size.width, size.height))
        return (
            RenditionShape(options: options, crop: crop, fitted: fitted, videoFilter: filter),
            min(Double(crop.width) / Double(scaleW), Double(crop.height) / Double(scaleH))
        )
    }

    /// How each `--rendition` shows this clip, in the job's order (the job's own picture is
    /// `crop`, `fitted` and `videoFilter`).
    package var renditions: [RenditionShape]

    /// For each picture (0 the job's own, then each rendition's), the picture whose finished
    /// frames it is scaled down from, or nil when it is made from the decoded ones
    /// (`DerivedPictures`).
    package let scaledFrom: [Int?]

    /// The picture path of picture `index`: 0 the job's own, then each rendition's.
    package func shape(_ index: Int) -> RenditionShape {
        index == 0
            ? RenditionShape(options: nil, crop: crop, fitted: fitted, videoFilter: videoFilter)
            : renditions[index - 1]
    }

    /// Whether the output shows the source picture at clip time `time` (microseconds from the
    /// clip's time zero, its trim start), given the pictures before and after it in presentation
    /// order, as ClipPipeline places pictures and the fps filter picks them: each output frame
    /// shows the latest picture whose time rounds to it, the latest picture before zero opens the
    /// clip (unless one falls on zero), nothing at or past the clip's length is used, the last
    /// picture used fills to the end. When in doubt, shown.
    ///
    /// - Parameters:
    ///   - time, previous, next: the pictures' clip times, as the pipeline places them.
    ///   - slot, nextSlot: the output frames this picture's and the next one's timestamps round to.
    package func showsPicture(
        at time: Int64, previous: Int64, next: Int64, slot: Int64, nextSlot: Int64, on timeline: Timeline
    ) -> Bool {
        if time >= durationMicros { return false }
        if next >= durationMicros { return true }
        if time < 0 { return next > 0 && nextSlot > timeline.frameIndex(atMicros: startMicros) }
        // The first picture at or after zero opens the clip when none came before it.
        if previous < 0 { return true }
        return nextSlot > slot
    }

    /// What of a picture of this size is used and how big it becomes, by --fit.
    static func framing(
        width: Int, height: Int, sampleAspect: Rational, orientation: Orientation, options: MergeOptions
    ) -> (crop: CropRect, fitted: (width: Int, height: Int)?) {
        guard options.fit != .crop else {
            return (
                centreCrop(
                    codedWidth: width, codedHeight: height, sampleAspect: sampleAspect, orientation: orientation,
                    aspect: options.aspect), nil
            )
        }
        let size = options.outputSize
        let box = orientation.swapsAxes ? (size.height, size.width) : (size.width, size.height)
        return (
            CropRect(x: 0, y: 0, width: width & ~1, height: height & ~1),
            fittedSize(codedWidth: width, codedHeight: height, sampleAspect: sampleAspect, box: box)
        )
    }

    /// The crop window and the video chain for the frames the decoder actually delivers, which
    /// may differ in size or pixel format from what the probe saw.
    /// - Parameter picture: 0 the job's own picture, then each rendition's (see `shape(_:)`).
    package func picturePath(
        frameWidth: Int, frameHeight: Int, sampleAspect: Rational, cropping: PictureCrop,
        options: MergeOptions, picture: Int = 0
    ) -> (crop: CropRect, filter: String) {
        let shape = shape(picture)
        let options = shape.options ?? options
        if frameWidth == clip.video.width && frameHeight == clip.video.height && cropping == clip.video.cropping {
            return (shape.crop, shape.videoFilter)
        }
        let (crop, fitted) = framing(
            frameWidth: frameWidth, frameHeight: frameHeight, sampleAspect: sampleAspect, options: options)
        return (
            crop,
            FilterGraphs.video(
                crop: crop, orientation: clip.video.orientation,
                inputRate: clip.video.frameRate, colour: colour, options: options, fitted: fitted, cropping: cropping)
        )
    }

    /// What of a delivered picture of this size is used (the crop window) and how big it becomes.
    package func framing(frameWidth: Int, frameHeight: Int, sampleAspect: Rational, options: MergeOptions) -> (
        crop: CropRect, fitted: (width: Int, height: Int)?
    ) {
        PlannedClip.framing(
            width: frameWidth, height: frameHeight, sampleAspect: sampleAspect, orientation: clip.video.orientation,
            options: options)
    }
}

/// One rendition's picture of a clip: the region of the coded picture it shows, its size once
/// fitted (--fit pad or blur), and the filter chain that makes it.
package struct RenditionShape: Sendable {
    /// The rendition's options (`MergeOptions.shaped(as:)`); nil for the job's own picture.
    package let options: MergeOptions?
    package let crop: CropRect
    package let fitted: (width: Int, height: Int)?
    package let videoFilter: String
}
