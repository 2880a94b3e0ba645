import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Probe -> Plan -> per clip (Demux -> Decode -> Filter) -> Encode -> Mux -> Finalize.
package struct Merger {
    package var options: MergeOptions
    /// Where warnings and notes go as they happen (dropped clips, skipped inputs...), from this
    /// thread and the decoding one: the run's diagnostics, not its report (the report is the
    /// runner's, `RunReport`).
    package var diagnostics: DiagnosticSink
    /// Receives progress: each input probed, then at most every 100 ms while encoding.
    package var progress: ((MergeProgress) -> Void)?
    /// What the run carries besides the options: cancel, confinement, the job's key, the build.
    package var context: MergeContext
    /// Whether an invalid input dropped by skipInvalid is said as a warning ("skipped: ..."); a dry
    /// run without --skip-invalid, which drops them only to list them all, says them as errors.
    package var warnsOfSkippedInputs = true
    package init(
        options: MergeOptions, context: MergeContext = MergeContext(), diagnostics: DiagnosticSink,
        progress: ((MergeProgress) -> Void)? = nil
    ) {
        self.options = options
        self.context = context
        self.diagnostics = diagnostics
        self.progress = progress
    }

    private var cancelToken: CancelToken? { context.cancel }
    var temporaryTag: String? { context.temporaryTag }
    var jobKey: String? { context.jobKey }

    /// Refuses, before any work, an output that exists (without overwrite), that is one of the
    /// inputs, or whose folder is missing or read-only.
    /// - Parameter report: the run's report, which the poster may not take the place of.
    package func checkOutput(_ output: String, inputs: [String], report: String? = nil) throws {
        try OutputTarget.check(output, inputs: inputs, replace: videoPolicy, folder: context.outputFolder)
        try checkRenditions(of: output, inputs: inputs, report: report)
        if let poster = posterPath(for: output) {
            // Not onto the video, the report or an input; replaced only with -y (or when it is
            // this job's own, left by a run that stopped), and only a regular file.
            if PathIdentity.of(FileName(poster)) == PathIdentity.of(FileName(output)) {
                throw VMergeError.io(file: poster, message: "the poster would overwrite the output video")
            }
            if let report, PathIdentity.of(FileName(poster)) == PathIdentity.of(FileName(report)) {
                throw VMergeError.io(file: poster, message: "the poster would overwrite the report")
            }
            try OutputTarget.check(
                poster, inputs: inputs, replace: posterPolicy, kind: .companion, folder: context.outputFolder)
        }
    }

    /// What the poster may replace: any regular file with -y; else only this job's own poster.
    var posterPolicy: ReplacePolicy {
        options.overwrite ? .always : jobKey.map { .ifPosterOfJob($0) } ?? .never
    }

    /// --poster's path: its name in the output's folder.
    func posterPath(for output: String) -> String? { options.posterPath(forOutput: output) }

    /// Probes every input in order into `probes` (kept there even when this throws, for the
    /// report), then decides what to keep. Throws on the first invalid input unless
    /// `skipInvalid`, and when nothing is left to merge.
    package func makePlan(probing inputs: [String], into probes: inout [InputProbe]) throws -> MergePlan {
        try makePlan(probing: inputs.map { JobInput($0) }, into: &probes)
    }

    /// The same, each input with its edit: the part of it used decides whether it is long
    /// enough, and a trim that starts past its end makes it invalid.
    package func makePlan(probing inputs: [JobInput], into probes: inout [InputProbe]) throws -> MergePlan {
        probes = inputs.map { .notProbed(path: $0.path.escaped) }
        let ahead = ProbeAhead(
            inputs.map(\.path.escaped), confinedTo: context.confinement, sources: context.sources, cancel: cancelToken)
        defer { ahead.finish() }
        let clock = Stopwatch()
        var keptMicros: Int64 = 0
        for (index, input) in inputs.enumerated() {
            let path = input.path.escaped
            // Past --max-duration nothing more is needed: the rest is left out unprobed.
            if let limit = options.maxDurationMicros, keptMicros >= limit { break }
            try cancelToken.check()
            progress?(
                MergeProgress(
                    phase: .probing, item: index + 1, itemCount: inputs.count, file: path, doneMicros: 0,
                    totalMicros: 0, elapsedSeconds: clock.seconds))
            do {
                let (clip, probing) = try cancellable { try ahead.outcome(index).get() }
                if let problem = Limits.problem(with: clip, maxPixels: options.maxPixels) {
                    throw VMergeError.invalidInput(file: path, reason: problem)
                }
                if let problem = input.edit.problem(withClipOf: clip.durationMicros) {
                    throw VMergeError.invalidInput(file: path, reason: problem)
                }
                probing.forEach(diagnostics.send)
                if let end = input.edit.endMicros, end > clip.durationMicros {
                    diagnostics(
                        Diagnostic(
                            .note, file: path,
                            "the trim ends at \(formatSeconds(Double(end) / 1e6)) s, past the video's end "
                                + "(\(formatSeconds(clip.durationSeconds)) s); it ends there"))
                }
                probes[index] = .clip(clip)
                let used = input.edit.range(inClipOf: clip.durationMicros)
                if options.isLongEnough(used.end - used.start) { keptMicros += used.end - used.start }
            } catch let VMergeError.invalidInput(file, reason) {
                probes[index] = .invalid(path: file, reason: reason)
                if !options.skipInvalid { throw VMergeError.invalidInput(file: file, reason: reason) }
            }
        }
        let plan = MergePlan(
            probes: probes, edits: inputs.map(\.edit), options: options, capabilities: context.capabilities)
        reportPlanWarnings(plan)
        if plan.clips.isEmpty { throw VMergeError.nothingToMerge(dropped: plan.dropped.count) }
        return plan
    }

    /// The plan of the inputs as they are now, saying nothing and reporting no progress; nil when
    /// there is none. For judging what an output found done holds of them (--delete-sources).
    package func quietPlan(probing inputs: [JobInput]) -> MergePlan? {
        var quiet = self
        (quiet.diagnostics, quiet.progress) = (.silent, nil)
        var probes: [InputProbe] = []
        return try? quiet.makePlan(probing: inputs, into: &probes)
    }

    /// Before any work (the dry run too): HDR this build cannot tone-map, an output that takes
    /// long to encode, and each input the plan leaves out.
    private func reportPlanWarnings(_ plan: MergePlan) {
        reportPosterWarnings(plan)
        for clip in plan.clips {
            if case .unmappedHDR = clip.colour {
                diagnostics(
                    Diagnostic(
                        .warning, file: clip.clip.path,
                        "\(clip.clip.video.colour.dynamicRange.rawValue.uppercased()) video, but this FFmpeg build lacks "
                            + "\(context.capabilities.missingToneMapFilters.joined(separator: " and ")) to tone-map it: colours will "
                            + "look washed out"))
            }
        }
        // A picture far beyond the default takes x264 long: say so before the work (the dry run too).
        let outputSeconds = Double(plan.outputDurationMicros) / 1e6
        let encodeSeconds = options.encodeSecondsEstimate(forOutputSeconds: outputSeconds)
        if encodeSeconds > 600 {
            let (w, h) = options.outputSize
            let rate = options.encodedFramesPerSecond
            diagnostics(
                Diagnostic(
                    .warning, file: nil,
                    "a \(w)x\(h) output takes long to encode: about \(formatDuration(encodeSeconds)) for its "
                        + "\(formatSeconds(outputSeconds)) s (x264 makes about \(formatSeconds((rate * 10).rounded() / 10)) "
                        + "such frames a second on 2 cores)"))
        }
        var beyondLimit: [String] = []
        for (path, reason) in plan.dropped {
            if case .beyondLimit = reason {
                beyondLimit.append(path)
            } else if case .invalid = reason, !warnsOfSkippedInputs {
                continue
            } else {
                diagnostics(Diagnostic(.warning, file: path, reason.message))
            }
        }
        // One note for all of them: with thousands of segments a line each would bury the rest.
        if let first = beyondLimit.first, let limit = options.maxDuration {
            let more = beyondLimit.count > 1 ? " (and the \(beyondLimit.count - 1) clips after it)" : ""
            diagnostics(
                Diagnostic(
                    .note, file: first,
                    "left out\(more): the output reaches its \(formatSeconds(limit)) s "
                        + "\(context.naming.word("max-duration")) before"))
        }
    }

    /// --poster-at without --poster makes nothing; past the output's end it is its last picture.
    private func reportPosterWarnings(_ plan: MergePlan) {
        guard let at = options.posterAt else { return }
        guard options.poster != nil else {
            let (at, poster) = (context.naming.word("poster-at"), context.naming.word("poster"))
            return diagnostics(Diagnostic(.warning, file: nil, "\(at) is given without \(poster): no poster is made"))
        }
        let duration = plan.outputDurationMicros
        if Int64((at * 1e6).rounded()) >= duration, duration > 0 {
            diagnostics(
                Diagnostic(
                    .note, file: nil,
                    "\(context.naming.word("poster-at")) \(formatSeconds(at)) s is past the output's end (\(formatSeconds(Double(duration) / 1e6)) s): "
                        + "the poster is its last picture"))
        }
    }

    /// Encodes the plan, with --poster its poster, into temporary files beside `output`, written
    /// and synced but not yet published: the caller adds what goes with them (a report) and
    /// publishes the set, or drops it. `clock` runs from when the run began, for timings. Every
    /// file is made in `folder` (the output's, opened when the job started; nil: opened now), the
    /// one descriptor the whole set is published through.
    package func encode(
        _ plan: MergePlan, to output: String, in folder: OutputFolder? = nil, clock: Stopwatch = Stopwatch()
    ) throws -> EncodedOutput {
        let folder = try folder ?? OutputFolder(of: output)
        var plan = plan
        if let loudness = options.loudness {
            // Measured first, each clip on its own: its gain must be known before its first sample.
            for index in plan.clips.indices {
                let measured = try cancellable {
                    try LoudnessMeter.measure(plan.clips[index], options: options, context: context)
                }
                plan.clips[index].level(measured, toward: loudness, options: options)
            }
        }
        let target = try OutputTarget(
            path: output, inputs: plan.inputs.map(\.probe.path), replace: videoPolicy,
            folder: context.outputFolder, tag: temporaryTag, in: folder)
        FFmpegLog.setThreadFile(output)
        defer { FFmpegLog.setThreadFile(nil) }
        var set = PublishSet(video: target, folder: context.outputFolder, keepsVideo: context.keepsOwnVideo)
        var renditions: [OutputTarget] = []
        do {
            renditions = try renditionTargets(
                for: output, inputs: plan.inputs.map(\.probe.path), in: folder, set: &set)
            let (encoded, picture, counts) = try cancellable {
                try encodeVideo(plan, to: [target] + renditions, publishedAs: [output] + renditionPaths(for: output))
            }
            var summary = encoded
            for (index, count) in counts.enumerated() where index < plan.clips.count {
                plan.clips[index].decodeCount = count
            }
            try addPoster(
                for: output, picture: picture, of: target, lasting: summary.durationMicros, in: folder, to: &set)
            summary.bytes = target.temporary.size
            summary.poster = posterPath(for: output)
            summary.path = output
            if context.keepsOwnVideo {
                summary.madeEarlier = true
                summary.renditions += keptSummaries(for: output, like: summary)
            }
            return EncodedOutput(plan: plan, summary: summary, set: set, clock: clock)
        } catch {
            set.discard()
            // Said of the file it concerns, never of its hidden temporary.
            throw ([target] + renditions).reduce(error as? VMergeError) {
                $0?.renamingFile(from: $1.temporaryPath, to: $1.path)
            } ?? error
        }
    }

    /// A signal (or the token) makes FFmpeg calls fail through the interrupt callback with
    /// whatever error they return; report those as the cancellation they are.
    private func cancellable<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            try cancelToken.check()
            throw error
        }
    }

    /// Which file each input was and whether any of it was concealed ("!") or left out ("~"),
    /// for a later run that finds the job done and must know what it may delete (see JobTag).
    private func tagFiles(_ plan: MergePlan, _ producer: Producer, _ writer: Writer) -> [String] {
        let corrupt = Set(producer.decodeCounts.indices.filter { producer.decodeCounts[$0].corrupt > 0 })
        let heldMicros = writer.isTruncated ? plan.timeline.micros(ofFrame: writer.framesWritten) : Int64.max
        return plan.inputs.map { input -> String in
            guard case let .clip(clip) = input.probe else { return "-" }
            let text = JobTag.file(of: clip.path, id: clip.fileID, sources: context.sources)
            guard case let .kept(index) = input.disposition else { return text + "~" }
            let planned = plan.clips[index]
            if planned.isTrimmed || planned.isCut || planned.endMicros > heldMicros { return text + "~" }
            return corrupt.contains(index) ? text + "!" : text
        }
    }

    /// The encoders and muxers of every file of the job, the job's own first.
    private func makeWriter(_ plan: MergePlan, _ targets: [OutputTarget], _ names: [String]) throws -> Writer {
        try Writer(
            files: zip(targets, names).map {
                WriterFile(path: $0.temporaryPath, file: $0.temporary.descriptor, logName: $1)
            }, options: options,
            creationTime: plan.clips.first?.clip.creationTime,
            recording: plan.clips.first?.clip.recording ?? RecordingTags(),
            chapters: options.chapters ? plan.chapters : [],
            posterIndex: options.poster == nil
                ? nil
                : plan.timeline.frameIndex(
                    atMicros: options.posterMicros(outputDurationMicros: plan.outputDurationMicros)),
            recordedKeys: pictureKeys(context.recordedKey, output: names[0]), cancel: cancelToken)
    }

    /// The output's summary, with --poster the poster's JPEG, and how much of each clip's video
    /// was decoded.
    /// - Parameters: targets: the job's own file, then each rendition's; names: their names.
    private func encodeVideo(_ plan: MergePlan, to targets: [OutputTarget], publishedAs names: [String]) throws
        -> (OutputSummary, Frame?, [DecodeCount])
    {
        let (target, output) = (targets[0], names[0])
        let path = target.temporaryPath
        let writer = try makeWriter(plan, targets, names)
        // Decode/filter on a thread of its own, encode/mux here: on two cores the two halves
        // overlap instead of taking turns. Room for as many pictures ahead for each file.
        let queue = FrameQueue(capacity: 32 * targets.count)
        let producer = Producer(plan: plan, options: options, context: context, queue: queue, diagnostics: diagnostics)
        producer.start()
        defer { producer.waitUntilDone() }
        // Speed and ETA from encoding alone: probing thousands of inputs first would skew both.
        let meter = ProgressMeter(plan: plan, sink: progress)
        do {
            try queue.consume { command in
                try writer.apply(command)
                if case .video = command {
                    meter.update(outputFrames: writer.nextFrameIndex) { target.temporary.size }
                }
            }
        } catch is SizeLimitReached {
            queue.stop(SizeLimitReached())
        } catch {
            queue.stop(error)
            throw error
        }
        try cancelToken.check()
        producer.waitUntilDone()
        if context.recordedKey != nil {
            let files = tagFiles(plan, producer, writer)
            writer.finalTags = pictureKeys(context.recordedKey, output: output).map {
                $0.map { JobTag(key: $0, names: context.jobNames, files: files).text }
            }
        }
        try writer.finish()
        let empty = writer.pictures.indices.first { writer.pictures[$0].framesWritten == 0 }
        if let empty, let limit = options.maxSize {
            throw VMergeError.io(
                file: names[empty],
                message:
                    "\(context.naming.word("max-size")) \(ByteSize.format(limit)) is too small to hold even the first "
                    + "pictures")
        }
        let timeline = plan.timeline
        let truncation: Truncation? =
            writer.isTruncated ? .maxSize : plan.isCutByMaxDuration ? .maxDuration : nil
        var summary = OutputSummary(
            path: path, bytes: 0, durationMicros: timeline.micros(ofFrame: writer.framesWritten),
            videoFrames: writer.framesWritten, audioSamples: writer.samplesWritten,
            faststart: MP4Layout.isFaststart(target.temporary.descriptor), truncation: truncation)
        // Each rendition on disk before the set is published (its video is synced as it is).
        for file in targets.dropFirst() { try file.temporary.sync() }
        summary.renditions = renditionSummaries(writer, targets, names, plan)
        meter.finish(outputMicros: summary.durationMicros, bytes: target.temporary.size)
        producer.waitUntilDone()
        summary.waits = queue.waited
        return (summary, writer.posterPicture, producer.decodeCounts)
    }
}
