import Foundation
import VMergeCore
import VMergeJobs
import VMergeQueue

// `vmerge queue init|add|status|retry|cancel`: its option table, request, parsing and run.

extension OptionSpec {
    static let queue: [OptionSpec] =
        [
            OptionSpec(
                key: .db, long: "db", short: nil, value: "url",
                help: "The queue's PostgreSQL database, as libpq reads it: a URI (postgresql://user@host/db), "
                    + "key=value pairs (host=/run/postgresql dbname=vmerge) or a database name; the PG* "
                    + "variables and ~/.pgpass give the rest. Messages never show its password. (default: "
                    + "$VMERGE_DB)"),
            OptionSpec(
                key: .out, long: "out", short: nil, value: "dir",
                help: "add: where a folder of jobs writes <subfolder>.mp4, and what relative outputs in a job list "
                    + "are resolved against (default: the job list's folder).", kind: .directory),
            OptionSpec(
                key: .maxAttempts, long: "max-attempts", short: nil, value: "n",
                help: "add: how many times a worker may try each job before it is failed with its last error. "
                    + "(default: \(QueueCommand.defaultMaxAttempts))", kind: .number),
            OptionSpec(
                key: .json, long: "json", short: nil, value: nil,
                help: "status: print {\"counts\": {...}, \"jobs\": [...]} instead of a table."),
        ] + mergeShaping + [shared(.help)]
}

struct QueueRequest: Equatable {
    enum Action: Equatable {
        case initialize
        /// A JSONL job list or a folder of job folders.
        case add(String)
        case status
        case retry([Int64])
        case cancel([Int64])
    }

    var action: Action
    /// --db; nil: VMERGE_DB.
    var database: String?
    var out: String?
    var maxAttempts = QueueCommand.defaultMaxAttempts
    var json = false
    /// add: the settings every job starts from; its own options are read over them.
    var settings = JobSettings()
}

extension ArgumentParser {
    static func parseQueue(_ arguments: [String]) throws -> Command {
        let (positionals, values, flags, _) = try tokenize(arguments, table: OptionSpec.queue)
        if flags.contains(.help) { return .subcommandHelp("queue") }
        let actions = QueueCommand.actions.dropLast().joined(separator: ", ") + " or " + QueueCommand.actions.last!
        guard let word = positionals.first else { throw UsageError(description: "queue: no action given: \(actions)") }
        let rest = Array(positionals.dropFirst())
        var request = QueueRequest(action: .status, database: values[.db])
        // Options beyond --db that each action takes.
        var takes: Set<OptionSpec.Key> = []
        switch word {
        case "init", "status":
            guard rest.isEmpty else { throw UsageError(description: "queue \(word): takes no arguments") }
            request.action = word == "init" ? .initialize : .status
            if word == "status" { takes = [.json] }
        case "add":
            guard rest.count == 1 else {
                throw UsageError(
                    description: rest.isEmpty
                        ? "queue add: no job list or folder given"
                        : "queue add: one job list or folder, not \(rest.count)")
            }
            request.action = .add(rest[0])
            takes = Set([.out, .maxAttempts] + OptionSpec.mergeShaping.map(\.key))
        case "retry", "cancel":
            guard !rest.isEmpty else { throw UsageError(description: "queue \(word): no job id given") }
            let ids = try rest.map { text in
                guard let id = Int64(text), id > 0 else {
                    throw UsageError(
                        description: "queue \(word): invalid job id '\(text)': expected a number such as 12")
                }
                return id
            }
            request.action = word == "retry" ? .retry(ids) : .cancel(ids)
        default:
            throw UsageError(description: "queue: unknown action '\(word)' (expected \(actions))")
        }
        let given = Set(values.keys).union(flags)
        if let spec = OptionSpec.queue.first(where: {
            given.contains($0.key) && $0.key != .db && !takes.contains($0.key)
        }) {
            throw UsageError(description: "queue \(word): '--\(spec.long)' does not apply here")
        }
        if request.database == "" { throw UsageError(description: "'--db' needs a connection string") }
        request.out = values[.out]
        if request.out == "" { throw UsageError(description: "queue add: '--out' needs a folder name") }
        if let text = values[.maxAttempts] {
            guard let n = Int(text), (1...100).contains(n) else {
                throw UsageError(
                    description: "invalid value '\(text)' for '--max-attempts': expected a number from 1 to 100")
            }
            request.maxAttempts = n
        }
        request.json = flags.contains(.json)
        request.settings = try jobSettings(values: values, flags: flags, base: JobSettings())
        return .queue(request)
    }
}

/// `vmerge queue`: connects, does the one action, prints its result on stdout and problems on
/// stderr, one line each.
struct QueueCommand {
    static let defaultMaxAttempts = 3
    /// The first word after `queue`, in the order help lists them (and completions offer them).
    static let actions = ["init", "add", "status", "retry", "cancel"]
    static let usageLine = "Usage: \(Help.queue.usage)   (see 'vmerge queue --help')"

    let request: QueueRequest
    let console: Console

    func run() -> Exit {
        let printer = MessagePrinter(console: console, verbosity: .normal)
        guard let conninfo = QueueCommand.conninfo(request.database, console: console) else {
            printer.print(.error, file: nil, "queue: no database given: use '--db <url>' or set VMERGE_DB")
            console.error(QueueCommand.usageLine)
            return .usage
        }
        do {
            switch request.action {
            case .initialize: try initialize(conninfo)
            case let .add(source): try add(source, conninfo)
            case .status: try status(conninfo)
            case let .retry(ids), let .cancel(ids): return try change(ids, conninfo, printer)
            }
        } catch let error as UsageError {
            printer.print(.error, file: nil, error.description)
            console.error(QueueCommand.usageLine)
            return .usage
        } catch {
            printer.print(.error, file: nil, VMergeError.message(of: error))
            return .failure
        }
        return .success
    }

    /// --db, else VMERGE_DB; nil when neither names a database.
    static func conninfo(_ given: String?, console: Console) -> String? {
        guard let conninfo = given ?? console.environment["VMERGE_DB"], !conninfo.isEmpty else { return nil }
        return conninfo
    }

    private func initialize(_ conninfo: String) throws {
        let migration = try QueueSchema.migrate(PGConnection(conninfo))
        switch migration.from {
        case 0: console.output("queue: created (schema version \(migration.to))\n")
        case migration.to: console.output("queue: up to date (schema version \(migration.to))\n")
        default: console.output("queue: migrated from schema version \(migration.from) to \(migration.to)\n")
        }
    }

    /// One line per job, `added <id> <name>` or `exists <id> <name>`, then how many of each.
    private func add(_ source: String, _ conninfo: String) throws {
        if try BatchSource.isFolder(source), request.out == nil {
            throw UsageError(description: "queue add: a folder of jobs needs '--out <dir>' for the outputs")
        }
        // The list is read before connecting: a bad line costs no connection.
        let jobs = try BatchSource.jobs(from: source, out: request.out, settings: request.settings)
        let additions = try JobQueue(connecting: conninfo).add(jobs, maxAttempts: request.maxAttempts)
        var text = additions.map { "\($0.added ? "added" : "exists") \($0.id) \(VisibleText.of($0.name))\n" }.joined()
        let added = additions.filter(\.added).count
        text += "\(added) added, \(additions.count - added) already there\n"
        console.output(text)
    }

    private func status(_ conninfo: String) throws {
        let status = try JobQueue(connecting: conninfo).status()
        if request.json {
            console.output(status.json.text(pretty: true) + "\n")
            return
        }
        var text = QueueState.allCases.map { "\(status.counts[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ") + "\n"
        if !status.jobs.isEmpty {
            let rows =
                [["ID", "STATE", "ATTEMPTS", "NAME", "WORKER", "CREATED", "STARTED", "FINISHED", "ERROR"]]
                + status.jobs.map { job in
                    [
                        "\(job.id)", job.state.rawValue, "\(job.attempts)/\(job.maxAttempts)", job.name,
                        job.worker ?? "-", job.createdAt ?? "-", job.startedAt ?? "-", job.finishedAt ?? "-",
                        job.error ?? "-",
                    ]
                }
            text += QueueCommand.table(rows)
        }
        console.output(text)
    }

    /// retry or cancel: a line per job changed; a job not there, or in a state the change does not
    /// apply to, is an error (and the exit status 1), and the others are still changed.
    private func change(_ ids: [Int64], _ conninfo: String, _ printer: MessagePrinter) throws -> Exit {
        let queue = try JobQueue(connecting: conninfo)
        let retrying = request.action == .retry(ids)
        var exit = Exit.success
        for id in ids {
            switch try retrying ? queue.retry(id) : queue.cancel(id) {
            case let .changed(name, was):
                let note = !retrying && was == .running ? " (running: its worker stops it at its next heartbeat)" : ""
                console.output("\(retrying ? "queued" : "cancelled") \(id) \(VisibleText.of(name))\(note)\n")
            case .notFound:
                printer.print(.error, file: "job \(id)", "not in the queue")
                exit = .failure
            case let .refused(name, state):
                let wanted =
                    retrying ? "a failed or cancelled job can be retried" : "a queued or running job can be cancelled"
                printer.print(.error, file: "job \(id) (\(name))", "\(state.rawValue); only \(wanted)")
                exit = .failure
            }
        }
        return exit
    }

    /// Rows in columns two spaces apart; the last column as it is.
    static func table(_ rows: [[String]]) -> String {
        // Cells hold database fields: escaped (once) before they are measured.
        let rows = rows.map { $0.map(VisibleText.of) }
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
