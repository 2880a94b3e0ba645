import Foundation
import VMergeAV
import VMergeCore

/// A keyed job's renditions found on disk: each file carries its own key (`JobKey.rendition`), so
/// a job is done only when every one is there, and one whose video is there makes only the rest.
extension JobRunner {
    /// Whether every rendition of the job is beside its output, whole, carrying its own key.
    func holdsRenditions(_ job: Job, key: String) -> Bool {
        job.options.renditions.allSatisfy { holdsRendition($0, of: job, key: key) }
    }

    /// Whether `rendition` of the job is beside its output, whole, carrying its own key.
    func holdsRendition(_ rendition: Rendition, of job: Job, key: String) -> Bool {
        OutputOnDisk.holds(
            rendition.fileName(besideOutput: job.output).escaped,
            key: JobKey.rendition(key, rendition, output: job.output))
    }

    /// For a job whose video is there with its key: true when every rendition is too (done).
    /// Else `merger` makes only the renditions that are not there, and the files there (its
    /// video, its poster, its other renditions) are left as they are (`MergeContext.keepsOwnVideo`).
    func keepsMadeFiles(of job: Job, key: String, merger: inout Merger) -> Bool {
        let missing = job.options.renditions.filter { !holdsRendition($0, of: job, key: key) }
        guard !missing.isEmpty else { return true }
        merger.context.keepsOwnVideo = true
        merger.context.keptRenditions = job.options.renditions.filter { !missing.contains($0) }
        merger.options.renditions = missing
        let names = missing.map { VisibleText.of($0.fileName(besideOutput: job.output).lastComponent.escaped) }
        diagnostics(
            Diagnostic(
                .note, file: job.output.escaped,
                "made earlier; making the rendition\(names.count == 1 ? "" : "s") not there: "
                    + names.joined(separator: ", ")))
        return false
    }
}
