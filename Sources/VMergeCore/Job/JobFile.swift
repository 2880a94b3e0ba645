import Foundation

/// The one reader of job files: a JSON object with "inputs", "output", "options" and "name",
/// the same rules for a job list line and a job.json. Unknown fields and options, wrong types,
/// empty lists, control characters in names and values out of range are refused; sizes and
/// counts are bounded, so a hostile file cannot eat the memory or the time.
package enum JobFile {
    /// A job.json larger than this is refused unread.
    package static let maxJobFileBytes = 1 << 20
    /// A job list (JSONL) larger than this is refused unread.
    package static let maxListBytes = 64 << 20
    /// The inputs one job may name, at every door: the command line, --inputs-from with them, a
    /// job list line, a job.json (watch, queue add and the worker read them here), the Swift API.
    /// A folder counts as one; what it holds is bounded by `InputList.maxListed`.
    package static let maxInputs = 10_000
    package static let maxJobs = 100_000
    /// Longest chapter title: players show a line of it.
    package static let maxTitleBytes = 1024

    package static let fields = ["inputs", "output", "options", "name", "notify", "metadata", "renditions"]
    /// A job's renditions at most (each a file of its own, encoded from the same pictures).
    package static let maxRenditions = 8
    /// A job's `notify` URLs at most, and its `metadata`'s largest size (as JSON text).
    package static let maxNotify = 10
    package static let maxMetadataBytes = 16 * 1024

    /// `maxInputs`, said the same way by every door.
    package static func checkInputCount(_ count: Int) throws(JobOptionError) {
        guard count <= maxInputs else {
            throw JobOptionError("too many inputs (\(count)): a job takes at most \(maxInputs)")
        }
    }

    /// Parses one JSON object of a job file (a job list's line, a job.json). A name's byte that is
    /// not UTF-8 comes escaped, as vmerge writes it (`\udbff\udfff`: U+10FF00 + the byte, see
    /// `FileName`) or as Python does (a lone `\udcff`), or as the raw byte. The characters
    /// U+10FF80-U+10FFFF written as they are (not escaped) are refused: a script that pasted a
    /// name's bytes in means those bytes, vmerge's form means one byte each, and guessing wrong
    /// names another file.
    package static func object(from data: Data) throws(JobOptionError) -> [String: Any] {
        if let value = rawEscapeCharacter(in: data) {
            let byte = String(format: "%02x", value - 0x10FF00)
            throw JobOptionError(
                "holds U+\(String(value, radix: 16, uppercase: true)) as a character, which could be a name's byte "
                    + "0x\(byte) or that character: write the byte escaped, \\udbff\\u\(String(format: "%04x", 0xDC00 + (value & 0x3FF))) "
                    + "(as vmerge and 'jq -a' write it) or \\udc\(byte) (as Python does)")
        }
        return try object(fromStored: FileName.decodeText(data))
    }

    /// The first of U+10FF80-U+10FFFF written raw in `data` (UTF-8 F4 8F BE|BF xx), or nil.
    static func rawEscapeCharacter(in data: Data) -> UInt32? {
        let bytes = [UInt8](data)
        var i = 0
        while i + 3 < bytes.count {
            if bytes[i] == 0xF4, bytes[i + 1] == 0x8F, bytes[i + 2] == 0xBE || bytes[i + 2] == 0xBF,
                (0x80...0xBF).contains(bytes[i + 3])
            {
                return 0x10F000 | UInt32(bytes[i + 2] & 0x3F) << 6 | UInt32(bytes[i + 3] & 0x3F)
            }
            i += 1
        }
        return nil
    }

    /// Parses one JSON object vmerge itself stored (a queue spec, which the database hands back
    /// with every escape turned into its character): U+10FF80-U+10FFFF are bytes.
    package static func object(fromStored text: String) throws(JobOptionError) -> [String: Any] {
        let parsed: Any
        do {
            let text = FileName.acceptingSurrogateEscapes(inJSON: text)
            parsed = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        } catch {
            throw JobOptionError("not valid JSON")
        }
        guard let object = parsed as? [String: Any] else { throw JobOptionError("not a JSON object") }
        return object
    }

    /// Reads a job object into a job, its options over `base` (the run-wide settings).
    /// `inputsRequired`/`outputRequired`: a job list line must name both; a job.json may leave
    /// them to its folder. A field left out is empty in the job (no inputs, an empty output or
    /// name), which a given field never is. Paths are as written; the caller resolves (and, for
    /// watch, confines) them.
    package static func decode(
        _ object: [String: Any], over base: JobSettings, inputsRequired: Bool, outputRequired: Bool
    ) throws(JobOptionError) -> Job {
        for key in object.keys.sorted() where !fields.contains(key) {
            throw JobOptionError(
                "unknown field '\(key)' (expected inputs, output, options, name, notify, metadata, renditions)")
        }
        var job = Job(name: "", inputs: [], output: "", settings: base)
        if let value = object["inputs"] {
            guard let list = value as? [Any], !list.isEmpty else {
                throw JobOptionError("'inputs' must be a non-empty list of paths")
            }
            try checkInputCount(list.count)
            for item in list {
                if let path = item as? String {
                    job.inputs.append(JobInput(try checkedName(path, field: "an input")))
                } else if let object = item as? [String: Any] {
                    job.inputs.append(try input(object))
                } else {
                    throw JobOptionError("'inputs' must be a list of paths or {\"path\": ...} objects")
                }
            }
        } else if inputsRequired {
            throw JobOptionError("'inputs' must be a non-empty list of paths")
        }
        if let value = object["output"] {
            guard let path = value as? String else { throw JobOptionError("'output' must be a path") }
            job.output = FileName(try checkedName(path, field: "'output'"))
        } else if outputRequired {
            throw JobOptionError("'output' must be a path")
        }
        if let value = object["name"] {
            guard let name = value as? String else { throw JobOptionError("'name' must be a string") }
            job.name = try checkedName(name, field: "'name'")
        }
        try readEvents(object, into: &job)
        try readRenditions(object, into: &job)
        if let value = object["options"] {
            guard let options = value as? [String: Any] else { throw JobOptionError("'options' must be an object") }
            var seen: Set<String> = []
            for key in options.keys.sorted() {
                let name = key.replacingOccurrences(of: "_", with: "-")
                guard seen.insert(name).inserted else {
                    throw JobOptionError("option '\(name)' is given twice (as '\(key)' too)")
                }
                guard let option = JobOption.named(name) else {
                    let known = JobOption.all.map(\.name).joined(separator: ", ")
                    throw JobOptionError("unknown option '\(key)' (known: \(known))")
                }
                try option.apply(try text(of: options[key] as Any, for: option), to: &job.settings)
            }
            try checkLimits(job.settings, under: base)
            try job.settings.validate()
        }
        return job
    }

    /// The run's limits are ceilings its jobs cannot lift: a job (a job.json dropped in a watched
    /// inbox, a line of a job list) may make --max-pixels, --max-duration or --max-size stricter and
    /// ask for more --min-free, never the other way (the operator's `--max-pixels 100x100` is not
    /// undone by a job's 65536x65536). --max-pixels' default is such a limit too; the command
    /// line raises it for all jobs.
    static func checkLimits(_ job: JobSettings, under run: JobSettings) throws(JobOptionError) {
        func lifted(_ option: JobOption, _ what: String) -> JobOptionError {
            JobOptionError(
                "option '\(option.name)' \(option.value(in: job)) \(what) this run's \(option.value(in: run)): a job may make "
                    + "a run-wide limit stricter, not lift it")
        }
        if job.merge.maxPixels > run.merge.maxPixels { throw lifted(.maxPixels.row, "is above") }
        if let limit = run.merge.maxDuration, (job.merge.maxDuration ?? .infinity) > limit {
            throw lifted(.maxDuration.row, "is above")
        }
        if let limit = run.merge.maxSize, (job.merge.maxSize ?? .max) > limit { throw lifted(.maxSize.row, "is above") }
        if let floor = run.minFree, (job.minFree ?? 0) < floor { throw lifted(.minFree.row, "is below") }
    }

    /// An input object: `{"path": "a.mov", "start": 1.5, "end": 8, "title": "Arrival"}`, times in
    /// seconds on the clip's own timeline (or "m:ss" strings), each but "path" optional.
    static func input(_ object: [String: Any]) throws(JobOptionError) -> JobInput {
        for key in object.keys.sorted() where !JobInput.fields.contains(key) {
            throw JobOptionError("unknown field '\(key)' in an input (expected path, start, end, title)")
        }
        guard let path = object["path"] as? String else {
            throw JobOptionError("an input object must have a \"path\" string")
        }
        let checked = try checkedName(path, field: "an input")
        var edit = InputEdit()
        do throws(JobOptionError) {
            if let value = object["start"] { edit.startMicros = try InputEdit.micros(fromJSON: value, field: "start") }
            if let value = object["end"] { edit.endMicros = try InputEdit.micros(fromJSON: value, field: "end") }
            if let value = object["title"] {
                guard let title = value as? String else { throw JobOptionError("'title' must be a string") }
                guard title.utf8.count <= maxTitleBytes else {
                    throw JobOptionError("'title' is longer than \(maxTitleBytes) bytes")
                }
                edit.title = try checkedName(title, field: "'title'")
            }
            try edit.validate()
        } catch {
            throw JobOptionError("input \(checked): \(error.description)")
        }
        return JobInput(checked, edit: edit)
    }

    /// A JSON value as the option's text, if its type is the option's: a boolean for a flag, a
    /// string for words, a number or a string for numbers.
    static func text(of value: Any, for option: JobOption) throws(JobOptionError) -> String {
        let number = value as? NSNumber
        let isBoolean = number.map { type(of: $0) == type(of: NSNumber(value: true)) } ?? false
        switch option.kind {
        case .flag:
            guard let number, isBoolean else { throw JobOptionError("option '\(option.name)' must be true or false") }
            return number.boolValue ? "true" : "false"
        case .number:
            if let number, !isBoolean { return number.stringValue }
            if let text = value as? String { return try checkedName(text, field: "option '\(option.name)'") }
            throw JobOptionError("option '\(option.name)' must be a number")
        case .choice, .text, .fileName:
            guard let text = value as? String else { throw JobOptionError("option '\(option.name)' must be a string") }
            return try checkedName(text, field: "option '\(option.name)'")
        }
    }

    /// A path, name or value from a job file: not empty, not too long, and no control
    /// characters (a newline would split log lines and file names).
    package static func checkedName(_ text: String, field: String) throws(JobOptionError) -> String {
        if text.isEmpty { throw JobOptionError("\(field) is empty") }
        if let problem = FileName.lengthProblem(of: text, field: field) { throw JobOptionError(problem) }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw JobOptionError("\(field) contains a control character (a newline, a tab...)")
        }
        return text
    }
}

/// A batch's job list: one JSON object per line (see `JobFile`); blank lines and lines starting
/// with '#' are skipped.
package enum JobList {
    /// Parses a JSONL job list into its jobs, each with its line number; relative inputs are
    /// resolved against `base`, relative outputs against `outputBase`; each line's options are
    /// read over `settings`; a job without a name is named by its output's file name without its
    /// extension. Throws with
    /// the line number on the first malformed line.
    package static func parse(
        _ text: String, base: String, outputBase: String, file: String, settings: JobSettings = JobSettings()
    ) throws -> [(line: Int, job: Job)] {
        try parse(Data(text.utf8), base: base, outputBase: outputBase, file: file, settings: settings)
    }

    /// The same from the list's bytes, each line read by `JobFile.object(from:)` as it is.
    package static func parse(
        _ data: Data, base: String, outputBase: String, file: String, settings: JobSettings = JobSettings()
    ) throws -> [(line: Int, job: Job)] {
        var entries: [(line: Int, job: Job)] = []
        for (index, raw) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            var line = Data(raw)
            // Editors on Windows start UTF-8 files with a byte-order mark.
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
            let text = FileName.decodeText(line).trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty || text.hasPrefix("#") { continue }
            let fail = { (why: String) in VMergeError.invalidInput(file: file, reason: "line \(index + 1): \(why)") }
            if entries.count == JobFile.maxJobs { throw fail("more than \(JobFile.maxJobs) jobs in one list") }
            var job: Job
            do {
                job = try JobFile.decode(
                    try JobFile.object(from: line), over: settings, inputsRequired: true, outputRequired: true)
            } catch {
                throw fail(error.description)
            }
            if let problem = OutputContainer.problem(withName: job.output.escaped) {
                throw fail("output \(job.output.escaped): \(problem)")
            }
            // A list in the current folder names its files as they are written in it
            // (`../clips/x.mov`, not `./../clips/x.mov`, in messages and reports).
            let resolve = { (path: String, base: String) in
                // An object's name is whole wherever the list lies.
                path.hasPrefix("/") || base == "." || RemoteName.looksRemote(path) ? path : FileName.joined(base, path)
            }
            for index in job.inputs.indices {
                job.inputs[index].path = FileName(resolve(job.inputs[index].path.escaped, base))
            }
            job.output = FileName(resolve(job.output.escaped, outputBase))
            if job.name.isEmpty { job.name = Job.name(ofOutput: job.output) }
            entries.append((index + 1, job))
        }
        return entries
    }
}

extension JobFile {
    /// `renditions`: more files of the merge, each as `--rendition` takes it ("9x16-1080").
    static func readRenditions(_ object: [String: Any], into job: inout Job) throws(JobOptionError) {
        guard let value = object["renditions"] else { return }
        guard let specs = value as? [String], !specs.isEmpty, specs.count <= maxRenditions else {
            throw JobOptionError(
                "'renditions' must be a list of 1 to \(maxRenditions) renditions such as \"9x16-1080\"")
        }
        job.options.renditions = try specs.map { text throws(JobOptionError) in
            switch Rendition.parse(text) {
            case let .success(rendition): return rendition
            case let .failure(problem): throw JobOptionError("rendition '\(text)': \(problem)")
            }
        }
    }

    /// `notify` (https URLs the job's events go to) and `metadata` (a JSON object given back
    /// in them).
    static func readEvents(_ object: [String: Any], into job: inout Job) throws(JobOptionError) {
        if let value = object["notify"] {
            guard let urls = value as? [String], urls.count <= maxNotify,
                urls.allSatisfy({ url in
                    guard !url.contains("\u{0}"), case .https? = RemoteName(url) else { return false }
                    return true
                })
            else {
                throw JobOptionError("'notify' must be a list of at most \(maxNotify) https:// URLs")
            }
            job.notify = urls
        }
        if let value = object["metadata"] {
            guard let fields = value as? [String: Any], let metadata = JSON(parsed: fields),
                metadata.text().utf8.count <= maxMetadataBytes
            else {
                throw JobOptionError("'metadata' must be a JSON object of at most \(maxMetadataBytes / 1024) KiB")
            }
            // Given back exactly or refused: a NUL (which the database cannot keep), or a number
            // that is no 64-bit integer and that a double cannot hold exactly.
            if let problem = metadataProblem(metadata) { throw JobOptionError("'metadata' \(problem)") }
            job.metadata = metadata
        }
    }

    private static func metadataProblem(_ value: JSON) -> String? {
        switch value {
        case let .object(members):
            for (key, member) in members {
                if key.contains("\u{0}") { return "holds a NUL character" }
                if let problem = metadataProblem(member) { return problem }
            }
        case let .array(items): return items.lazy.compactMap(metadataProblem).first
        case let .string(text) where text.contains("\u{0}"): return "holds a NUL character"
        case let .number(number) where number.magnitude > 9_007_199_254_740_992:
            // Integers of 64 bits are kept as written; other numbers go through a double.
            return "holds a number that is neither a 64-bit integer nor one a double holds exactly (past 2^53): "
                + "send it as a string"
        default: break
        }
        return nil
    }
}
