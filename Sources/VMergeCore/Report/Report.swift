import Foundation

/// Why an output ended before the plan's end.
package enum Truncation: String, Sendable {
    case maxDuration = "max-duration"
    case maxSize = "max-size"
}

/// What was written.
package struct OutputSummary: Sendable {
    package var path: String
    package var bytes: Int64
    /// The video's length: frames written at the output rate.
    package var durationMicros: Int64
    package var videoFrames: Int64
    package var audioSamples: Int64
    /// Whether the index (moov) was found before the media data (mdat) in the file written.
    package var faststart: Bool
    package var truncation: Truncation?
    /// Where --poster's JPEG was written.
    package var poster: String?
    /// How long each half of the pipeline waited for the other while it was made.
    package var waits = PipelineWaits()
    /// Which --rendition this file is; nil: the job's own.
    package var rendition: Rendition?
    /// The job's --rendition files, in its order (the job's own summary only); those found
    /// made earlier last.
    package var renditions: [OutputSummary] = []
    /// Found with the job's key and left as it was: not made by this run (a job that adds a
    /// rendition keeps the files it made before).
    package var madeEarlier = false

    package init(
        path: String, bytes: Int64, durationMicros: Int64, videoFrames: Int64, audioSamples: Int64,
        faststart: Bool, truncation: Truncation?
    ) {
        self.path = path
        self.bytes = bytes
        self.durationMicros = durationMicros
        self.videoFrames = videoFrames
        self.audioSamples = audioSamples
        self.faststart = faststart
        self.truncation = truncation
    }
}

/// How long the two halves of a merge waited for each other: the decoding thread for room in the
/// queue (encoding was the slower half meanwhile), the encoding thread for pictures (decoding was).
/// Both near zero: the two kept each other busy.
package struct PipelineWaits: Sendable, Equatable {
    package var decodeSeconds = 0.0
    package var encodeSeconds = 0.0
    package init() {}
}

/// The machine-readable account of one run (`--report`), schema in schema/report.schema.json.
package struct RunReport: Sendable {
    package static let schemaVersion = 1

    package enum Status: String, Sendable {
        case ok
        case dryRun = "dry-run"
        case failed
        case cancelled
        case nothingToMerge = "nothing-to-merge"
        /// Batch/watch: the output already held this job's result.
        case skipped
    }

    package var status: Status
    package var exit: Exit
    package var exitCode: Int32 { exit.status }
    package var error: (file: String?, message: String)?
    package var startedAt: Date
    package var wallSeconds: Double
    package var versions: (vmerge: String, ffmpeg: String, libraries: [(name: String, version: String)])
    package var options: MergeOptions
    /// The free space the run asked for (--min-free), nil for the estimate.
    package var minFree: Int64?
    /// Settings that are not part of the merge itself but shaped the run.
    package var settings: [(String, JSON)]
    package var outputPath: FileName
    /// The inputs as named after expansion; `plan` holds what became of them once probed.
    package var inputPaths: [FileName]
    package var plan: MergePlan?
    package var output: OutputSummary?
    /// --delete-sources: the inputs deleted once the output was published and checked.
    package var deletedSources: [String] = []
    /// --delete-sources: the inputs kept, each with why (`kept: bytes ... are in no output`).
    package var keptSources: [(path: String, reason: String)] = []
    /// A run that published no video: the file it left at the output's name (an earlier run's,
    /// untouched), so the report and the disk agree (see `KeptOutput`).
    package var keptOutput: KeptOutput?
    /// A dry run: what is under the output's name, the size estimate and what would stop the
    /// merge (the report's `output.existing`, `output.estimated_bytes` and `problems`).
    package var preflight: Preflight?
    /// --notify: each event sent, and whether it was delivered (nil: no --notify).
    package var notifications: [NotificationRecord]?

    package init(
        status: Status, exit: Exit, startedAt: Date, wallSeconds: Double,
        versions: (vmerge: String, ffmpeg: String, libraries: [(name: String, version: String)]),
        options: MergeOptions, minFree: Int64? = nil, settings: [(String, JSON)], outputPath: FileName,
        inputPaths: [FileName]
    ) {
        self.minFree = minFree
        self.status = status
        self.exit = exit
        self.startedAt = startedAt
        self.wallSeconds = wallSeconds
        self.versions = versions
        self.options = options
        self.settings = settings
        // A report is read by people and programs that may not see a presigned URL's query: a
        // remote name is kept in its shown form, whichever step the job ended at.
        self.outputPath = RunReport.shown(outputPath)
        self.inputPaths = inputPaths.map(RunReport.shown)
    }

    /// A name as a report may hold it: an https URL without its user, password or query.
    static func shown(_ name: FileName) -> FileName {
        FileName(RemoteName.printable(name.escaped))
    }

    /// How the reports vmerge writes begin (a merge's and a batch's): an earlier report may be
    /// replaced by a new one, any other file only with -y.
    package static let signatures = [
        "{\n  \"schema_version\": 1,\n  \"status\": \"", "{\n  \"schema_version\": 1,\n  \"kind\": \"batch\",",
    ]

    package var json: JSON {
        let seconds = { (micros: Int64) in JSON.number(Double(micros) / 1e6) }
        var outputJSON = JSON.null
        let media = output?.durationMicros ?? (status == .dryRun ? plan?.outputDurationMicros : nil)
        if status == .dryRun, let plan {
            outputJSON = outputObject(
                written: false, bytes: nil, micros: plan.outputDurationMicros, frames: nil, samples: nil,
                faststart: nil,
                truncation: plan.isCutByMaxDuration ? .maxDuration : nil)
        } else if let output {
            outputJSON = outputObject(
                written: true, bytes: output.bytes, micros: output.durationMicros, frames: output.videoFrames,
                samples: output.audioSamples, faststart: output.faststart, truncation: output.truncation)
        }
        let speed: Double? = output.map { Double($0.durationMicros) / 1e6 / max(wallSeconds, 1e-6) }
        let millis = { (seconds: Double) -> JSON in .number((seconds * 1000).rounded() / 1000) }
        let timings: JSON = .object([
            ("wall_seconds", millis(wallSeconds)),
            ("media_seconds", media.map(seconds) ?? .null),
            ("speed", .number(speed.map { ($0 * 100).rounded() / 100 })),
            ("decode_waited_seconds", output.map { millis($0.waits.decodeSeconds) } ?? .null),
            ("encode_waited_seconds", output.map { millis($0.waits.encodeSeconds) } ?? .null),
        ])
        return .object([
            ("schema_version", .int(RunReport.schemaVersion)),
            ("status", .string(status.rawValue)),
            ("exit_code", .int(Int64(exitCode))),
            ("error", error.map { .object([("file", .string($0.file)), ("message", .string($0.message))]) } ?? .null),
            ("started_at", .string(ISO8601DateFormatter().string(from: startedAt))),
            (
                "versions",
                .object([
                    ("vmerge", .string(versions.vmerge)),
                    ("ffmpeg", .string(versions.ffmpeg)),
                    ("libraries", .object(versions.libraries.map { ($0.name, .string($0.version)) })),
                ])
            ),
            ("options", optionsObject),
            ("inputs", .array(inputObjects)),
            ("output", outputJSON),
            ("outputs", outputsJSON),
            ("deleted_sources", .array(deletedSources.map { .string($0) })),
            (
                "kept_sources",
                .array(keptSources.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) })
            ),
            ("kept_output", keptOutput?.json ?? .null),
            (
                "problems",
                .array(
                    (preflight?.problems ?? []).map {
                        .object([("file", .string($0.file)), ("message", .string($0.description))])
                    })
            ),
            ("timings", timings),
            ("notifications", notifications.map { .array($0.map(\.json)) } ?? .null),
        ])
    }

    /// Every job option from the one option table, then what follows from them and the run's own
    /// settings.
    private var optionsObject: JSON {
        var jobSettings = JobSettings()
        jobSettings.merge = options
        jobSettings.minFree = minFree
        return .object(
            [("output", .string(outputPath.escaped))]
                + JobOption.all.map { ($0.reportKey, $0.reportValue(in: jobSettings)) }
                + [
                    ("height", .int(options.outputSize.height)),
                    ("sample_rate", .int(options.sampleRate)),
                    ("channels", .int(options.channels)),
                    ("overwrite", .bool(options.overwrite)),
                ] + settings)
    }

    /// One input of the run: what became of it, its probe when it was read, and its edit.
    package struct InputEntry: Sendable {
        package var path: String
        package var outcome: InputOutcome
        package var clip: ClipInfo?
        package var edit: InputEdit
    }

    /// Each input as the plan's outcome for it says (`MergePlan.outcomes`): what the report's
    /// "inputs" and the Swift API's clips are made of.
    package var inputEntries: [InputEntry] {
        guard let plan else {
            return inputPaths.map { InputEntry(path: $0.escaped, outcome: .notProbed, clip: nil, edit: .whole) }
        }
        return zip(plan.inputs, plan.outcomes(output: output, dryRun: status == .dryRun)).map { input, outcome in
            var clip: ClipInfo?
            if case let .clip(info) = input.probe { clip = info }
            if case .notProbed = outcome { clip = nil }
            return InputEntry(path: input.probe.path, outcome: outcome, clip: clip, edit: input.edit)
        }
    }

    private var inputObjects: [JSON] {
        inputEntries.map { inputObject(path: $0.path, outcome: $0.outcome, clip: $0.clip, edit: $0.edit) }
    }

    private func inputObject(path: String, outcome: InputOutcome, clip: ClipInfo?, edit: InputEdit) -> JSON {
        let planned = outcome.planned
        var placement = JSON.null
        if case let .kept(_, slot) = outcome {
            placement = .object([
                ("start", .number(Double(slot.startMicros) / 1e6)),
                ("duration", .number(Double(slot.heldMicros) / 1e6)),
                ("cut_at", .number(slot.cutAtMicros.map { Double($0) / 1e6 })),
                ("cut_by", .string(slot.cutBy?.rawValue)),
            ])
        }
        // Not probed: the trim as asked, where it says.
        let used: (start: Int64?, end: Int64?) =
            clip.map { edit.range(inClipOf: $0.durationMicros) } ?? (edit.startMicros, edit.endMicros)
        let video = clip.map { videoObject($0, planned) }
        let audio = clip?.audio.map { a -> JSON in
            .object([("codec", .string(a.codec)), ("sample_rate", .int(a.sampleRate)), ("channels", .int(a.channels))])
        }
        // What of the file the output does not carry whatever the run (another track, telemetry,
        // sound past the picture): why --delete-sources keeps it. null when not probed.
        let leftOut: JSON = clip.map { JSON.array($0.leftOut.map { JSON.string($0) }) } ?? .null
        var decode = JSON.null
        if let count = planned?.decodeCount {
            decode = .object([("video_packets", .int(count.videoPackets)), ("skipped", .int(count.skipped))])
        }
        let crop = planned.map { p -> JSON in
            .object([
                ("x", .int(p.crop.x)), ("y", .int(p.crop.y)), ("width", .int(p.crop.width)),
                ("height", .int(p.crop.height)),
            ])
        }
        return .object([
            ("path", .string(path)),
            ("status", .string(outcome.status)),
            ("reason", .string(outcome.reason)),
            ("left_out", leftOut),
            ("container", .string(clip?.container)),
            ("duration", .number(clip?.durationSeconds)),
            // The part asked for, on the clip's own timeline: the trim, within the clip.
            ("start", .number(used.start.map { Double($0) / 1e6 })),
            ("end", .number(used.end.map { Double($0) / 1e6 })),
            ("title", .string(edit.title)),
            ("video", video ?? .null),
            ("audio", audio ?? .null),
            ("crop", crop ?? .null),
            ("placement", placement),
            ("decode", decode),
            (
                "loudness",
                planned?.loudness.map { measured in
                    // -inf (nothing measured) as null: JSON has no infinities.
                    let finite = { (value: Double) in
                        value.isFinite ? JSON.number((value * 100).rounded() / 100) : .null
                    }
                    return JSON.object([
                        ("integrated", finite(measured.integrated)), ("true_peak", finite(measured.truePeak)),
                        ("gain", .number(planned?.gainDB ?? 0)),
                    ])
                } ?? .null
            ),
        ])
    }

    /// An input's video stream as probed, with what the plan does to its colour.
    private func videoObject(_ clip: ClipInfo, _ planned: PlannedClip?) -> JSON {
        let v = clip.video
        return .object([
            ("codec", .string(v.codec)),
            ("width", .int(v.width)),
            ("height", .int(v.height)),
            ("frame_rate", .number((v.frameRate.doubleValue * 1000).rounded() / 1000)),
            ("pixel_format", .string(v.pixelFormat)),
            ("rotation", .int(v.orientation.rotationDegrees)),
            ("mirrored", .bool(v.orientation.isMirrored)),
            ("orientation", .string(v.orientation.rawValue)),
            (
                "colour",
                .object([
                    ("transfer", .string(v.colour.transfer)),
                    ("primaries", .string(v.colour.primaries)),
                    ("matrix", .string(v.colour.matrix)),
                    ("range", .string(v.colour.range)),
                    ("bit_depth", .int(v.colour.bitDepth)),
                    ("dynamic_range", .string(v.colour.dynamicRange.rawValue)),
                    ("dolby_vision", .string(v.colour.dolbyVision.map { "\($0.profile).\($0.compatibility)" })),
                    ("conversion", .string(planned?.colour.summary)),
                    (
                        "tonemap",
                        .string(
                            planned.flatMap { p -> String? in
                                if case let .toneMap(_, _, _, _, t) = p.colour { return t.rawValue }
                                return nil
                            })
                    ),
                ])
            ),
        ])
    }

}

/// What a run that published no video (failed, cancelled, nothing to merge) left under its
/// output's name: the earlier file, untouched. With -y the old video and poster are replaced only
/// once the new set is complete, so after a failure they are still there while the report says
/// this run failed: this names them, with the job key the video records, so a reader of the
/// report knows what the name holds.
package struct KeptOutput: Sendable, Equatable {
    package var path: String
    package var bytes: Int64
    /// The job key the file records (batch, watch and queue outputs), nil for none.
    package var jobKey: String?
    /// The poster beside it, when the job asks for one and a file is there.
    package var poster: String?

    package init(path: String, bytes: Int64, jobKey: String?, poster: String?) {
        self.path = path
        self.bytes = bytes
        self.jobKey = jobKey
        self.poster = poster
    }

    var json: JSON {
        .object([
            ("path", .string(path)), ("bytes", .int(bytes)), ("job_key", .string(jobKey)), ("poster", .string(poster)),
        ])
    }
}
