import Foundation

/// What a finished merge produced.
package struct MergeResult: Sendable {
    package var plan: MergePlan
    package var output: OutputSummary
    package var wallSeconds: Double
}

/// A merge written under temporary names (the video, with --poster its poster), not yet
/// published: the video is synced as the set is published. The encoder makes it and hands it up;
/// whoever runs the job decides what goes with it (its report) and whether it is published at
/// all; one dropped, or freed unpublished, leaves no file behind (see `TemporaryFile`).
package final class EncodedOutput {
    /// The plan as encoded: with what was measured on the way (loudness, decoding counts).
    package let plan: MergePlan
    /// The output as it will be published under its own name.
    package let summary: OutputSummary
    private var set: PublishSet
    private let clock: Stopwatch

    package init(plan: MergePlan, summary: OutputSummary, set: PublishSet, clock: Stopwatch) {
        self.plan = plan
        self.summary = summary
        self.set = set
        self.clock = clock
    }

    /// The run's result as it will read once published under the output's own name.
    package var result: MergeResult { MergeResult(plan: plan, output: summary, wallSeconds: clock.seconds) }

    /// Adds a file (written and synced under its temporary name) published with the video,
    /// before it, replacing only what `replace` allows.
    package func add(_ file: TemporaryFile, replace: ReplacePolicy) {
        set.add(file, replace: replace)
    }

    /// Publishes the set (see `PublishSet`): under the output's name, or if that was taken while it
    /// was written and `alternative` names others (watch: n = 2, 3... -> "<name>-n.mp4"), the
    /// first whose names are all free. A failure removes every temporary file.
    package func publish(overwrite: Bool, alternative: (@Sendable (Int) -> String)? = nil) throws -> MergeResult {
        do {
            try set.publish(overwrite: overwrite, alternative: alternative)
        } catch {
            set.discard()
            throw (error as? VMergeError)?.renamingFile(from: set.video.temporaryPath, to: summary.path) ?? error
        }
        var summary = self.summary
        summary.path = set.video.publishedPath
        summary.bytes = set.video.committedSize
        // A kept video's poster is where it was (see `PublishSet.keepsVideo`).
        summary.poster = set.posterPath ?? (set.keepsVideo ? summary.poster : nil)
        for (index, path) in set.renditionPaths.enumerated() where index < summary.renditions.count {
            summary.renditions[index].path = path
        }
        return MergeResult(plan: plan, output: summary, wallSeconds: clock.seconds)
    }

    /// Removes every temporary file of the set (each also goes when it is freed unpublished).
    package func discard() { set.discard() }
}
