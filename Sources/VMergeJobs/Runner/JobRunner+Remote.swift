import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// Where the runner meets object storage and https: the registry of a job's remote inputs, the
/// object its output goes to, and the upload that is that output's publication.
extension JobRunner {
    /// The registry a job's remote inputs are read through, when it may name any.
    func remoteInputs(for job: Job) -> RemoteInputs? {
        RemoteInputs.anyRemote(job.inputs) || job.inputsFrom != nil ? RemoteInputs(connector: connector) : nil
    }

    /// The object the output goes to, when it is named by a URL; refused where that cannot be kept
    /// to (a watch job writes in its own outbox).
    func remoteOutput(of job: Job) throws -> RemoteOutput? {
        let output = job.output.escaped
        let remote = RemoteName.looksRemote(output)
        guard remote else { return nil }
        guard case let .s3(address)? = RemoteName(output), !address.isPrefix else {
            throw VMergeError.badOutputName(
                file: RemoteName.shown(output), reason: "an output goes to s3://bucket/key.mp4 or a local path")
        }
        // The renditions go beside it, each its own object the job must be allowed to write.
        for name in [job.output] + job.options.renditions.map({ $0.fileName(besideOutput: job.output) }) {
            guard case let .s3(object)? = RemoteName(name.escaped), !object.isPrefix else {
                throw VMergeError.badOutputName(
                    file: RemoteName.shown(name.escaped), reason: "is not a name an object can have")
            }
            if let problem = job.remoteAccess.problem(with: .s3(object)) {
                throw VMergeError.badOutputName(file: object.description, reason: problem)
            }
        }
        // A job held to one folder (a watch job's outbox, an API job's --allow-outputs) writes there.
        if let folder = job.outputFolder {
            throw VMergeError.badOutputName(
                file: output, reason: "this job writes in \(folder) only, not to a bucket")
        }
        return try RemoteOutput(address, connector: connector)
    }

    /// The objects uploaded beside the video, in their order (its renditions, then its poster),
    /// each with the key it records (`key`: the job's) and its file in `remote`'s staging folder:
    /// the one list the look before the job, the done check and the upload go by.
    func companions(of job: Job, key: String?, in remote: RemoteOutput) -> [RemoteOutput.Companion] {
        var companions: [RemoteOutput.Companion] = []
        for rendition in job.options.renditions {
            let name = rendition.fileName(besideOutput: job.output).escaped
            if case let .s3(address)? = RemoteName(name) {
                companions.append(
                    .init(
                        staged: remote.staged(name), address: address,
                        key: key.map { JobKey.rendition($0, rendition, output: job.output) }, isVideo: true))
            }
        }
        if let poster = job.options.posterPath(forOutput: job.output.escaped),
            case let .s3(address)? = RemoteName(poster)
        {
            companions.append(.init(staged: remote.staged(poster), address: address, key: key, isVideo: false))
        }
        return companions
    }

    /// Whether the output already holds this very job: on disk its tag, in a bucket the key the
    /// object was uploaded with; and each rendition its own key, beside it.
    func holdsOutput(_ job: Job, _ work: JobWork, key: String) -> Bool {
        guard let remote = work.remoteOutput else {
            return OutputOnDisk.holds(job.output.escaped, key: key) && holdsRenditions(job, key: key)
        }
        guard (try? remote.recordedKey()) == key else { return false }
        return companions(of: job, key: key, in: remote).filter(\.isVideo).allSatisfy {
            RemoteOutput.recordedJob(at: $0.address, connector: connector)?.key == $0.key
        }
    }

    /// Uploads the set published in the staging folder: the report (merge --report to a bucket),
    /// the renditions and the poster (when one was made), then the video. Each rendition's object
    /// records its own key, as its file does on disk. `ownVideo`: the job checks whether it is
    /// done, so a video object recording its key is its own (found without a rendition) to replace.
    func upload(
        _ result: MergeResult, to remote: RemoteOutput, _ job: Job, key: String?, names: String?, ownVideo: Bool
    ) throws -> MergeResult {
        let companions = companions(of: job, key: key, in: remote).filter { $0.isVideo || result.output.poster != nil }
        // The report first: a run leaves the old pair or the new one, and a killed run a report
        // whose video is not there rather than a video without its report.
        try reportTarget?.uploadJoined()
        var uploaded = result
        uploaded.output.bytes = try remote.publish(
            video: remote.staged(result.output.path), companions: companions, jobKey: key,
            jobNames: job.deleteSources ? names : nil, overwrite: job.options.overwrite, ownVideo: ownVideo)
        return uploaded
    }

    /// The object a run with --delete-sources uploaded from these very names, whose inputs are not
    /// the same now (that run deleted some, or they changed): done, never made again from what is
    /// left, not even with -y (the object may be the only copy of what was deleted).
    func madeEarlierFromObjectsGoneSince(_ job: Job, _ resolved: ResolvedJob) -> Bool {
        guard case let .s3(address)? = RemoteName(job.output.escaped),
            let recorded = RemoteOutput.recordedJob(at: address, connector: connector),
            recorded.names == resolved.names
        else { return false }
        if let inputs = try? resolved.inputs.get() {
            let key = JobKey.make(
                inputs: inputs, root: job.keyRoot, options: job.options, salt: job.keySalt, sources: resolved.sources)
            guard recorded.key != key else { return false }
        }
        diagnostics(
            Diagnostic(
                .note, file: address.description,
                "made earlier by a run with --delete-sources from these inputs, which are not the same now; it may be "
                    + "the only copy of what they held, so it is not made again (delete the object to make it from "
                    + "what is left)"))
        return true
    }
}
