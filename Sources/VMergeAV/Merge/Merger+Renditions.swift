import Foundation
import VMergeCore

/// --rendition: the files of a job besides its own, made from the same decoded pictures
/// (`PicturePath`, `PictureOutput`) and published in its set.
extension Merger {
    /// Refuses, before any work, a rendition's name that is another file of the job or a file it
    /// may not replace (beside an object, the upload's own conditions decide: `RemoteOutput`).
    func checkRenditions(of output: String, inputs: [String], report: String?) throws {
        var taken = [output, report, posterPath(for: output)].compactMap { $0 }.map { PathIdentity.of(FileName($0)) }
        for (rendition, path) in zip(options.renditions, renditionPaths(for: output)) {
            // Each its own file: not the output, the report, the poster or another rendition.
            let identity = PathIdentity.of(FileName(path))
            if taken.contains(identity) {
                throw VMergeError.badOutputName(file: path, reason: "would take the place of another file of this job")
            }
            taken.append(identity)
            try OutputTarget.check(
                path, inputs: inputs, replace: renditionPolicy(rendition, output: output), kind: .video,
                folder: context.outputFolder)
        }
    }

    /// Each --rendition's file for `output`, in the job's order.
    package func renditionPaths(for output: String) -> [String] {
        options.renditions.map { $0.fileName(besideOutput: FileName(output)).escaped }
    }

    /// What the job's own video may replace: any regular file with -y; else nothing. One found
    /// with the job's key but without all its renditions passes the check as its own
    /// (`MergeContext.keepsOwnVideo`), and is then left as it is.
    var videoPolicy: ReplacePolicy {
        if options.overwrite { return .always }
        guard context.keepsOwnVideo, let jobKey else { return .never }
        return .ifVideoOfJob(jobKey)
    }

    /// The renditions found with their keys (`MergeContext.keptRenditions`), as they are: each
    /// file's size and length read back, on the job's timeline, so the report lists every file.
    func keptSummaries(for output: String, like own: OutputSummary) -> [OutputSummary] {
        context.keptRenditions.map { rendition in
            let path = rendition.fileName(besideOutput: FileName(output)).escaped
            var summary = own
            summary.path = path
            summary.rendition = rendition
            summary.renditions = []
            summary.poster = nil
            summary.madeEarlier = true
            var info = stat()
            summary.bytes = POSIX.stat(FileName(path), &info) == 0 ? Int64(info.st_size) : 0
            // Its length as it reads back (a kept file is of this job's timeline: its frames are
            // the own picture's).
            if let clip = try? Probe.clip(at: path).0 { summary.durationMicros = clip.durationMicros }
            summary.faststart = MP4Layout.isFaststart(path)
            summary.truncation = nil
            return summary
        }
    }

    /// The key each file of the job records, from the job's: its own video the job's, each
    /// rendition its own (`JobKey.rendition`), so adding a rendition leaves the others' keys.
    func pictureKeys(_ key: String?, output: String) -> [String?] {
        [key]
            + options.renditions.map { rendition in
                key.map { JobKey.rendition($0, rendition, output: FileName(output)) }
            }
    }

    /// What a rendition may replace: any regular file with -y; else only this job's own
    /// rendition (by its key), left by a run killed before its video or found without its video's
    /// other renditions.
    func renditionPolicy(_ rendition: Rendition, output: String) -> ReplacePolicy {
        guard !options.overwrite else { return .always }
        return jobKey.map { .ifVideoOfJob(JobKey.rendition($0, rendition, output: FileName(output))) } ?? .never
    }

    /// A temporary file for each rendition in `folder`, each a member of `set` whose name follows
    /// the video's (watch may publish it under another).
    func renditionTargets(
        for output: String, inputs: [String], in folder: OutputFolder, set: inout PublishSet
    ) throws -> [OutputTarget] {
        var targets: [OutputTarget] = []
        for (rendition, path) in zip(options.renditions, renditionPaths(for: output)) {
            let made = try OutputTarget(
                path: path, inputs: inputs, replace: renditionPolicy(rendition, output: output),
                folder: context.outputFolder,
                tag: temporaryTag, in: folder)
            targets.append(made)
            set.addRendition(made.temporary, replace: renditionPolicy(rendition, output: output)) { video in
                rendition.fileName(besideOutput: FileName(video)).escaped
            }
        }
        return targets
    }

    /// What was written to each rendition's file (`targets` and `names`: the job's own first).
    func renditionSummaries(
        _ writer: Writer, _ targets: [OutputTarget], _ names: [String], _ plan: MergePlan
    ) -> [OutputSummary] {
        options.renditions.enumerated().map { index, rendition in
            let (made, file) = (writer.pictures[index + 1], targets[index + 1])
            var summary = OutputSummary(
                path: names[index + 1], bytes: file.temporary.size,
                durationMicros: plan.timeline.micros(ofFrame: made.framesWritten), videoFrames: made.framesWritten,
                audioSamples: made.samplesWritten, faststart: MP4Layout.isFaststart(file.temporary.descriptor),
                truncation: made.isTruncated ? .maxSize : plan.isCutByMaxDuration ? .maxDuration : nil)
            summary.rendition = rendition
            return summary
        }
    }
}
