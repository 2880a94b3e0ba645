import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeWeb

/// `vmerge watch`: the watch folder, its log lines and its exit status.
struct WatchCommand: CommandSpec {
    enum Key: String, OptionKey {
        case out, settle, marker, deleteSources = "delete-sources", retries, poll, statusFile = "status-file", once
        case allowInputs = "allow-inputs", metricsListen = "metrics-listen", quiet, verbose, help
    }

    static let name = "watch"
    static let usageLine = "Usage: \(Help.watch.usage)   (see 'vmerge watch --help')"
    static let table: [OptionSpec] =
        [
            OptionSpec(
                long: "out", short: nil, value: "dir",
                help: "Output folder (required); each job's MP4 and its JSON report are published here.",
                kind: .directory),
            OptionSpec(
                long: "settle", short: nil, value: "seconds",
                help: "A loose video file becomes a job once its size and time have not changed for this long. "
                    + "(default: \(formatSeconds(WatchSettings.defaultSettle)))", kind: .number),
            OptionSpec(
                long: "marker", short: nil, value: "name",
                help: "A subfolder becomes a job once it holds this file (or a job.json). "
                    + "(default: \(WatchSettings.defaultMarker))"),
            // Watch deletes from its claim folder (its own rules: Claims.finish).
            OptionSpec(
                long: "delete-sources", short: nil, value: nil,
                help: "Delete a job's sources once its output is published, instead of moving them to .done."),
            OptionSpec(
                long: "retries", short: nil, value: "n",
                help: "Retry a job this many times after a transient error (write errors, a name taken), waiting "
                    + "2, 4, 8... s. (default: \(WatchSettings.defaultRetries))", kind: .number),
            OptionSpec(
                long: "poll", short: nil, value: nil,
                help: "Look for new jobs by polling every \(formatSeconds(WatchSettings.pollInterval)) s instead of "
                    + "inotify (network file systems)."),
            OptionSpec(
                long: "status-file", short: nil, value: "file",
                help: "Keep a small JSON of this worker's state here (current job and its progress, recent jobs, "
                    + "counts), for 'vmerge dashboard --watch'.", kind: .file),
            OptionSpec(
                long: "once", short: nil, value: nil,
                help: "Process the jobs that are ready now, then exit (for cron and CI): 0 when every job was "
                    + "done, 1 when any failed or was put back."),
            OptionSpec(
                long: "allow-inputs", short: nil, value: "dir",
                help: "Let job.json files name inputs inside this folder too (absolute paths; repeatable). "
                    + "Otherwise a job reads only files inside its own folder.", kind: .directory, repeatable: true),
            OptionSpec.metricsListen,
        ] + OptionSpec.jobOptions + [OptionSpec.quiet, OptionSpec.verbose, OptionSpec.help]

    /// Inbox, outbox and every watch setting (defaults in `WatchSettings`).
    var watch: WatchSettings
    var metricsListen: ListenAddress?
    var verbosity: Verbosity

    init(_ options: ParsedOptions<Key>) throws {
        let parsed = options.arguments
        let inbox = try options.single("inbox folder", of: WatchCommand.name)
        guard let outbox = options.text(.out) else {
            throw UsageError(description: "watch: missing '--out <dir>': where should finished videos go?")
        }
        guard !outbox.isEmpty, !inbox.isEmpty else {
            throw UsageError(description: "watch: the inbox and '--out' need folder names")
        }
        watch = WatchSettings(
            inbox: inbox, outbox: outbox,
            settings: try SharedOptions.jobSettings(parsed, table: WatchCommand.table))
        watch.allowedInputs = try options.all(.allowInputs).map { folder in
            var info = stat()
            guard !folder.isEmpty, POSIX.stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw UsageError.invalidValue(folder, for: Key.allowInputs.rawValue, expected: "a folder")
            }
            return absolutePath(folder)
        }
        watch.settle = try options.seconds(.settle, in: 0...86_400) ?? watch.settle
        if let text = options.text(.marker) {
            guard !text.isEmpty, !text.contains("/"), text != ".", text != "..",
                (try? JobFile.checkedName(text, field: "marker")) != nil
            else {
                throw UsageError.invalidValue(text, for: Key.marker.rawValue, expected: "a file name")
            }
            watch.marker = text
        }
        watch.retries = try options.integer(.retries, in: 0...100) ?? watch.retries
        watch.deleteSources = options.flag(.deleteSources)
        watch.poll = options.flag(.poll)
        watch.once = options.flag(.once)
        watch.statusFile = try options.nonEmpty(.statusFile, else: "missing file name for '--status-file'")
        if let file = watch.statusFile { try SharedOptions.checkFolder(of: file, for: "--status-file") }
        metricsListen = try SharedOptions.metricsListen(parsed)
        verbosity = try SharedOptions.verbosity(parsed)
    }

    func run(console: Console, printer: MessagePrinter) throws -> Exit {
        let metrics = RunMetrics()
        let server = try MetricsServer.start(metricsListen, command: "watch", metrics: metrics, printer: printer)
        defer { server?.stop() }
        let folder = try WatchFolder(
            settings: watch, diagnostics: printer.sink("watch"), metrics: metrics)
        // A failure is said (then what the jobs before it deleted) by `CommandRunner.fail`.
        try folder.run()
        printer.sayDeletedCount()
        if watch.once {
            return folder.jobsFailed == 0 && folder.jobsNotDone == 0 ? .success : .failure
        }
        return .success
    }
}
