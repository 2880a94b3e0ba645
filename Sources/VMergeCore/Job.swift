import Foundation

/// One merge: inputs, one output, options. The command line, `vmerge batch` and `vmerge watch`
/// all run jobs the same way (JobRunner).
public struct Job: Sendable {
    /// A short name for logs and reports (a batch folder's name, a watch job's name).
    public var name: String
    /// Files or folders, as named (folders expand in natural order).
    public var inputs: [String]
    /// What some of the named inputs ask (by position in `inputs`): a trim, a chapter title.
    public var edits: [Int: InputEdit] = [:]
    /// A file listing more inputs, "-" for stdin.
    public var inputsFrom: String?
    public var order: InputOrder = .none
    public var output: String
    public var options: MergeOptions
    /// Free space the output folder must have; nil: 1 MiB plus an estimate of the output.
    public var minFree: Int64?
    public var dryRun = false
    /// --delete-sources (merge and batch; watch deletes from its claim folder itself).
    public var deleteSources = false
    /// Where inputs are named from in the job key: paths are taken relative to it, so a watch
    /// job keeps its key when its folder moves into .processing. nil: absolute paths.
    public var keyRoot: String?
    /// Also in the job key: a watch claim's id, so only that claim's own output counts as done.
    public var keySalt: String?
    /// Other output names, n = 2, 3..., for when the name is taken while the job runs (watch).
    public var alternativeOutput: (@Sendable (Int) -> String)?

    public init(name: String, inputs: [String], output: String, options: MergeOptions) {
        self.name = name
        self.inputs = inputs
        self.output = output
        self.options = options
    }

    /// The named inputs with their edits.
    public var namedInputs: [JobInput] { JobInput.list(inputs, edits: edits) }

    public init(name: String, inputs: [String], output: String, settings: JobSettings) {
        self.init(name: name, inputs: inputs, output: output, options: settings.merge)
        minFree = settings.minFree
    }
}

/// A job's identity: a SHA-256 of its inputs' names, sizes and modification times and of every
/// option that shapes the output. Recorded in the output, it tells a finished job (same key) from
/// one whose inputs or options changed since.
public enum JobKey {
    /// Written into the output's "comment" metadata as "vmerge-job <key>".
    public static let tagPrefix = "vmerge-job "

    public static func make(inputs: [String], root: String?, options: MergeOptions, salt: String? = nil) -> String {
        make(inputs: inputs.map { JobInput($0) }, root: root, options: options, salt: salt)
    }

    /// A trim or a title is part of the key; an input without them keys as it always has.
    public static func make(inputs: [JobInput], root: String?, options: MergeOptions, salt: String? = nil) -> String {
        var text = "vmerge job key v2\n"
        if let salt { text += "claim \(salt)\n" }
        for input in inputs {
            var info = stat()
            let found = stat(input.path, &info) == 0
            let mtime = found ? modificationNanos(info) : 0
            text += "\(name(input.path, root: root))\t\(found ? Int64(info.st_size) : -1)\t\(mtime)\(input.edit.keyText)\n"
        }
        // Every option that shapes the output, from the one option table.
        var settings = JobSettings()
        settings.merge = options
        text += JobOption.all.filter(\.keyed).map { "\($0.name)=\($0.value(in: settings))" }.joined(separator: " ")
        text += " rate=\(options.sampleRate) channels=\(options.channels)\n"
        return SHA256.hex(text)
    }

    private static func name(_ path: String, root: String?) -> String {
        let absolute = absolutePath(path)
        guard let root else { return absolute }
        let base = absolutePath(root).hasSuffix("/") ? absolutePath(root) : absolutePath(root) + "/"
        return absolute.hasPrefix(base) ? String(absolute.dropFirst(base.count)) : absolute
    }
}

/// `path` made absolute against the current directory, with "." and ".." resolved.
public func absolutePath(_ path: String) -> String {
    let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    return (full as NSString).standardizingPath
}

/// The path with every link, "." and ".." resolved (realpath), or nil when it does not exist or
/// cannot be resolved.
public func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}
