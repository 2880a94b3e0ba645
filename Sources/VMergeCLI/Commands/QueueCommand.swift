import Foundation
import VMergeCore
import VMergeJobs
import VMergeQueue

// `vmerge queue init|grants|add|status|retry|cancel|pause|resume`: its option table, request, parsing and run.

/// `vmerge queue`: connects, does the one action, prints its result on stdout and problems on
/// stderr, one line each.
struct QueueCommand: CommandSpec {
    static let configuration = CommandConfiguration(
        name: "queue", abstract: "Add, list, retry or cancel jobs in a PostgreSQL queue",
        overview: "A job queue in PostgreSQL, for workers on many machines. 'init' creates the queue's tables (or "
            + "brings them up to date; safe to run again). 'grants' prints the SQL that gives a role what a worker, "
            + "or a dashboard that only reads, needs (for the queue's owner to run: psql). 'add' queues the jobs "
            + "of a job list or a folder, as 'vmerge batch' reads them, with absolute paths, once their inputs are "
            + "found here; a job already queued (same inputs, options and "
            + "output) is not added again; the merge options below apply to its jobs as batch-wide ones do in "
            + "batch. 'status' lists the jobs and how many are in each state. 'retry' "
            + "queues failed or cancelled jobs again; 'cancel' cancels queued or running ones. 'pause' makes "
            + "workers claim nothing new (running jobs go on to their end; queued ones stay queued) until "
            + "'resume'.",
        usage: "vmerge queue <init | grants <--worker | --reader> <role> | add <jobs.jsonl | folder> | status | "
            + "retry <id>... | cancel <id>... | pause | resume> --db <url> [options]",
        examples: [
            Help.Example(command: "export VMERGE_DB='host=db.example dbname=vmerge user=vmerge'"),
            Help.Example(command: "vmerge queue init"),
            Help.Example(
                command: "vmerge queue grants --worker vmerge_worker | psql -v ON_ERROR_STOP=1 \"$VMERGE_DB\""),
            Help.Example(command: "vmerge queue add recordings/ --out /srv/merged --quality high"),
            Help.Example(command: "vmerge queue status --json"),
            Help.Example(command: "vmerge queue retry 12 13"),
            Help.Example(command: "vmerge queue pause", note: "and later: vmerge queue resume"),
        ],
        exits: .queue,
        positionals: .actions(
            actions, pathAfter: "add", label: "job list, folder or job id", phrase: "a job list or folder"),
        mainHelpExample: "vmerge queue add --db postgresql:///vmerge jobs.jsonl")
    static let defaultMaxAttempts = 3
    /// The first word after `queue`, in the order help lists them (and completions offer them).
    static let actions = ["init", "grants", "add", "status", "retry", "cancel", "pause", "resume"]

    static let out = CommandOption.text(
        "out", value: "dir",
        help: "add: where a folder of jobs writes <subfolder>.mp4, and what relative outputs in a job list "
            + "are resolved against (default: the job list's folder).", kind: .directory,
        empty: "queue add: '--out' needs a folder name")
    static let maxAttempts = CommandOption.integer(
        "max-attempts",
        help: "add: how many times a worker may try each job before it is failed with its last error. "
            + "(default: \(QueueCommand.defaultMaxAttempts))", in: 1...100)
    static let state = CommandOption.choice(
        "state", value: "state",
        help: "status: list only the jobs in this state. retry: with no job id, every job in this state "
            + "(failed or cancelled).", of: QueueState.self)
    static let name = CommandOption.text(
        "name", value: "text", help: "status, retry --state: only the jobs whose name holds this text, in any case.",
        empty: "missing text for '--name'")
    static let limit = CommandOption.integer(
        "limit", help: "status: list at most this many jobs, newest first.", in: 1...JobQueue.pageLimit)
    static let json = CommandOption.flag(
        "json",
        help: "status: print {\"counts\": {...}, \"jobs\": [...]} instead of a table. add: print each job as the queue "
            + "keeps it, in the words of a job list and the API's body.")
    static let inputsElsewhere = CommandOption.flag(
        "inputs-elsewhere",
        help: "add: queue jobs whose inputs do not exist here, for workers that see another tree (their own "
            + "mount); without it, a missing input refuses the whole list.")
    static let worker = grantee(.worker, help: "grants: print the SQL that gives this role what 'vmerge worker' needs.")
    static let reader = grantee(
        .reader,
        help: "grants: print the SQL that gives this role what 'vmerge dashboard' without --token-file "
            + "needs: reading, nothing more.")

    /// A role `queue grants` is for: a name PostgreSQL will read as that one role, or a usage error.
    private static func grantee(_ use: QueueGrants.Use, help: String) -> CommandOption<String?> {
        CommandOption.text(use.rawValue, value: "role", help: help).map { name, spec in
            guard let name else { return nil }
            do throws(QueueGrants.RoleNameRefusal) {
                _ = try QueueGrants.quoted(role: name)
            } catch {
                throw UsageError.naming(
                    "invalid role '\(VisibleText.of(name))' for '--\(spec.long)': \(error.description)")
            }
            return name
        }
    }

    /// What `queue add` takes besides --db.
    static var addTakes: Set<String> {
        Set([out.long, maxAttempts.long, inputsElsewhere.long, json.long] + JobOptions.specs.map(\.long))
    }

    static let table: [OptionSpec] =
        [
            SharedOptions.database.spec, out.spec, maxAttempts.spec, inputsElsewhere.spec, json.spec, state.spec,
            name.spec, limit.spec, worker.spec,
            reader.spec,
        ] + JobOptions.specs + [SharedOptions.help.spec]

    enum Action: Equatable {
        case initialize
        /// The SQL granting each role its use, in that order.
        case grants([Grantee])
        /// A JSONL job list or a folder of job folders.
        case add(String)
        case status
        case retry([Int64])
        /// retry --state failed|cancelled [--name TEXT]: every such job.
        case retryAll(QueueState, name: String?)
        case cancel([Int64])
        case pause, resume
    }

    /// A role `grants` is for, and what for.
    struct Grantee: Equatable {
        var use: QueueGrants.Use
        var role: String
    }

    var action: Action
    /// --db; nil: VMERGE_DB.
    var database: String?
    var out: String?
    var maxAttempts = QueueCommand.defaultMaxAttempts
    var json = false
    /// status: which jobs to list (--state, --name) and how many (--limit); nil: every job.
    var filter: Listing?

    /// Which jobs status lists, and how many at most.
    struct Listing: Equatable {
        var filter: JobFilter
        var limit: Int

        /// --state, --name and --limit; nil (every job) when none is given.
        init?(_ parsed: ParsedArguments) throws {
            let (state, name, limit) = (
                try QueueCommand.state.read(parsed), try QueueCommand.name.read(parsed),
                try QueueCommand.limit.read(parsed)
            )
            guard state != nil || name != nil || limit != nil else { return nil }
            filter = JobFilter(state: state, nameContains: name)
            self.limit = limit ?? JobQueue.pageLimit
        }
    }
    /// add: queue inputs that are not here.
    var inputsElsewhere = false
    /// add: the settings every job starts from; its own options are read over them.
    var settings = JobSettings()
    var verbosity: Verbosity { .normal }

    init(_ parsed: ParsedArguments) throws {
        let actions = JobOptionError.oneOf(QueueCommand.actions)
        guard let word = parsed.positionals.first else {
            throw UsageError(description: "queue: no action given: \(actions)")
        }
        let (action, takes) = try QueueCommand.action(word, parsed: parsed)
        self.action = action
        let given = Set(parsed.values.keys).union(parsed.flags)
        if let spec = QueueCommand.table.first(where: {
            given.contains($0.long) && $0.long != SharedOptions.database.long && !takes.contains($0.long)
        }) {
            throw UsageError(description: "queue \(word): '--\(spec.long)' does not apply here")
        }
        database = try SharedOptions.database.read(parsed)
        out = try QueueCommand.out.read(parsed)
        maxAttempts = try QueueCommand.maxAttempts.read(parsed) ?? maxAttempts
        json = try QueueCommand.json.read(parsed)
        if case .status = action { filter = try Listing(parsed) }
        inputsElsewhere = try QueueCommand.inputsElsewhere.read(parsed)
        settings = try JobOptions.settings(parsed)
    }

    /// The action `word` names, with its arguments, and the options beyond --db it takes.
    private static func action(_ word: String, parsed: ParsedArguments) throws -> (Action, takes: Set<String>) {
        let rest = Array(parsed.positionals.dropFirst())
        let actions = JobOptionError.oneOf(Self.actions)
        let action: Action
        var takes: Set<String> = []
        switch word {
        case "init", "status", "pause", "resume":
            guard rest.isEmpty else { throw UsageError(description: "queue \(word): takes no arguments") }
            switch word {
            case "init": action = .initialize
            case "pause": action = .pause
            case "resume": action = .resume
            default:
                action = .status
                takes = [
                    json.long, state.long, name.long, limit.long,
                ]
            }
        case "grants":
            guard rest.isEmpty else { throw UsageError(description: "queue grants: takes no arguments") }
            action = .grants(try grantees(parsed))
            takes = [worker.long, reader.long]
        case "add":
            guard rest.count == 1 else {
                throw UsageError(
                    description: rest.isEmpty
                        ? "queue add: no job list or folder given"
                        : "queue add: one job list or folder, not \(rest.count)")
            }
            action = .add(rest[0])
            takes = addTakes
        case "retry" where rest.isEmpty && parsed.values[state.long] != nil:
            let chosen = try state.read(parsed) ?? .failed
            guard chosen == .failed || chosen == .cancelled else {
                throw UsageError(
                    description: "queue retry --state: failed or cancelled jobs are retried, not \(chosen.rawValue)")
            }
            action = .retryAll(chosen, name: try name.read(parsed))
            takes = [state.long, name.long]
        case "retry", "cancel":
            guard !rest.isEmpty else { throw UsageError(description: "queue \(word): no job id given") }
            let ids = try rest.map { text in
                guard let id = Int64(text), id > 0 else {
                    throw UsageError(
                        description: "queue \(word): invalid job id '\(text)': expected a number such as 12")
                }
                return id
            }
            action = word == "retry" ? .retry(ids) : .cancel(ids)
        default:
            throw UsageError(description: "queue: unknown action '\(word)' (expected \(actions))")
        }
        return (action, takes)
    }

    /// The roles `grants` is for: one at least; no database (the SQL is for its owner to run).
    private static func grantees(_ parsed: ParsedArguments) throws -> [Grantee] {
        let roles = try [(QueueGrants.Use.worker, worker), (.reader, reader)]
            .compactMap { use, option in try option.read(parsed).map { Grantee(use: use, role: $0) } }
        guard !roles.isEmpty else {
            throw UsageError(description: "queue grants: name the role: '--worker <role>' or '--reader <role>'")
        }
        if parsed.values[SharedOptions.database.long] != nil {
            throw UsageError(description: "queue grants: '--db' does not apply here (it prints SQL, for psql)")
        }
        return roles
    }

    func run(console: Console, printer: MessagePrinter) throws -> Exit {
        if case let .grants(roles) = action {
            for grantee in roles { console.output(try QueueGrants.sql(for: grantee.use, role: grantee.role)) }
            return .success
        }
        let conninfo = try SharedOptions.conninfo(database, command: "queue", console: console, printer: printer)
        switch action {
        case .initialize: try initialize(conninfo, console: console)
        case .grants: break
        case let .add(source): try add(source, conninfo, console: console, printer: printer)
        case .status: try status(conninfo, parsed: filter, console: console)
        case let .retryAll(state, name): try retryAll(state, name: name, conninfo, console: console)
        case let .retry(ids), let .cancel(ids): return try change(ids, conninfo, console: console)
        case .pause, .resume: try pauseOrResume(conninfo, console: console)
        }
        return .success
    }

    private func initialize(_ conninfo: String, console: Console) throws {
        let migration = try QueueSchema.migrate(PGConnection(conninfo))
        switch migration.from {
        case 0: console.output("queue: created (schema version \(migration.to))\n")
        case migration.to: console.output("queue: up to date (schema version \(migration.to))\n")
        default: console.output("queue: migrated from schema version \(migration.from) to \(migration.to)\n")
        }
    }

    /// One line per job, `added <id> <name>` or `exists <id> <name>`, then how many of each.
    private func add(_ source: String, _ conninfo: String, console: Console, printer: MessagePrinter) throws {
        let folder = try BatchSource.isFolder(source)
        if folder, out == nil {
            throw UsageError(description: "queue add: a folder of jobs needs '--out <dir>' for the outputs")
        }
        // The list is read before connecting: a bad line costs no connection.
        let jobs = try BatchSource.jobs(from: source, out: out, settings: settings)
        if !inputsElsewhere { try QueuedInputs.check(jobs) }
        if let out {
            if folder {
                try SharedOptions.checkLooseClips(
                    in: source, jobs: jobs.count, out: out, command: "queue add", printer: printer)
            }
            try BatchSource.makeOutputFolder(out)
        }
        let additions = try JobQueue(connecting: conninfo).add(jobs, maxAttempts: maxAttempts)
        if json {
            // Each job as the queue keeps it: the body `POST /api/v1/jobs` takes, in the same words.
            let entries: [JSON] = zip(additions, jobs).map { addition, job in
                .object([
                    ("id", .int(addition.id)), ("added", .bool(addition.added)),
                    ("job", JobSpec.json(of: JobSpec.absolute(job))),
                ])
            }
            let added = additions.filter(\.added).count
            let summary: JSON = .object([
                ("jobs", .array(entries)), ("added", .int(added)), ("existing", .int(additions.count - added)),
            ])
            return console.output(summary.text(pretty: true) + "\n")
        }
        var text = additions.map { "\($0.added ? "added" : "exists") \($0.id) \(VisibleText.of($0.name))\n" }.joined()
        let added = additions.filter(\.added).count
        text += "\(added) added, \(additions.count - added) already there\n"
        console.output(text)
    }

    private func status(_ conninfo: String, parsed filter: Listing?, console: Console) throws {
        let queue = try JobQueue(connecting: conninfo)
        var status = try queue.status(listing: filter == nil)
        if let filter { status.jobs = try queue.page(filter.filter, before: nil, limit: filter.limit).jobs }
        if json {
            console.output(status.json.text(pretty: true) + "\n")
            return
        }
        var text = QueueState.allCases.map { "\(status.counts[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ") + "\n"
        if let pause = status.paused { text += "paused since \(pause.sinceText) by \(VisibleText.of(pause.by))\n" }
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
            text += QueueCommand.columns(rows)
        }
        console.output(text)
    }

    /// pause or resume: one line, whether it changed anything or not (either way the queue is as
    /// asked: exit 0).
    private func pauseOrResume(_ conninfo: String, console: Console) throws {
        let queue = try JobQueue(connecting: conninfo)
        if action == .resume {
            console.output(try queue.resume() ? "queue: resumed: workers claim jobs again\n" : "queue: not paused\n")
        } else if try queue.pause(by: QueueCommand.operatorName) {
            console.output("queue: paused: running jobs go on; workers claim nothing new until 'vmerge queue resume'\n")
        } else if let pause = try queue.paused() {
            console.output("queue: paused already, since \(pause.sinceText) by \(VisibleText.of(pause.by))\n")
        } else {
            // Resumed between the two reads.
            console.output("queue: not paused (resumed meanwhile)\n")
        }
    }

    /// retry --state: a line per job queued again, then how many.
    private func retryAll(_ state: QueueState, name: String?, _ conninfo: String, console: Console) throws {
        let retried = try JobQueue(connecting: conninfo).retryAll(
            in: state, nameContains: name, by: QueueCommand.operatorName)
        let lines = retried.map { "queued \($0.id) \(VisibleText.of($0.name))\n" }.joined()
        console.output(lines + "\(retried.count) \(state.rawValue) job\(retried.count == 1 ? "" : "s") queued again\n")
    }

    /// Who pauses, as the queue records it: `<user>@<host>`.
    static var operatorName: String {
        let user = getpwuid(geteuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "uid \(geteuid())"
        return "\(user)@\(shortHostName)"
    }

    /// retry or cancel: a line per job changed; a job not there, or in a state the change does not
    /// apply to, is an error (and the exit status 1), said once the others are changed.
    private func change(_ ids: [Int64], _ conninfo: String, console: Console) throws -> Exit {
        let queue = try JobQueue(connecting: conninfo)
        let retrying = action == .retry(ids)
        var errors: [Diagnostic] = []
        for id in ids {
            let who = QueueCommand.operatorName
            switch try retrying ? queue.retry(id, by: who) : queue.cancel(id, by: who) {
            case let .changed(name, was):
                let note = !retrying && was == .running ? " (running: its worker stops it at its next heartbeat)" : ""
                console.output("\(retrying ? "queued" : "cancelled") \(id) \(VisibleText.of(name))\(note)\n")
            case .notFound:
                errors.append(Diagnostic(.error, about: .label("job \(id)"), "not in the queue"))
            case let .refused(name, state):
                let wanted =
                    retrying ? "a failed or cancelled job can be retried" : "a queued or running job can be cancelled"
                errors.append(
                    Diagnostic(.error, about: .label("job \(id) (\(name))"), "\(state.rawValue); only \(wanted)"))
            }
        }
        guard errors.isEmpty else { throw CommandFailure(.failure, errors) }
        return .success
    }

    /// Rows in columns two spaces apart; the last column as it is.
    static func columns(_ rows: [[String]]) -> String {
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
