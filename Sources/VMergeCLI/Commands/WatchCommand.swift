import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeWeb

/// `vmerge watch`: the watch folder, its log lines and its exit status.
struct WatchCommand: CommandSpec {
    static let configuration = CommandConfiguration(
        name: "watch", abstract: "Watch an inbox folder and merge what arrives",
        overview: "Watch a folder and merge what arrives, until SIGINT/SIGTERM. A subfolder is a job once it "
            + "holds the marker (.ready) or a job.json; a loose video file once it has settled. Jobs are "
            + "claimed by an atomic rename into .processing/, so several watchers may share one inbox; "
            + "outputs go to --out with a JSON report, sources to .done/ (or are deleted), failures to "
            + ".failed/ with an error.json. A worker killed at any moment is recovered on restart.",
        usage: "vmerge watch <inbox> --out <dir> [options]",
        examples: [
            Help.Example(command: "vmerge watch inbox/ --out outbox/ --status-file /run/vmerge.json"),
            Help.Example(command: "vmerge watch inbox/ --out outbox/ --once --delete-sources"),
        ],
        exits: .watch, positionals: .path(foldersOnly: true, label: "inbox folder", phrase: "an inbox folder"),
        mainHelpExample: "vmerge watch inbox/ --out outbox/")

    static let out = CommandOption.text(
        "out", value: "dir", help: "Output folder (required); each job's MP4 and its JSON report are published here.",
        kind: .directory)
    static let settle = CommandOption.seconds(
        "settle",
        help: "A loose video file becomes a job once its size and time have not changed for this long. "
            + "(default: \(formatSeconds(WatchSettings.defaultSettle)))", in: 0...86_400)
    static let marker = CommandOption.text(
        "marker", value: "name",
        help: "A subfolder becomes a job once it holds this file (or a job.json). "
            + "(default: \(WatchSettings.defaultMarker))"
    ).map { text, spec -> String? in
        guard let text else { return nil }
        guard !text.isEmpty, !text.contains("/"), text != ".", text != "..",
            (try? JobFile.checkedName(text, field: "marker")) != nil
        else {
            throw UsageError.invalidValue(text, for: spec.long, expected: "a file name")
        }
        return text
    }
    // Watch deletes from its claim folder (its own rules: Claims.finish).
    static let deleteSources = CommandOption.flag(
        "delete-sources", help: "Delete a job's sources once its output is published, instead of moving them to .done.")
    static let retries = CommandOption.integer(
        "retries",
        help: "Retry a job this many times after a transient error (write errors, a name taken), waiting "
            + "2, 4, 8... s. (default: \(WatchSettings.defaultRetries))", in: 0...100)
    static let poll = CommandOption.flag(
        "poll",
        help: "Look for new jobs by polling every \(formatSeconds(WatchSettings.pollInterval)) s instead of "
            + "inotify (network file systems).")
    static let statusFile = CommandOption.text(
        "status-file", value: "file",
        help: "Keep a small JSON of this worker's state here (current job and its progress, recent jobs, "
            + "counts), for 'vmerge dashboard --watch'.", kind: .file, empty: "missing file name for '--status-file'")
    static let once = CommandOption.flag(
        "once",
        help: "Process the jobs that are ready now, then exit (for cron and CI): 0 when every job was "
            + "done, 1 when any failed or was put back.")
    static let allowInputs = CommandOption.repeated(
        "allow-inputs", value: "dir",
        help: "Let job.json files name inputs inside this folder too (absolute paths; repeatable). "
            + "Otherwise a job reads only files inside its own folder.", kind: .directory
    ).map { folders, spec in
        try folders.map { folder in
            var info = stat()
            guard !folder.isEmpty, POSIX.stat(FileName(folder), &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw UsageError.invalidValue(folder, for: spec.long, expected: "a folder")
            }
            return absolutePath(folder)
        }
    }

    static let table: [OptionSpec] =
        [
            out.spec, settle.spec, marker.spec, deleteSources.spec, retries.spec, poll.spec, statusFile.spec, once.spec,
            allowInputs.spec, SharedOptions.allowRemote.spec, SharedOptions.metricsListen.spec,
        ] + NotifyOptions.specs + JobOptions.specs + VerbosityOptions.specs + [SharedOptions.help.spec]

    /// Inbox, outbox and every watch setting (defaults in `WatchSettings`).
    var watch: WatchSettings
    var metricsListen: ListenAddress?
    var verbosity: Verbosity

    init(_ parsed: ParsedArguments) throws {
        let inbox = try parsed.single("inbox folder", of: WatchCommand.name)
        guard let outbox = try WatchCommand.out.read(parsed) else {
            throw UsageError(description: "watch: missing '--out <dir>': where should finished videos go?")
        }
        guard !outbox.isEmpty, !inbox.isEmpty else {
            throw UsageError(description: "watch: the inbox and '--out' need folder names")
        }
        watch = WatchSettings(
            inbox: inbox, outbox: outbox,
            settings: try JobOptions.settings(parsed))
        watch.allowedInputs = try WatchCommand.allowInputs.read(parsed)
        watch.settle = try WatchCommand.settle.read(parsed) ?? watch.settle
        watch.marker = try WatchCommand.marker.read(parsed) ?? watch.marker
        watch.retries = try WatchCommand.retries.read(parsed) ?? watch.retries
        watch.deleteSources = try WatchCommand.deleteSources.read(parsed)
        watch.poll = try WatchCommand.poll.read(parsed)
        watch.once = try WatchCommand.once.read(parsed)
        watch.statusFile = try WatchCommand.statusFile.read(parsed)
        if let file = watch.statusFile { try SharedOptions.checkFolder(of: file, for: "--status-file") }
        metricsListen = try SharedOptions.metricsListen.read(parsed)
        verbosity = try VerbosityOptions.read(parsed)
        // A secret alone is of use: job.json's own `notify` (under --allow-remote) is signed with it.
        watch.remoteAccess = try SharedOptions.remoteAccess(parsed, listingRequired: true)
        if let notify = try NotifyOptions.read(parsed, access: watch.remoteAccess, secretAlone: true) {
            (watch.notify, watch.notifySecret, watch.notifyWait) = (notify.targets, notify.secret, notify.wait)
        }
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
