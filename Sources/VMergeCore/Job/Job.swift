import Foundation

/// One merge: inputs, one output, its settings, how to run it and what identifies it. The one
/// shape of a job: the command line, a batch's job list, a watch job's job.json, the queue's spec
/// and the Swift API all decode into it (`JobFile`), and the queue encodes from it (`JobSpec`).
/// `JobRunner` runs it the same way whoever asked.
package struct Job: Sendable, Equatable {
    /// A short name for logs and reports (a batch folder's name, a watch job's name).
    package var name: String
    /// Files or folders, as named (folders expand in natural order), each with what it asks of
    /// its clip (a trim, a chapter title).
    package var inputs: [JobInput]
    /// A file listing more inputs, or standard input.
    package var inputsFrom: Location?
    package var order: InputOrder = .none
    package var output: FileName
    /// What the option rows set: the merge options and --min-free.
    package var settings: JobSettings

    /// The name of a job that was given none: its output's file name without the extension, as
    /// a folder's job is named by its subfolder (`merged/trip.mp4` is job `trip`).
    package static func name(ofOutput output: FileName) -> String { output.stem.escaped }

    // How to run it.
    package var dryRun = false
    /// --delete-sources (merge and batch; watch deletes from its claim folder itself).
    package var deleteSources = false

    // What identifies it, and where it may read and write (batch, watch, the queue).
    /// Where inputs are named from in the job key: paths are taken relative to it, so a watch
    /// job keeps its key when its folder moves into .processing. nil: absolute paths.
    package var keyRoot: String?
    /// Also in the job key: a watch claim's id, so only that claim's own output counts as done.
    package var keySalt: String?
    /// The inputs as the job's producer named them, for the tag's names (watch: the claim folder,
    /// not the files it held; see `JobKey.names`); nil: `inputs`.
    package var namesInputs: [JobInput]?
    /// Where inputs may be read from (a watch job: its own folder); nil: anywhere.
    package var confinement: InputConfinement?
    /// The only folder its files (video, poster, report) may be published in (a watch job: OUTBOX),
    /// enforced where they are written; nil: where the job names them.
    package var outputFolder: String?
    /// Other names for the output, for when its name is taken while the job runs (watch).
    package var alternativeOutputs: AlternativeOutputs?
    /// Which objects and https resources the job may name (the door decides: see `RemoteAccess`).
    package var remoteAccess = RemoteAccess.commandLine
    /// Where this job's events go besides the door's own (a job list's, a queue spec's or an API
    /// body's `notify`: https URLs).
    package var notify: [String] = []
    /// What its caller gave with it, given back in its events (`metadata`: a JSON object).
    package var metadata: JSON?

    package init(name: String, inputs: [JobInput], output: FileName, settings: JobSettings = JobSettings()) {
        self.name = name
        self.inputs = inputs
        self.output = output
        self.settings = settings
    }

    /// Inputs without edits, with these merge options.
    package init(name: String, inputs: [String], output: FileName, options: MergeOptions) {
        var settings = JobSettings()
        settings.merge = options
        self.init(name: name, inputs: inputs.map { JobInput($0) }, output: output, settings: settings)
    }

    /// Every file the job publishes beside its output, each with what it is: the video, the
    /// poster, each rendition. The one list each door checks a job's names against (not an input,
    /// not another job's, in the folder it may write in).
    package var publishedFiles: [(name: FileName, role: String)] {
        var files = [(output, "output")]
        if let poster = options.posterPath(forOutput: output.escaped) { files.append((FileName(poster), "poster")) }
        for rendition in options.renditions {
            files.append((rendition.fileName(besideOutput: output), "\(rendition.name) rendition"))
        }
        return files
    }

    /// The merge options (`settings.merge`).
    package var options: MergeOptions {
        get { settings.merge }
        set { settings.merge = newValue }
    }

    /// Free space the output folder must have (`settings.minFree`); nil: 1 MiB plus an estimate
    /// of the output.
    package var minFree: Int64? {
        get { settings.minFree }
        set { settings.minFree = newValue }
    }

    /// The inputs' paths, as named.
    package var inputPaths: [FileName] { inputs.map(\.path) }
}

/// "<folder>/<stem>-<n><ending>" for n = 2, 3...: where a watch job's output goes when its name
/// is taken while it runs.
package struct AlternativeOutputs: Sendable, Equatable {
    package var folder: String
    package var stem: String
    /// The extension with its dot (".mp4").
    package var ending: String

    package init(folder: String, stem: String, ending: String) {
        (self.folder, self.stem, self.ending) = (folder, stem, ending)
    }

    package func name(_ n: Int) -> String { folder + "/" + stem + "-\(n)" + ending }
}

/// A job's identity: a SHA-256 of its inputs' names, sizes and modification times and of every
/// option that shapes the output. Recorded in the output, it tells a finished job (same key) from
/// one whose inputs or options changed since.
package enum JobKey {
    /// Written into the output's "comment" metadata as "vmerge-job <key>".
    package static let tagPrefix = "vmerge-job "

    package static func make(inputs: [String], root: String?, options: MergeOptions, salt: String? = nil) -> String {
        make(inputs: inputs.map { JobInput($0) }, root: root, options: options, salt: salt)
    }

    /// A trim or a title is part of the key; an input without them keys as it always has.
    package static func make(
        inputs: [JobInput], root: String?, options: MergeOptions, salt: String? = nil,
        sources: (any InputSources)? = nil
    ) -> String {
        make(inputs: inputs, root: root, options: options, salt: salt, fileState: true, sources: sources)
    }

    /// The inputs' names (and edits) alone, without the files' state or the options (`names=` in
    /// the output's tag): still the same once --delete-sources has deleted some inputs, so a
    /// re-run knows the job as done, whatever options it is given.
    package static func names(inputs: [JobInput], root: String?, options: MergeOptions, salt: String? = nil) -> String {
        String(make(inputs: inputs, root: root, options: options, salt: salt, fileState: false).prefix(24))
    }

    private static func make(
        inputs: [JobInput], root: String?, options: MergeOptions, salt: String?, fileState: Bool,
        sources: (any InputSources)? = nil
    ) -> String {
        var text = fileState ? "vmerge job key v2\n" : "vmerge job names v1\n"
        if let salt { text += "claim \(salt)\n" }
        for input in inputs {
            guard fileState else {
                text += "\(name(input.path.escaped, root: root))\(input.edit.keyText)\n"
                continue
            }
            // A remote object keys by its size and tag (ETag), as a file by its size and time.
            if let state = sources?.keyState(named: input.path.escaped) {
                text += "\(name(input.path.escaped, root: root))\t\(state)\(input.edit.keyText)\n"
                continue
            }
            var info = stat()
            let found = POSIX.stat(input.path, &info) == 0
            let mtime = found ? modificationNanos(info) : 0
            text +=
                "\(name(input.path.escaped, root: root))\t\(found ? Int64(info.st_size) : -1)\t\(mtime)\(input.edit.keyText)\n"
        }
        // The names alone: whatever the options, an output made from these names is the only copy
        // of what --delete-sources took since; never redone from what is left.
        guard fileState else { return SHA256.hex(text) }
        // Every option that shapes the output, from the one option table.
        var settings = JobSettings()
        settings.merge = options
        text += JobOption.all.filter(\.keyed).compactMap { option in
            option.recordedValue(in: settings).map { "\(option.name)=\($0)" }
        }.joined(separator: " ")
        text += " rate=\(options.sampleRate) channels=\(options.channels)\n"

        return SHA256.hex(text)
    }

    /// The key a rendition's file records: the job's (which covers the job's own picture, not its
    /// renditions) and everything that shapes that file. Adding a rendition to a job leaves its
    /// video's key and each other rendition's as they were.
    /// It names the job's output too (its name: the rendition lies in its folder), so a job that
    /// differs only in its output does not take another's rendition for its own.
    package static func rendition(_ key: String, _ rendition: Rendition, output: FileName) -> String {
        SHA256.hex("vmerge rendition key v1\n\(key)\n\(output.lastComponent.escaped)\n\(rendition.keyText)\n")
    }

    private static func name(_ path: String, root: String?) -> String {
        // A URL names the same object from any folder; an object by its address as S3 reads it
        // (`s3://b//in/` is `s3://b/in/`), so another spelling is not another job.
        if RemoteName.looksRemote(path) { return RemoteName.canonical(path) }
        let absolute = absolutePath(path)
        guard let root else { return absolute }
        let base = absolutePath(root).hasSuffix("/") ? absolutePath(root) : absolutePath(root) + "/"
        return absolute.hasPrefix(base) ? String(absolute.dropFirst(base.count)) : absolute
    }
}

/// What a keyed output records about the job that made it, in its "comment" tag:
/// "vmerge-job <key> names=<key without file state> files=<id>,<id>!,...": per input, in order, a
/// short hash of the very file it read (device, inode, size, times; "-" when none was read), "!"
/// after it when corrupt packets of it were concealed, "~" when the output holds only part of it
/// or none (trimmed, cut, dropped). --delete-sources on a job found done
/// (a re-run, a watch job recovered after a crash) deletes only the files the tag vouches for.
package struct JobTag: Sendable, Equatable {
    package var key: String
    package var names: String?
    package var files: [String]?

    /// Past this many inputs the files are not recorded (the tag stays small); such a job found
    /// done keeps its sources.
    package static let maxFiles = 2000

    package init(key: String, names: String? = nil, files: [String]? = nil) {
        self.key = key
        self.names = names
        self.files = files.flatMap { $0.count <= JobTag.maxFiles ? $0 : nil }
    }

    package init?(parsing text: String) {
        guard text.hasPrefix(JobKey.tagPrefix) else { return nil }
        let fields = text.dropFirst(JobKey.tagPrefix.count).split(separator: " ").map(String.init)
        guard let key = fields.first, !key.isEmpty else { return nil }
        self.key = key
        for field in fields.dropFirst() {
            if field.hasPrefix("names=") { names = String(field.dropFirst(6)) }
            if field.hasPrefix("files=") { files = field.dropFirst(6).split(separator: ",").map(String.init) }
        }
    }

    package var text: String {
        var text = JobKey.tagPrefix + key
        if let names { text += " names=" + names }
        if let files { text += " files=" + files.joined(separator: ",") }
        return text
    }

    /// The short hash a file is recorded by ("-": no file): which file it is (device, inode), a
    /// dot, and in what state (size, times).
    package static func file(_ id: FileID?) -> String {
        guard let id else { return "-" }
        return String(SHA256.hex("\(id.device):\(id.inode)").prefix(8)) + "."
            + String(SHA256.hex("\(id.size):\(id.modified):\(id.changed)").prefix(8))
    }

    /// An input as the tag records it: a file by `file(_:)`; an object or https resource (named in
    /// `sources`) by its name, a dot, and its size and tag, so a later run can tell it gone or
    /// replaced as it tells a file.
    package static func file(of path: String, id: FileID?, sources: (any InputSources)?) -> String {
        guard let state = sources?.keyState(named: path) else { return file(id) }
        return String(SHA256.hex("remote:" + path).prefix(8)) + "." + String(SHA256.hex(state).prefix(8))
    }

    /// Which file or object an input names now, as the tag records it (nil: none, or an object
    /// that cannot be read).
    package static func who(ofInput path: FileName, sources: (any InputSources)?) -> String? {
        if let state = sources?.keyState(named: path.escaped) {
            return state.hasPrefix("-1\t") ? nil : who(file(of: path.escaped, id: nil, sources: sources))
        }
        return who(ofFileAt: path)
    }

    /// Which file `path` holds now, as the tag records it (nil: none).
    package static func who(ofFileAt path: FileName) -> String? {
        var info = stat()
        return POSIX.stat(path, &info) == 0 ? who(file(FileID(info))) : nil
    }

    /// The part of a recorded file that says which file it is (see `file`).
    package static func who(_ recorded: String) -> String {
        String(recorded.split(separator: ".", maxSplits: 1).first ?? "")
    }
}

/// `path` made absolute against the current directory, with "." and ".." resolved.
package func absolutePath(_ path: String) -> String {
    let full = path.hasPrefix("/") ? path : POSIX.currentDirectory().escaped + "/" + path
    return (full as NSString).standardizingPath
}

extension FileName {
    /// Made absolute against the current directory, with "." and ".." resolved (`absolutePath`).
    package var absolute: FileName { FileName(absolutePath(escaped)) }
}

/// The path with every link, "." and ".." resolved (realpath), or nil when it does not exist or
/// cannot be resolved.
package func resolvedPath(_ path: String) -> String? {
    POSIX.realpath(FileName(path))?.escaped
}
