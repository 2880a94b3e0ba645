import Foundation
import VMergeAV
import VMergeCore

/// The job a claim holds, read by the rules every job file follows (`JobFile`): the claim
/// folder's videos in natural order, or what its job.json says; the output named after the job
/// in OUTBOX. Everything is read inside the claim folder (or an --allow-inputs folder) without
/// following links: a producer's job reads only the producer's files.
enum WatchJob {
    static func make(_ claim: Claim, settings: WatchSettings) throws -> Job {
        guard let folder = claim.folderFD else {
            throw VMergeError.invalidInput(
                file: claim.name, reason: "is a symbolic link or a file, not a job folder; it was not read")
        }
        let confinement = InputConfinement(root: claim.folder, allowed: settings.allowedInputs, rootFolder: folder)
        var inputs = [JobInput(claim.folder)]
        var (baseName, suffix) = (
            claim.kind == .file ? FileName(claim.name).deletingExtension.escaped : claim.name, ".mp4"
        )
        var jobSettings = settings.settings
        var events: (notify: [String], metadata: JSON?) = ([], nil)
        if claim.kind == .folder,
            let described = try jobFile(of: claim, in: folder, confinement: confinement, settings: settings)
        {
            if !described.inputs.isEmpty {
                inputs = try described.inputs.map { try located($0, in: claim, confinement: confinement) }
            }
            if !described.output.bytes.isEmpty { (baseName, suffix) = try outputName(described.output.escaped) }
            jobSettings = described.settings
            events = (described.notify, described.metadata)
        }
        let options = jobSettings.merge
        // The key names this claim too: only the claim's own earlier attempt (a worker that died
        // after publishing) counts as done, never an output another producer's job made with the
        // same names, sizes and times.
        // Expanded here once (the key needs the files); the runner then gets the files themselves.
        // If expanding fails, the runner expands again and fails the job with the reason.
        let named = inputs
        if let files = try? InputList.expand(inputs, order: .none, confinedTo: confinement) { inputs = files }
        let key = JobKey.make(inputs: inputs, root: claim.folder, options: options, salt: claim.id)
        var job = Job(
            name: claim.name, inputs: inputs,
            output: FileName(
                freeOutputName(
                    baseName, suffix: suffix, key: key,
                    names: JobKey.names(inputs: named, root: claim.folder, options: options, salt: claim.id),
                    present: Set(inputs.compactMap { JobTag.who(ofFileAt: $0.path) }),
                    outbox: settings.outbox, poster: options.posterPath(forOutput:))),
            settings: jobSettings)
        job.confinement = confinement
        job.outputFolder = settings.outbox
        job.keyRoot = claim.folder
        // Named as the producer named them: a file gone from the claim since does not change them.
        job.namesInputs = named
        job.keySalt = claim.id
        (job.notify, job.metadata) = events
        job.alternativeOutputs = AlternativeOutputs(folder: settings.outbox, stem: baseName, ending: suffix)
        return job
    }

    /// A job.json input, found in the claim folder (or an --allow-inputs folder).
    private static func located(_ input: JobInput, in claim: Claim, confinement: InputConfinement) throws -> JobInput {
        let path = input.path
        // Never read as a local file called "s3:", and never fetched: a watch job names files in
        // its own folder only.
        if RemoteName.looksRemote(path.escaped) {
            throw VMergeError.invalidInput(
                file: RemoteName.shown(path.escaped), reason: "a watch job reads files in its own folder only, not URLs"
            )
        }
        let full = path.isAbsolute ? path : FileName(claim.folder).appending(path)
        // Said now, by name; the reads themselves are confined again when opened.
        if case let .failure(error) = confinement.locate(full.escaped) {
            throw VMergeError.invalidInput(file: path.escaped, reason: error.reason)
        }
        return JobInput(full, edit: input.edit)
    }

    /// The claim folder's job.json, read confined to it and by the job-file rules over the
    /// run-wide settings; nil when there is none.
    private static func jobFile(
        of claim: Claim, in folder: FileDescriptor, confinement: InputConfinement, settings: WatchSettings
    ) throws -> Job? {
        guard SafeFile.kind(of: "job.json", in: folder) != .missing else { return nil }
        do {
            let file = try SafeFile.openForReading(claim.folder + "/job.json", confinedTo: confinement)
            let data = try SafeFile.read(file, name: "job.json", limit: JobFile.maxJobFileBytes)
            let job = try JobFile.decode(
                JobFile.object(from: data), over: settings.settings, inputsRequired: false, outputRequired: false)
            // Events are signed with the watcher's secret: a producer sends them only to the
            // receivers the operator lists, never to another's with metadata of its choosing.
            if !job.notify.isEmpty && settings.notifySecret == nil {
                throw JobOptionError("'notify' needs the watcher's --notify-secret-file (events are always signed)")
            }
            if let url = settings.remoteAccess.firstUnlisted(job.notify) {
                throw JobOptionError(
                    "'notify' \(RemoteName.shown(url)): events go only to receivers under the watcher's --allow-remote")
            }
            return job
        } catch let error as JobOptionError {
            throw VMergeError.invalidInput(file: "job.json", reason: error.description)
        } catch let VMergeError.invalidInput(_, reason) {
            throw VMergeError.invalidInput(file: "job.json", reason: reason)
        }
    }

    /// job.json's "output": a plain file name with a container's extension, as (stem, ".ext"),
    /// the extension as given. Short enough for every name derived from it to fit a folder entry
    /// (255 bytes): a taken name's "-1000" and the report's ".json".
    private static func outputName(_ output: String) throws -> (String, String) {
        let stem = FileName(output).deletingExtension.escaped
        guard !stem.isEmpty, !stem.hasPrefix("."), !output.contains("/"), OutputContainer(path: output) != nil
        else {
            throw VMergeError.invalidInput(
                file: "job.json",
                reason: "'output' must be a file name ending in \(OutputContainer.accepted), such as trip.mp4")
        }
        let length = FileName.bytes(of: output).count
        guard length <= maxOutputNameBytes else {
            throw VMergeError.invalidInput(
                file: "job.json",
                reason:
                    "'output' is \(length) bytes long; at most \(maxOutputNameBytes), so that the names made from it "
                    + "(a taken name's -2 to -1000, the report's .json) fit the file system's 255")
        }
        return (stem, "." + FileName(output).pathExtension)
    }

    /// 255 less "-1000" and ".json".
    static let maxOutputNameBytes = 255 - 5 - 5

    /// "<name>.mp4" in OUTBOX, or "<name>-2.mp4"... when the name, its report's name or its
    /// poster's name (with --poster) holds anything but this job's own (or, for the report, vmerge's) (another job's, a file someone put there, a
    /// FIFO or a link); an output or poster of this very job (a worker died before moving its
    /// sources, or between publishing the poster and the video) is reused.
    static func freeOutputName(
        _ base: String, suffix: String = ".mp4", key: String, names: String? = nil, present: Set<String> = [],
        outbox: String, poster: (String) -> String? = { _ in nil }
    ) -> String {
        func ours(_ candidate: String) -> Bool {
            // Another user's file is never this job's, whatever tag it carries.
            guard OutputOnDisk.isOurs(candidate), let tag = Probe.recordedJobTag(at: candidate) else { return false }
            if tag.key == key { return true }
            // This claim's own output (the names carry the claim's id) holding a file gone from the
            // claim since: the job is done (the runner says so), never made again beside it.
            guard let names, tag.names == names, let files = tag.files else { return false }
            return files.contains { $0 != "-" && !present.contains(JobTag.who($0)) }
        }
        func taken(_ candidate: String) -> Bool {
            let video = FileKind.at(FileName(candidate)) != .missing && !ours(candidate)
            // Its report ("<name>.mp4.json") may only replace an earlier vmerge report.
            let report =
                (try? SafeFile.checkTarget(candidate + ".json", replace: .ifStartsWith(RunReport.signatures))) == nil
            guard !video, !report, let picture = poster(candidate) else { return video || report }
            return FileKind.at(FileName(picture)) != .missing && PosterKey.key(of: picture) != key
        }
        let first = FileName.joined(outbox, base + suffix)
        // As many as publishing tries (a poster name without {name}, an unwritable OUTBOX: every
        // name is taken; the job then fails on the first, saying why).
        for n in 1...1000 {
            let candidate = n == 1 ? first : FileName.joined(outbox, base + "-\(n)" + suffix)
            if !taken(candidate) { return candidate }
        }
        return first
    }

    /// Output-side problems (write errors, a name taken meanwhile) may pass; a bad input never will.
    static func isTransient(_ error: VMergeError, output: String, inputs: [FileName] = []) -> Bool {
        switch error {
        // Another worker published under the same name meanwhile ("trip.mov" and "trip/" both
        // make trip.mp4): the retry picks the next free name.
        case .outputExists: return true
        default: return error.isOnOutputSide(of: output, inputs: inputs)
        }
    }
}
