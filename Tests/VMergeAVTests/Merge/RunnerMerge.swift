import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// Merges as the product does, through the job runner (`vmerge IN... -o OUTPUT` with `options`),
/// for tests of the FFmpeg layer that need a published file: the result, or the error that
/// stopped it. The output records no job key unless `keyed`.
func runnerMerge(
    _ inputs: [JobInput], output: String, options: MergeOptions, hooks: MergeHooks = MergeHooks(), keyed: Bool = false
) throws -> MergeResult {
    var job = Job(name: "test", inputs: inputs.map(\.path.escaped), output: FileName(output), options: options)
    job.inputs = inputs
    let door = JobRunner.Door.merge(recordsKey: keyed, remakesDone: options.overwrite, report: nil)
    let outcome = JobRunner(door, context: MergeContext(hooks: hooks), diagnostics: .silent).run(job)
    switch outcome.end {
    case let .published(publication): return publication.result
    default: throw outcome.end.failure?.error ?? VMergeError.io(file: output, message: outcome.summary(output: output))
    }
}
