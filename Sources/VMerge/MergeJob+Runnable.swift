import Foundation
internal import VMergeCore

extension MergeJob {
    /// Checks every value by the rules the merge applies, without reading a clip: what
    /// ``MergeSession/run()`` would refuse before any work, for a form to say at once.
    ///
    /// - Throws: only ``MergeError`` (code ``MergeError/Code-swift.struct/invalidJob``), naming
    ///   the property: `catch` gets a `MergeError` without a cast.
    public func validate() throws(MergeError) {
        _ = try runnable()
    }

    /// The job as the runner takes it. Each option property is checked and set through its
    /// option's row (`optionProperties`), so the API accepts exactly what `vmerge` accepts, as the
    /// value it is: nothing goes through text. A refusal names the property, not the option.
    func runnable() throws(MergeError) -> Job {
        let settings: JobSettings
        do throws(JobOptionError) {
            settings = try self.settings()
            try JobFile.checkInputCount(clips.count)
        } catch {
            throw MergeError(code: .invalidJob, file: nil, message: error.description)
        }
        let inputs = try clips.map { clip throws(MergeError) in try clip.runnable() }
        // The container follows the name, as on the command line: never an MP4 under another name.
        guard let outputPath = output.jobName,
            output.fileSystemPath != nil || MergeJob.isObject(outputPath)
        else { throw refusedFile(output, "an output goes to a file or an object (s3://bucket/key.mp4)") }
        if let problem = OutputContainer.problem(withName: outputPath) { throw refusedFile(output, problem) }
        guard output.fileSystemPath?.last != UInt8(ascii: "/") else {
            throw refusedFile(output, "names a folder, not a file")
        }
        if let problem = FileName.lengthProblem(of: outputPath, field: "the output") {
            throw refusedFile(output, problem)
        }
        if let reportFile {
            guard let name = reportFile.jobName, reportFile.fileSystemPath != nil || MergeJob.isObject(name) else {
                throw refusedFile(reportFile, "a report goes to a file or an object (s3://bucket/key.json)")
            }
        }
        guard !inputs.isEmpty else { throw MergeError(code: .invalidJob, file: nil, message: "the job names no clips") }
        var job = Job(name: outputPath, inputs: inputs, output: FileName(outputPath), settings: settings)
        guard (renditions?.count ?? 0) <= JobFile.maxRenditions else {
            throw MergeError(
                code: .invalidJob, file: nil, message: "a job takes at most \(JobFile.maxRenditions) renditions")
        }
        job.options.renditions = try (renditions ?? []).map { rendition throws(MergeError) in try rendition.runnable() }
        job.dryRun = isDryRun
        job.deleteSources = deletesSources
        if let allowedRemotePrefixes {
            var access = RemoteAccess(listingRequired: true)
            for prefix in allowedRemotePrefixes {
                guard let text = prefix.jobName, case let .success(name) = RemoteAccess.prefix(text) else {
                    throw refusedFile(prefix, "not an s3://bucket/prefix/ or https://host/path/ prefix")
                }
                access.allow(name)
            }
            job.remoteAccess = access
        }
        return job
    }

    /// Whether `name` is one object in a bucket (not a prefix, not an https resource).
    private static func isObject(_ name: String) -> Bool {
        if case let .s3(address)? = RemoteName(name) { return !address.isPrefix }
        return false
    }

    private func refusedFile(_ file: FileLocation, _ message: String) -> MergeError {
        MergeError(code: .invalidJob, file: file, message: message)
    }
}

extension MergeJob.Clip {
    /// The clip as the runner takes it; a refusal names the clip in ``MergeError/file``.
    func runnable() throws(MergeError) -> JobInput {
        guard let path = file.jobName, file.fileSystemPath != nil || RemoteName(path) != nil else {
            throw MergeError(
                code: .invalidJob, file: file,
                message: "not a file, an s3://bucket/key or an https:// URL vmerge can read")
        }
        var edit = InputEdit(title: title)
        do throws(JobOptionError) {
            if let start { edit.startMicros = try InputEdit.micros(seconds: start, field: "start") }
            if let end { edit.endMicros = try InputEdit.micros(seconds: end, field: "end") }
            try edit.validate()
        } catch {
            throw MergeError(code: .invalidJob, file: file, message: error.description)
        }
        // The limit every door has, in the name's bytes (see FileName.maxPathBytes).
        if let problem = FileName.lengthProblem(of: path, field: "an input") {
            throw MergeError(code: .invalidJob, file: file, message: problem)
        }
        return JobInput(path, edit: edit)
    }
}
