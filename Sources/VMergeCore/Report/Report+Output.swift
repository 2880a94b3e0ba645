import Foundation

/// The report's account of the files written: `output` (the job's own) and `outputs` (every file,
/// each --rendition's too).
extension RunReport {
    func outputObject(
        written: Bool, bytes: Int64?, micros: Int64, frames: Int64?, samples: Int64?, faststart: Bool?,
        truncation: Truncation?
    ) -> JSON {
        let size = options.outputSize
        return .object([
            ("path", .string(outputPath.escaped)),
            ("written", .bool(written)),
            ("bytes", .int(bytes)),
            ("duration", .number(Double(micros) / 1e6)),
            ("video_frames", .int(frames)),
            ("audio_samples", .int(samples)),
            ("width", .int(size.width)),
            ("height", .int(size.height)),
            ("frame_rate", .number((options.frameRate.doubleValue * 1000).rounded() / 1000)),
            ("video_codec", .string("h264")),
            ("audio_codec", .string("aac")),
            ("sample_rate", .int(options.sampleRate)),
            ("channels", .int(options.channels)),
            ("faststart", faststart.map { .bool($0) } ?? .null),
            ("truncated", .bool(truncation != nil)),
            ("truncated_by", .string(truncation?.rawValue)),
            ("metadata", carriedMetadata),
            ("poster", .string(written ? output?.poster : nil)),
            (
                "estimated_bytes",
                .int(
                    FreeSpace.estimatedOutputBytes(
                        durationMicros: plan?.outputDurationMicros ?? micros, options: options))
            ),
            ("existing", .string(preflight?.existing?.rawValue)),
        ])
    }

    /// Every file the job makes, its own first, then each --rendition's: what was written, or
    /// for a dry run what is planned; empty when nothing was written.
    var outputsJSON: JSON {
        let pictures = options.pictures
        let renditions: [Rendition?] = [nil] + options.renditions.map { $0 }
        var files: [OutputSummary?]
        if let output {
            // By rendition: a run that adds renditions lists those it made before, found kept.
            files =
                [output] + options.renditions.map { rendition in output.renditions.first { $0.rendition == rendition } }
        } else if status == .dryRun, plan != nil {
            files = Array(repeating: nil, count: pictures.count)
        } else {
            return .array([])
        }
        let planned = plan?.outputDurationMicros ?? 0
        let names = [outputPath.escaped] + options.renditions.map { $0.fileName(besideOutput: outputPath).escaped }
        return .array(
            files.indices.map { index in
                let (file, shape) = (files[index], pictures[min(index, pictures.count - 1)])
                let size = shape.outputSize
                return .object([
                    ("rendition", .string(renditions[min(index, renditions.count - 1)]?.name)),
                    ("path", .string(file?.path ?? names[min(index, names.count - 1)])),
                    ("written", .bool(file != nil)),
                    ("made_earlier", .bool(file?.madeEarlier ?? false)),
                    ("bytes", .int(file?.bytes)),
                    ("duration", .number(Double(file?.durationMicros ?? planned) / 1e6)),
                    ("video_frames", .int(file?.videoFrames)),
                    ("width", .int(size.width)),
                    ("height", .int(size.height)),
                    ("fit", .string(shape.fit.rawValue)),
                    ("crf", .number(shape.effectiveCRF)),
                    ("preset", .string(shape.effectivePreset.rawValue)),
                    ("faststart", file.map { .bool($0.faststart) } ?? .null),
                    ("truncated_by", .string(file?.truncation?.rawValue)),
                    (
                        "estimated_bytes",
                        .int(FreeSpace.estimatedOutputBytes(durationMicros: planned, options: shape))
                    ),
                ])
            })
    }

    /// What the output carries over from its first kept clip (nothing with --strip-metadata).
    var carriedMetadata: JSON {
        let clip = options.stripMetadata ? nil : plan?.clips.first?.clip
        let tags = clip?.recording
        return .object([
            ("creation_time", .string(clip?.creationTime)),
            ("location", .string(tags?.location)),
            ("make", .string(tags?.make)),
            ("model", .string(tags?.model)),
            ("software", .string(tags?.software)),
            ("creation_date", .string(tags?.creationDate)),
            ("stripped", .bool(options.stripMetadata)),
        ])
    }
}
