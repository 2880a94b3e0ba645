import Foundation

/// One merge: inputs, one output, options. The command line, `vmerge batch` and `vmerge watch`
/// all run jobs the same way (JobRunner).
public struct Job: Sendable {
    /// A short name for logs and reports (a batch folder's name, a watch job's name).
    public var name: String
    /// Files or folders, as named (folders expand in natural order).
    public var inputs: [String]
    /// A file listing more inputs, "-" for stdin.
    public var inputsFrom: String?
    public var order: InputOrder = .none
    public var output: String
    public var options: MergeOptions
    /// Free space the output folder must have; nil: 1 MiB plus an estimate of the output.
    public var minFree: Int64?
    public var dryRun = false
    /// Where inputs are named from in the job key: paths are taken relative to it, so a watch
    /// job keeps its key when its folder moves into .processing. nil: absolute paths.
    public var keyRoot: String?

    public init(name: String, inputs: [String], output: String, options: MergeOptions) {
        self.name = name
        self.inputs = inputs
        self.output = output
        self.options = options
    }
}

/// A job's identity: a SHA-256 of its inputs' names, sizes and modification times and of every
/// option that shapes the output. Recorded in the output, it tells a finished job (same key) from
/// one whose inputs or options changed since.
public enum JobKey {
    /// Written into the output's "comment" metadata as "vmerge-job <key>".
    public static let tagPrefix = "vmerge-job "

    public static func make(inputs: [String], root: String?, options: MergeOptions) -> String {
        var text = "vmerge job key v1\n"
        for path in inputs {
            var info = stat()
            let found = stat(path, &info) == 0
            let mtime = found ? modificationNanos(info) : 0
            text += "\(name(path, root: root))\t\(found ? Int64(info.st_size) : -1)\t\(mtime)\n"
        }
        let o = options
        text += "min_duration=\(o.minDuration) width=\(o.width) aspect=\(o.aspect) fps=\(o.frameRate) "
        text +=
            "quality=\(o.quality.rawValue) tonemap=\(o.tonemap.rawValue) rate=\(o.sampleRate) channels=\(o.channels) "
        text += "skip_invalid=\(o.skipInvalid) max_duration=\(o.maxDuration.map { "\($0)" } ?? "-") "
        text += "max_size=\(o.maxSize.map { "\($0)" } ?? "-") strict=\(o.strict)\n"
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

/// A batch's job list: one JSON object per line, `{"inputs": [...], "output": "...",
/// "options": {"quality": "high", "min-duration": 0, ...}}`; option names as on the command line.
public enum JobList {
    public struct Entry: Sendable, Equatable {
        public var line: Int
        public var inputs: [String]
        public var output: String
        /// Command-line arguments for the options ("--quality", "high", ...).
        public var arguments: [String]
        public var name: String?
    }

    /// Parses a JSONL job list; relative inputs are resolved against `base`, relative outputs
    /// against `outputBase`. Blank lines and lines starting with '#' are skipped. Throws with the
    /// line number on the first malformed line.
    public static func parse(_ text: String, base: String, outputBase: String, file: String) throws -> [Entry] {
        var entries: [Entry] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\u{FEFF}")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            func fail(_ why: String) -> VMergeError {
                VMergeError.invalidInput(file: file, reason: "line \(index + 1): \(why)")
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw fail("not a JSON object")
            }
            for key in object.keys where !["inputs", "output", "options", "name"].contains(key) {
                throw fail("unknown field '\(key)' (expected inputs, output, options, name)")
            }
            guard let inputs = object["inputs"] as? [String], !inputs.isEmpty else {
                throw fail("'inputs' must be a non-empty list of paths")
            }
            guard let output = object["output"] as? String, !output.isEmpty else {
                throw fail("'output' must be a path")
            }
            var arguments: [String] = []
            if let options = object["options"] {
                guard let options = options as? [String: Any] else { throw fail("'options' must be an object") }
                do {
                    arguments = try JobList.arguments(from: options)
                } catch let VMergeError.invalidInput(_, reason) {
                    throw fail(reason)
                }
            }
            let resolve = { (path: String, base: String) in path.hasPrefix("/") ? path : base + "/" + path }
            entries.append(
                Entry(
                    line: index + 1, inputs: inputs.map { resolve($0, base) }, output: resolve(output, outputBase),
                    arguments: arguments,
                    name: object["name"] as? String))
        }
        return entries
    }

    /// A job's "options" object as command-line arguments: {"quality": "high", "skip-invalid":
    /// true} -> ["--quality", "high", "--skip-invalid"], so they get the command line's checks.
    public static func arguments(from options: [String: Any]) throws -> [String] {
        var arguments: [String] = []
        for key in options.keys.sorted() {
            let flag = "--" + key.replacingOccurrences(of: "_", with: "-")
            switch options[key] {
            case let value as String: arguments += [flag, value]
            case let value as NSNumber where isBoolean(value):
                if value.boolValue { arguments.append(flag) }
            case let value as NSNumber: arguments += [flag, value.stringValue]
            default:
                throw VMergeError.invalidInput(
                    file: "options", reason: "option '\(key)' must be a string, number or boolean")
            }
        }
        return arguments
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        type(of: number) == type(of: NSNumber(value: true))
    }
}
