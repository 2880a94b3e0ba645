import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeQueue

// `vmerge worker`: its option table, request, parsing and run.

extension OptionSpec {
    static let worker: [OptionSpec] =
        [
            entry(.db, of: queue),
            entry(.jobs, of: batch),
            OptionSpec(
                key: .once, long: "once", short: nil, value: nil,
                help: "Stop once nothing is queued or running (jobs waiting out a backoff, or held by other "
                    + "workers, are waited for): for cron and CI."),
            OptionSpec(
                key: .lease, long: "lease", short: nil, value: "seconds",
                help: "How long a claim lasts without a heartbeat (heartbeats come every third of it); a job whose "
                    + "worker stopped renewing it is claimed again once it has run out. "
                    + "(default: \(formatSeconds(WorkerSettings.defaultLease)))", kind: .number),
            OptionSpec(
                key: .workerName, long: "name", short: nil, value: "name",
                help: "This worker's name in the queue (queue status shows it). (default: <host>-<pid>)"),
            OptionSpec(
                key: .pollInterval, long: "poll-interval", short: nil, value: "seconds",
                help: "How often an idle worker looks for new jobs. "
                    + "(default: \(formatSeconds(WorkerSettings.defaultPollInterval)))", kind: .number),
            shared(.quiet), shared(.verbose), shared(.help),
        ]

    /// Another mode's entry, the same in `vmerge worker` (`--db`, `-j`).
    static func entry(_ key: Key, of table: [OptionSpec]) -> OptionSpec { table.first { $0.key == key }! }
}

struct WorkerRequest: Equatable {
    /// --db; nil: VMERGE_DB.
    var database: String?
    var name: String?
    var parallel: Int?
    var lease = WorkerSettings.defaultLease
    var pollInterval = WorkerSettings.defaultPollInterval
    var once = false
    var verbosity: Verbosity
    /// Test hooks (TestHooks): applied to every job the worker runs.
    var hooks = MergeHooks()
}

extension ArgumentParser {
    static func parseWorker(_ arguments: [String]) throws -> Command {
        let (positionals, values, flags, _) = try tokenize(arguments, table: OptionSpec.worker)
        if flags.contains(.help) { return .subcommandHelp("worker") }
        if let extra = positionals.first {
            throw UsageError(description: "worker: unexpected argument '\(extra)': the jobs come from the queue")
        }
        var request = WorkerRequest(database: values[.db], verbosity: try verbosity(flags))
        if request.database == "" { throw UsageError(description: "'--db' needs a connection string") }
        request.parallel = try parallel(values)
        request.lease = try seconds(.lease, in: values, range: 2...3600) ?? request.lease
        request.pollInterval = try seconds(.pollInterval, in: values, range: 0.1...3600) ?? request.pollInterval
        if let name = values[.workerName] {
            // A newline would forge status lines; the name is also the leases' fence.
            guard !name.isEmpty, name.utf8.count <= 200, (try? JobFile.checkedName(name, field: "name")) != nil else {
                throw UsageError(
                    description: "invalid value '\(name)' for '--name': expected a name of 1 to 200 bytes without "
                        + "control characters")
            }
            request.name = name
        }
        request.once = flags.contains(.once)
        return .worker(request)
    }

    /// A number of seconds in `range`, as plain decimals (`2`, `0.5`), or nil when not given.
    private static func seconds(_ key: OptionSpec.Key, in values: [OptionSpec.Key: String], range: ClosedRange<Double>)
        throws -> Double?
    {
        guard let text = values[key] else { return nil }
        guard JobOption.isPlainNumber(text), let value = Double(text), range.contains(value) else {
            let long = OptionSpec.worker.first { $0.key == key }!.long
            throw UsageError(
                description: "invalid value '\(text)' for '--\(long)': expected seconds, "
                    + "\(formatSeconds(range.lowerBound)) to \(formatSeconds(range.upperBound))")
        }
        return value
    }
}

/// `vmerge worker`: runs the queue's jobs, one line per job event on stderr.
struct WorkerCommand {
    static let usageLine = "Usage: \(Help.worker.usage)   (see 'vmerge worker --help')"

    let request: WorkerRequest
    let console: Console

    func run() -> Exit {
        let printer = MessagePrinter.forRun(console: console, verbosity: request.verbosity)
        guard let conninfo = QueueCommand.conninfo(request.database, console: console) else {
            printer.print(.error, file: nil, "worker: no database given: use '--db <url>' or set VMERGE_DB")
            console.error(WorkerCommand.usageLine)
            return .usage
        }
        var settings = WorkerSettings(
            conninfo: conninfo, name: request.name ?? WorkerSettings.defaultName,
            parallel: request.parallel ?? Batch.defaultParallel, lease: request.lease,
            pollInterval: request.pollInterval, once: request.once)
        settings.hooks = request.hooks
        let worker = Worker(
            settings: settings,
            log: printer.workerLog("worker"),
            onDiagnostic: { printer.diagnostic($0) })
        do {
            try worker.run()
        } catch {
            printer.print(.error, file: nil, VMergeError.message(of: error))
            return .failure
        }
        let signal = VMergeProcess.pendingSignal
        if signal != 0 { return .cancelled(signal: signal) }
        return worker.jobsFailed == 0 ? .success : .failure
    }
}
