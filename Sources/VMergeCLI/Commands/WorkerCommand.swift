import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeQueue
import VMergeWeb

/// `vmerge worker`: runs the queue's jobs, one line per job event on stderr.
struct WorkerCommand: CommandSpec {
    static let configuration = CommandConfiguration(
        name: "worker", abstract: "Run the jobs of a PostgreSQL queue",
        overview: "Run the queue's jobs ('vmerge queue'), with the job runner batch uses, until SIGINT/SIGTERM: "
            + "running jobs are then cancelled and put back in the queue. Any number of workers on any number of "
            + "machines may share one queue; each claim is a lease that a heartbeat renews, and a job whose worker "
            + "stopped renewing it (killed, machine gone, network cut) is claimed again once it has run out. A bad "
            + "input fails the job at once; output-side errors are retried with a backoff until the job's attempts "
            + "('queue add --max-attempts') are used up. An output already holding its job's result is recorded done without work. The database "
            + "going away stops neither the worker nor its running jobs: it reconnects, and records what they "
            + "ended with once the database is back.",
        usage: "vmerge worker --db <url> [-j <n>] [--once] [options]",
        examples: [
            Help.Example(command: "VMERGE_DB='host=db.example dbname=vmerge user=vmerge' vmerge worker -j 2"),
            Help.Example(command: "vmerge worker --db postgresql:///vmerge --once", note: "until the queue is empty"),
        ],
        exits: .worker, positionals: .none,
        mainHelpExample: "vmerge worker --db postgresql:///vmerge -j 2")

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

    static let table: [OptionSpec] =
        [
            SharedOptions.database.spec, SharedOptions.jobs.spec, once.spec, lease.spec, workerName.spec,
            pollInterval.spec, SharedOptions.metricsListen.spec, SharedOptions.allowRemote.spec,
            NotifyOptions.notify.spec, NotifyOptions.secretFile.spec, NotifyOptions.wait.spec,
        ] + VerbosityOptions.specs + [SharedOptions.help.spec]

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
        verbosity = try VerbosityOptions.read(parsed)
        database = try SharedOptions.database.read(parsed)
        settings.parallel = try SharedOptions.jobs.read(parsed) ?? settings.parallel
        settings.lease = try WorkerCommand.lease.read(parsed) ?? settings.lease
        settings.pollInterval = try WorkerCommand.pollInterval.read(parsed) ?? settings.pollInterval
        settings.name = try WorkerCommand.workerName.read(parsed) ?? settings.name
        settings.once = try WorkerCommand.once.read(parsed)
        settings.remoteAccess = try SharedOptions.remoteAccess(parsed, listingRequired: true)
        if let notify = try NotifyOptions.read(parsed, access: settings.remoteAccess, secretAlone: true) {
            settings.notify = notify.targets.map(\.url.absoluteString)
            (settings.notifySecret, settings.notifyWait) = (notify.secret, notify.wait)
        }
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
