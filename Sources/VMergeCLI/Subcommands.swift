import Foundation
import VMergeCore
import VMergeJobs

// `vmerge batch` and `vmerge watch`: their option tables (sharing the merge options' entries),
// requests and parsing.

extension OptionSpec {
    static func shared(_ key: Key) -> OptionSpec { all.first { $0.key == key }! }

    /// Options that shape each merge, the same in every mode: every job option, in its order.
    static var mergeShaping: [OptionSpec] {
        JobOption.all.compactMap { row in all.first { $0.job?.name == row.name } }
    }

    static let batch: [OptionSpec] =
        [
            OptionSpec(
                key: .out, long: "out", short: nil, value: "dir",
                help: "Output folder: where a folder batch writes <subfolder>.mp4, and what relative outputs in a "
                    + "job list are resolved against (default: the job list's folder).", kind: .directory),
            OptionSpec(
                key: .jobs, long: "jobs", short: "j", value: "n",
                help: "Jobs to run at once. (default: one per core, at most 8)", kind: .number),
            OptionSpec(
                key: .shard, long: "shard", short: nil, value: "i/n",
                help: "Run only the jobs whose position modulo n is i (0-based), to spread one batch over "
                    + "machines with no coordination."),
            OptionSpec(
                key: .report, long: "report", short: nil, value: "file",
                help: "Write a JSON report of every job's outcome to this file ('-' = stdout).", kind: .file),
            OptionSpec(
                key: .overwrite, long: "overwrite", short: "y", value: nil,
                help: "Replace existing regular files under output names: files vmerge did not write, other "
                    + "jobs' outputs, and this job's from changed inputs or options. (Outputs of an earlier run "
                    + "of the same job are skipped either way; links, FIFOs and devices are never replaced.)"),
            shared(.deleteSources),
        ] + mergeShaping + [shared(.quiet), shared(.verbose), shared(.help)]

    static let watch: [OptionSpec] =
        [
            OptionSpec(
                key: .out, long: "out", short: nil, value: "dir",
                help: "Output folder (required); each job's MP4 and its JSON report are published here.",
                kind: .directory),
            OptionSpec(
                key: .settle, long: "settle", short: nil, value: "seconds",
                help: "A loose video file becomes a job once its size and time have not changed for this long. "
                    + "(default: \(formatSeconds(WatchSettings.defaultSettle)))", kind: .number),
            OptionSpec(
                key: .marker, long: "marker", short: nil, value: "name",
                help: "A subfolder becomes a job once it holds this file (or a job.json). "
                    + "(default: \(WatchSettings.defaultMarker))"),
            // Watch deletes from its claim folder (its own rules: Claims.finish).
            OptionSpec(
                key: .deleteSources, long: "delete-sources", short: nil, value: nil,
                help: "Delete a job's sources once its output is published, instead of moving them to .done."),
            OptionSpec(
                key: .retries, long: "retries", short: nil, value: "n",
                help: "Retry a job this many times after a transient error (write errors, a name taken), waiting "
                    + "2, 4, 8... s. (default: \(WatchSettings.defaultRetries))", kind: .number),
            OptionSpec(
                key: .poll, long: "poll", short: nil, value: nil,
                help: "Look for new jobs by polling every \(formatSeconds(WatchSettings.pollInterval)) s instead of "
                    + "inotify (network file systems)."),
            OptionSpec(
                key: .statusFile, long: "status-file", short: nil, value: "file",
                help: "Keep a small JSON of this worker's state (current job, counts) here.", kind: .file),
            OptionSpec(
                key: .once, long: "once", short: nil, value: nil,
                help: "Process the jobs that are ready now, then exit (for cron and CI): 0 when every job was "
                    + "done, 1 when any failed or was put back."),
            OptionSpec(
                key: .allowInputs, long: "allow-inputs", short: nil, value: "dir",
                help: "Let job.json files name inputs inside this folder too (absolute paths; repeatable). "
                    + "Otherwise a job reads only files inside its own folder.", kind: .directory),
        ] + mergeShaping + [shared(.quiet), shared(.verbose), shared(.help)]
}

struct BatchRequest: Equatable {
    /// A JSONL job list or a folder of job folders.
    var source: String
    var out: String?
    var parallel: Int?
    var shard: Shard?
    var reportPath: String?
    var deleteSources = false
    /// The batch-wide settings; a job's own options are read over them.
    var settings: JobSettings
    var verbosity: Verbosity
    /// Test hooks (TestHooks): applied to every job of the batch.
    var hooks = MergeHooks()

    struct Shard: Equatable {
        var index: Int
        var count: Int
    }
}

struct WatchRequest: Equatable {
    /// Inbox, outbox and every watch setting (defaults in `WatchSettings`).
    var watch: WatchSettings
    var verbosity: Verbosity
}

extension ArgumentParser {
    static func parseBatch(_ arguments: [String]) throws -> Command {
        let (positionals, values, flags, _) = try tokenize(arguments, table: OptionSpec.batch)
        if flags.contains(.help) { return .subcommandHelp("batch") }
        guard positionals.count == 1 else {
            throw UsageError(
                description: positionals.isEmpty
                    ? "batch: no job list or folder given" : "batch: one job list or folder, not \(positionals.count)")
        }
        var request = BatchRequest(
            source: positionals[0], out: values[.out],
            settings: try jobSettings(values: values, flags: flags, base: JobSettings()),
            verbosity: try verbosity(flags))
        request.reportPath = values[.report]
        request.deleteSources = flags.contains(.deleteSources)
        if request.reportPath == "" { throw UsageError(description: "missing file name for '--report'") }
        if request.out == "" { throw UsageError(description: "batch: '--out' needs a folder name") }
        request.parallel = try parallel(values)
        if let text = values[.shard] {
            let parts = text.split(separator: "/").map { Int($0) }
            guard parts.count == 2, let i = parts[0], let n = parts[1], n >= 1, (0..<n).contains(i) else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--shard': expected i/n with 0 <= i < n, such as 0/3")
            }
            request.shard = .init(index: i, count: n)
        }
        return .batch(request)
    }

    static func parseWatch(_ arguments: [String]) throws -> Command {
        let (positionals, values, flags, _) = try tokenize(arguments, table: OptionSpec.watch)
        if flags.contains(.help) { return .subcommandHelp("watch") }
        guard positionals.count == 1 else {
            throw UsageError(
                description: positionals.isEmpty
                    ? "watch: no inbox folder given" : "watch: one inbox folder, not \(positionals.count)")
        }
        guard let outbox = values[.out] else {
            throw UsageError(description: "watch: missing '--out <dir>': where should finished videos go?")
        }
        guard !outbox.isEmpty, !positionals[0].isEmpty else {
            throw UsageError(description: "watch: the inbox and '--out' need folder names")
        }
        var watch = WatchSettings(
            inbox: positionals[0], outbox: outbox,
            settings: try jobSettings(values: values, flags: flags, base: JobSettings()))
        if let list = values[.allowInputs] {
            watch.allowedInputs = try list.split(separator: "\u{0}", omittingEmptySubsequences: false).map {
                let folder = String($0)
                var info = stat()
                guard !folder.isEmpty, stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                    throw UsageError(description: "invalid value '\(folder)' for '--allow-inputs': expected a folder")
                }
                return absolutePath(folder)
            }
        }
        if let text = values[.settle] {
            guard let value = Double(text), value >= 0, value <= 86_400 else {
                throw UsageError(description: "invalid value '\(text)' for '--settle': expected seconds, 0 to 86400")
            }
            watch.settle = value
        }
        if let text = values[.marker] {
            guard !text.isEmpty, !text.contains("/"), text != ".", text != "..",
                (try? JobFile.checkedName(text, field: "marker")) != nil
            else {
                throw UsageError(description: "invalid value '\(text)' for '--marker': expected a file name")
            }
            watch.marker = text
        }
        if let text = values[.retries] {
            guard let value = Int(text), (0...100).contains(value) else {
                throw UsageError(description: "invalid value '\(text)' for '--retries': expected 0 to 100")
            }
            watch.retries = value
        }
        watch.deleteSources = flags.contains(.deleteSources)
        watch.poll = flags.contains(.poll)
        watch.once = flags.contains(.once)
        watch.statusFile = values[.statusFile]
        if watch.statusFile == "" { throw UsageError(description: "missing file name for '--status-file'") }
        return .watch(WatchRequest(watch: watch, verbosity: try verbosity(flags)))
    }

    /// -j/--jobs (batch, worker), or nil when not given.
    static func parallel(_ values: [OptionSpec.Key: String]) throws -> Int? {
        guard let text = values[.jobs] else { return nil }
        guard let n = Int(text), (1...256).contains(n) else {
            throw UsageError(description: "invalid value '\(text)' for '--jobs': expected a number from 1 to 256")
        }
        return n
    }

    static func verbosity(_ flags: Set<OptionSpec.Key>) throws -> Verbosity {
        if flags.contains(.quiet) && flags.contains(.verbose) {
            throw UsageError(description: "'--quiet' and '--verbose' cannot be used together")
        }
        return flags.contains(.quiet) ? .quiet : flags.contains(.verbose) ? .verbose : .normal
    }
}
