import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeQueue
import VMergeWeb

/// `vmerge worker`: runs the queue's jobs, one line per job event on stderr.
struct WorkerCommand: CommandSpec {
    enum Key: String, OptionKey {
        case db, jobs, once, lease, name, pollInterval = "poll-interval", metricsListen = "metrics-listen", quiet, verbose
        case help
    }

    static let name = "worker"
    static let usageLine = "Usage: \(Help.worker.usage)   (see 'vmerge worker --help')"
    static let table: [OptionSpec] =
        [
            OptionSpec.database,
            OptionSpec.jobs,
            OptionSpec(
                long: "once", short: nil, value: nil,
                help: "Stop once nothing is queued or running (jobs waiting out a backoff, held by other "
                    + "workers, or queued while the queue is paused, are waited for): for cron and CI."),
            OptionSpec(
                long: "lease", short: nil, value: "seconds",
                help: "How long a claim lasts without a heartbeat (heartbeats come every third of it); a job whose "
                    + "worker stopped renewing it is claimed again once it has run out. "
                    + "(default: \(formatSeconds(WorkerSettings.defaultLease)))", kind: .number),
            OptionSpec(
                long: "name", short: nil, value: "name",
                help: "This worker's name in the queue (queue status shows it). (default: <host>-<pid>)"),
            OptionSpec(
                long: "poll-interval", short: nil, value: "seconds",
                help: "How often an idle worker looks for new jobs. "
                    + "(default: \(formatSeconds(WorkerSettings.defaultPollInterval)))", kind: .number),
            OptionSpec.metricsListen, OptionSpec.quiet, OptionSpec.verbose, OptionSpec.help,
        ]

    /// --db; nil: VMERGE_DB.
    var database: String?
    /// The worker's settings but its database, which is --db's or VMERGE_DB's at run time.
    var settings = WorkerSettings(conninfo: "")
    var metricsListen: ListenAddress?
    var verbosity: Verbosity

    init(_ options: ParsedOptions<Key>) throws {
        let parsed = options.arguments
        if let extra = options.positionals.first {
            throw UsageError(description: "worker: unexpected argument '\(extra)': the jobs come from the queue")
        }
        verbosity = try SharedOptions.verbosity(parsed)
        database = try SharedOptions.database(parsed)
        settings.parallel = try SharedOptions.parallel(parsed) ?? settings.parallel
        settings.lease = try options.seconds(.lease, in: 2...3600) ?? settings.lease
        settings.pollInterval = try options.seconds(.pollInterval, in: 0.1...3600) ?? settings.pollInterval
        if let name = options.text(.name) {
            // A newline would forge status lines; the name is also the leases' fence.
            guard !name.isEmpty, name.utf8.count <= 200, (try? JobFile.checkedName(name, field: "name")) != nil else {
                throw UsageError.invalidValue(
                    name, for: Key.name.rawValue, expected: "a name of 1 to 200 bytes without control characters")
            }
            settings.name = name
        }
        settings.once = options.flag(.once)
        metricsListen = try SharedOptions.metricsListen(parsed)
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
