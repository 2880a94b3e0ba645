import Foundation
import VMergeCore
import VMergeRemote

/// Where a batch's jobs come from: a JSONL job list, or a folder whose subfolders are jobs. One
/// reader for `vmerge batch` and `vmerge queue add`.
package enum BatchSource {
    /// Whether `path` is a folder of jobs rather than a job list.
    package static func isFolder(_ path: String) throws -> Bool {
        // A bucket's prefix is a folder of jobs: each prefix under it a job.
        if RemoteName.looksRemote(path) {
            guard case let .s3(address)? = RemoteName(path), address.isPrefix else {
                throw VMergeError.invalidInput(
                    file: RemoteName.shown(path),
                    reason: "a batch of a bucket is a prefix ending in '/' (each prefix under it a job); "
                        + "a job list is a local file")
            }
            return true
        }
        var info = stat()
        guard POSIX.stat(FileName(path), &info) == 0 else {
            throw VMergeError.io(file: path, message: "no such file or folder")
        }
        return FileKind(mode: info.st_mode) == .directory
    }

    /// The jobs of a folder (one per subfolder, into `out`, which a folder needs) or of a JSONL
    /// list (relative outputs against `out`, else the list's folder), their own options read over
    /// `settings`. Nothing is made: the caller makes `out` (`makeOutputFolder`) once it has
    /// checked the jobs. Any malformed line, and two jobs writing one file (output or poster),
    /// refuses the whole source.
    package static func jobs(from source: String, out: String?, settings: JobSettings) throws -> [Job] {
        let folder = try isFolder(source)
        if folder {
            guard let out else {
                throw VMergeError.invalidInput(file: source, reason: "a folder of jobs needs an output folder")
            }
            if case let .s3(prefix)? = RemoteName(source) {
                return try checkPosters(of: jobs(fromPrefix: prefix, out: out, settings: settings), source: source)
            }
            return try checkPosters(of: Batch.jobs(fromFolder: source, out: out, settings: settings), source: source)
        }
        let data: Data
        do {
            data = try SafeFile.read(source, limit: JobFile.maxListBytes)
        } catch let VMergeError.invalidInput(file, reason) {
            throw VMergeError.io(file: file, message: "cannot read this job list: \(reason)")
        }
        let base = FileName(source).folder.escaped
        let entries = try JobList.parse(
            data, base: base.isEmpty ? "." : base,
            outputBase: out ?? (base.isEmpty ? "." : base), file: source, settings: settings)
        // Two jobs writing one file would overwrite each other, and each re-run would redo both.
        var firstLine: [PathIdentity: Int] = [:]
        let list = PathIdentity.of(FileName(source))
        for (line, job) in entries {
            let identity = PathIdentity.of(FileName(job.output.escaped))
            if identity == list {
                throw VMergeError.invalidInput(
                    file: source, reason: "line \(line): output \(job.output.escaped) is this job list")
            }
            if let first = firstLine[identity] {
                throw VMergeError.invalidInput(
                    file: source, reason: "line \(line): output \(job.output.escaped) is also line \(first)'s")
            }
            firstLine[identity] = line
        }
        return try checkPosters(of: entries.map(\.job), source: source)
    }

    /// Each prefix directly under `prefix` (natural order, not hidden) is a job: its videos,
    /// merged into `out/<name>.mp4`, as a folder of jobs is on disk. The output prefix itself is
    /// never a job, when it sits directly under `prefix`.
    static func jobs(fromPrefix prefix: S3Address, out: String, settings: JobSettings) throws -> [Job] {
        let outPrefix = RemoteName(out.hasSuffix("/") ? out : out + "/")
        let names = InputList.naturallySorted(
            try RemoteConnector().folders(under: prefix).filter { name in
                !name.hasPrefix(".") && outPrefix != .s3(S3Address(bucket: prefix.bucket, key: prefix.key + name + "/"))
            }
        ) { $0 }
        if let bad = names.first(where: { (try? JobFile.checkedName($0, field: "name")) == nil }) {
            throw VMergeError.invalidInput(
                file: prefix.description, reason: "holds \(VisibleText.of(bad)), whose name has a control character")
        }
        let base = out.hasSuffix("/") ? out : out + "/"
        return names.map { name in
            Job(
                name: name, inputs: [JobInput(FileName(prefix.description + name + "/"))],
                output: FileName(base + name + ".mp4"), settings: settings)
        }
    }

    /// A job that names its own events' receivers (`notify`) needs the secret they are signed
    /// with: said before any job runs, not found out at its end.
    package static func checkEvents(_ jobs: [Job], source: String, signed: Bool) throws {
        guard !signed, let job = jobs.first(where: { !$0.notify.isEmpty }) else { return }
        throw VMergeError.invalidInput(
            file: source, reason: "job \(job.name): 'notify' needs --notify-secret-file (events are always signed)")
    }

    /// Makes the output folder (and its parents) the jobs write into.
    package static func makeOutputFolder(_ out: String) throws {
        // A bucket has no folders to make (and an s3:// word is never made as a local one).
        if RemoteName.looksRemote(out) {
            guard case let .s3(address)? = RemoteName(out.hasSuffix("/") ? out : out + "/"), address.isPrefix else {
                throw VMergeError.invalidInput(
                    file: RemoteName.shown(out), reason: "an output folder in a bucket is s3://bucket/prefix/")
            }
            return
        }
        guard POSIX.makeFolders(FileName(out)) else {
            throw VMergeError.io(file: out, message: "cannot create the output folder (is it a file?)")
        }
    }

    /// Two jobs writing one poster or rendition would replace each other's (with -y) or fail the
    /// second; nor may either be another job's output, nor any file a job publishes any job's input.
    private static func checkPosters(of jobs: [Job], source: String) throws -> [Job] {
        var owner: [PathIdentity: String] = [:]
        for job in jobs { owner[PathIdentity.of(FileName(job.output.escaped))] = job.name }
        for job in jobs {
            if let poster = job.options.posterPath(forOutput: job.output.escaped),
                let other = owner.updateValue(job.name, forKey: PathIdentity.of(FileName(poster)))
            {
                throw VMergeError.invalidInput(
                    file: source,
                    reason: "jobs \(other) and \(job.name) would both write \(poster); put {name} in the poster's "
                        + "name (--poster {name}.jpg) for one poster per job")
            }
            for (name, role) in job.publishedFiles where role.hasSuffix("rendition") {
                if let other = owner.updateValue(job.name, forKey: PathIdentity.of(name)) {
                    throw VMergeError.invalidInput(
                        file: source, reason: "jobs \(other) and \(job.name) would both write \(name.escaped)")
                }
            }
        }
        // Nor may one job's output or poster be another's input (with -y it would replace
        // footage that is in no output): refused before any job runs, as a merge refuses its own.
        var inputOf: [PathIdentity: String] = [:]
        for job in jobs {
            let inputs = (try? InputList.expand(job.inputs, order: .none)) ?? job.inputs
            for input in inputs {
                let identity = PathIdentity.of(input.path)
                if case .file = identity, inputOf[identity] == nil { inputOf[identity] = job.name }
            }
        }
        // Objects by their address: an object one job writes may not be another's input, nor lie
        // under an input prefix (the next listing would take it for one).
        let objectInputs = jobs.flatMap { job in
            job.inputs.compactMap { input -> (address: S3Address, job: String)? in
                guard case let .s3(address)? = RemoteName(input.path.escaped) else { return nil }
                return (address, job.name)
            }
        }
        for job in jobs {
            for (path, what) in job.publishedFiles {
                if case let .s3(written)? = RemoteName(path.escaped),
                    let reader = objectInputs.first(where: { input in
                        input.address.bucket == written.bucket
                            && (input.address == written
                                || (input.address.isPrefix && written.key.hasPrefix(input.address.key)))
                    })
                {
                    throw VMergeError.invalidInput(
                        file: source, reason: "job \(job.name)'s \(what) \(written) is an input of job \(reader.job)")
                }
                if let reader = inputOf[PathIdentity.of(path)] {
                    throw VMergeError.invalidInput(
                        file: source, reason: "job \(job.name)'s \(what) \(path.escaped) is an input of job \(reader)")
                }
            }
        }
        return jobs
    }
}
