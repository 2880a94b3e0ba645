import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeQueue
import VMergeWeb

/// `vmerge worker`: runs the queue's jobs, one line per job event on stderr.
struct WorkerCommand: CommandSpec {
    static let name = "worker"
    static let usageLine = "Usage: \(Help.worker.usage)   (see 'vmerge worker --help')"

    static let once = CommandOption.flag(
        "once",
        help: "Stop once nothing is queued or running (jobs waiting out a backoff, held by other "
            + "workers, or queued while the queue is paused, are waited for): for cron and CI.")
    static let lease = CommandOption.seconds(
        "lease",
        help: "How long a claim lasts without a heartbeat (heartbeats come every third of it); a job whose "
            + "worker stopped renewing it is claimed again once it has run out. "
            + "(default: \(formatSeconds(WorkerSettings.defaultLease)))", in: 2...3600)
    static let workerName = CommandOption.text(
        "name", value: "name", help: "This worker's name in the queue (queue status shows it). (default: <host>-<pid>)"
    ).map { name, spec -> String? in
        guard let name else { return nil }
        // A newline would forge status lines; the name is also the leases' fence.
        guard !name.isEmpty, name.utf8.count <= 200, (try? JobFile.checkedName(name, field: "name")) != nil else {
            throw UsageError.invalidValue(
                name, for: spec.long, expected: "a name of 1 to 200 bytes without control characters")
        }
        return name
    }
    static let pollInterval = CommandOption.seconds(
        "poll-interval",
        help: "How often an idle worker looks for new jobs. "
            + "(default: \(formatSeconds(WorkerSettings.defaultPollInterval)))", in: 0.1...3600)

    static let table: [OptionSpec] = [
        SharedOptions.database.spec, SharedOptions.jobs.spec, once.spec, lease.spec, workerName.spec, pollInterval.spec,
        SharedOptions.metricsListen.spec, SharedOptions.quiet.spec, SharedOptions.verbose.spec, SharedOptions.help.spec,
    ]

    /// --db; nil: VMERGE_DB.
    var database: String?
    /// The worker's settings but its database, which is --db's or VMERGE_DB's at run time.
    var settings = WorkerSettings(conninfo: "")
    var metricsListen: ListenAddress?
    var verbosity: Verbosity

    init(_ parsed: ParsedArguments) throws {
        if let extra = parsed.positionals.first {
            throw UsageError(description: "worker: unexpected argument '\(extra)': the jobs come from the queue")
        }
        verbosity = try SharedOptions.verbosity(parsed)
        database = try SharedOptions.database.read(parsed)
        settings.parallel = try SharedOptions.jobs.read(parsed) ?? settings.parallel
        settings.lease = try WorkerCommand.lease.read(parsed) ?? settings.lease
        settings.pollInterval = try WorkerCommand.pollInterval.read(parsed) ?? settings.pollInterval
        settings.name = try WorkerCommand.workerName.read(parsed) ?? settings.name
        settings.once = try WorkerCommand.once.read(parsed)
        metricsListen = try SharedOptions.metricsListen.read(parsed)
    }

    func run(console: Console, printer: MessagePrinter) throws -> Exit {
        var settings = settings
        settings.conninfo = try SharedOptions.conninfo(database, command: "worker", console: console, printer: printer)
        let metrics = RunMetrics()
        let server = try MetricsServer.start(metricsListen, command: "worker", metrics: metrics, printer: printer)
        defer { server?.stop() }
        let worker = Worker(
            settings: settings,
            diagnostics: printer.sink("worker"), metrics: metrics)
        try worker.run()
        let signal = VMergeProcess.pendingSignal
        if signal != 0 { return .cancelled(signal: signal) }
        return worker.jobsFailed == 0 ? .success : .failure
    }
}
