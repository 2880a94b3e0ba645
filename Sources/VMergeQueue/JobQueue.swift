import Foundation
import VMergeCore
import VMergeJobs

/// Where a queued job stands.
package enum QueueState: String, Sendable, CaseIterable {
    case queued, running, done, failed, cancelled
}

/// One job as `queue status` lists it. Times are UTC, ISO 8601, to the second.
package struct QueuedJob: Sendable, Equatable {
    package var id: Int64
    package var name: String
    package var state: QueueState
    package var attempts: Int
    package var maxAttempts: Int
    /// The worker running it, or that ran it last.
    package var worker: String?
    package var output: String?
    package var createdAt: String?
    package var startedAt: String?
    package var finishedAt: String?
    /// A job put back after a retryable error waits until then.
    package var notBefore: String?
    package var leaseUntil: String?
    /// The last attempt's error.
    package var error: String?

    package var json: JSON {
        .object([
            ("id", .int(id)), ("name", .string(name)), ("state", .string(state.rawValue)),
            ("attempts", .int(attempts)), ("max_attempts", .int(maxAttempts)), ("worker", .string(worker)),
            ("output", .string(output)), ("created_at", .string(createdAt)), ("started_at", .string(startedAt)),
            ("finished_at", .string(finishedAt)), ("not_before", .string(notBefore)),
            ("lease_until", .string(leaseUntil)), ("error", .string(error)),
        ])
    }
}

extension QueuedJob {
    /// What a statement selects (from vmerge.jobs) to read a row with `init(_:row:)`.
    static let columns = """
        id, name, state, attempts, max_attempts, worker, spec->>'output', \(utc("created_at")), \(utc("started_at")),
        \(utc("finished_at")), \(utc("not_before")), \(utc("lease_until")), last_error
        """

    /// A row of `columns` (from column `first` on): what `status`, `latest` and `page` list. A row
    /// written by hand cannot make the read fail (an unknown state reads as failed).
    init(_ rows: PGResult, row: Int, from first: Int = 0) {
        let text = { rows.value(row, first + $0) }
        self.init(
            id: text(0).flatMap { Int64($0) } ?? 0, name: text(1) ?? "",
            state: text(2).flatMap(QueueState.init) ?? .failed, attempts: text(3).flatMap { Int($0) } ?? 0,
            maxAttempts: text(4).flatMap { Int($0) } ?? 0, worker: text(5),
            output: text(6), createdAt: text(7), startedAt: text(8), finishedAt: text(9), notBefore: text(10),
            leaseUntil: text(11), error: text(12))
    }
}

/// The queue as `queue status` shows it: how many jobs are in each state, and every job.
package struct QueueStatus: Sendable, Equatable {
    package var counts: [QueueState: Int]
    package var jobs: [QueuedJob]
    /// Set while the queue is paused.
    package var paused: QueueSnapshot.Pause?

    package var json: JSON {
        .object([
            ("counts", .object(QueueState.allCases.map { ($0.rawValue, .int(counts[$0] ?? 0)) })),
            ("paused", paused.map { .object([("since", .string($0.sinceText)), ("by", .string($0.by))]) } ?? .null),
            ("jobs", .array(jobs.map(\.json))),
        ])
    }
}

/// The job queue in one database: adding jobs, listing them, putting them back or cancelling
/// them (the claims a worker makes are in JobQueue+Claims.swift).
package final class JobQueue {
    package let connection: PGConnection

    /// Connects, and refuses a database whose queue is missing or at another schema version.
    package convenience init(connecting conninfo: String) throws {
        let connection = try PGConnection(conninfo)
        try QueueSchema.check(connection)
        self.init(connection: connection)
    }

    package init(connection: PGConnection) { self.connection = connection }

    /// What `add` did with one job.
    package struct Addition: Sendable, Equatable {
        package var id: Int64
        package var name: String
        /// false: a job with the same key was there already (whatever its state).
        package var added: Bool
    }

    /// Adds `jobs` (their paths made absolute here) in one transaction; a job whose key is there
    /// already is left as it is.
    package func add(_ jobs: [Job], maxAttempts: Int) throws -> [Addition] {
        try connection.transaction { try addInTransaction(jobs, maxAttempts: maxAttempts) }
    }

    /// `add`'s work, in the caller's transaction.
    func addInTransaction(_ jobs: [Job], maxAttempts: Int) throws -> [Addition] {
        try jobs.map { job in
            let job = JobSpec.absolute(job)
            let key = JobSpec.key(of: job)
            let inserted = try connection.execute(
                """
                INSERT INTO vmerge.jobs (job_key, name, spec, max_attempts)
                VALUES ($1, $2, $3::jsonb, $4::integer)
                ON CONFLICT (job_key) DO NOTHING RETURNING id
                """, [key, job.name, JobSpec.json(of: job).text(), "\(maxAttempts)"])
            if let id = inserted.value(0, 0).flatMap({ Int64($0) }) {
                return Addition(id: id, name: job.name, added: true)
            }
            // Added before, perhaps under another name: this queue's id and name for it.
            let existing = try connection.execute("SELECT id, name FROM vmerge.jobs WHERE job_key = $1", [key])
            guard let id = existing.value(0, 0).flatMap({ Int64($0) }) else {
                throw VMergeError.database(
                    target: connection.target, message: "job \(job.name) vanished while added")
            }
            return Addition(id: id, name: existing.value(0, 1) ?? job.name, added: false)
        }
    }

    /// How many jobs are in each state (a state without jobs is left out).
    package func counts() throws -> [QueueState: Int] { try JobQueue.counts(connection) }

    /// The counts as `vmerge.job_counts` keeps them (a few rows whatever the number of jobs).
    static func counts(_ connection: PGConnection) throws -> [QueueState: Int] {
        let counts = try connection.execute(SnapshotStatement.counts)
        var byState: [QueueState: Int] = [:]
        for row in 0..<counts.rowCount {
            if let state = counts.value(row, 0).flatMap(QueueState.init),
                let n = counts.value(row, 1).flatMap({ Int($0) })
            {
                byState[state] = n
            }
        }
        return byState
    }

    /// Every job, by id, and the counts per state.
    /// The counts, whether the queue is paused, and (`listing`) every job.
    package func status(listing: Bool = true) throws -> QueueStatus {
        let byState = try counts()
        guard listing else { return QueueStatus(counts: byState, jobs: [], paused: try paused()) }
        let rows = try connection.execute("SELECT \(QueuedJob.columns) FROM vmerge.jobs ORDER BY id")
        let jobs = (0..<rows.rowCount).map { QueuedJob(rows, row: $0) }
        return QueueStatus(counts: byState, jobs: jobs, paused: try paused())
    }

    /// What `retry` or `cancel` did with one job.
    package enum Change: Sendable, Equatable {
        case changed(name: String, was: QueueState)
        case notFound
        /// The job is in a state this change does not apply to.
        case refused(name: String, state: QueueState)
    }

    /// A failed or cancelled job queued again, its attempts counted from 0. `who` (the command
    /// line's user, the dashboard's or the API's token) is said in the job's log.
    package func retry(_ id: Int64, by who: String? = nil) throws -> Change {
        try change(
            id, from: [.failed, .cancelled],
            set:
                "state = 'queued', attempts = 0, not_before = now(), lease_until = NULL, started_at = NULL, finished_at = NULL, "
                + "progress = NULL",
            saying: "queued again", by: who
        )
    }

    /// A queued job cancelled; a running one too, and its worker stops it at its next heartbeat
    /// (and says `job.cancelled`). A queued one's `job.cancelled` is written here, with the change,
    /// for the job's own receivers: no worker will run it to say so.
    package func cancel(_ id: Int64, by who: String? = nil) throws -> Change {
        try connection.transaction {
            let change = try change(
                id, from: [.queued, .running], set: "state = 'cancelled', lease_until = NULL, finished_at = now()",
                saying: "cancelled", by: who)
            if case .changed(_, .queued) = change { try enqueue(try cancelledEvents(of: id), job: id) }
            return change
        }
    }

    private func change(
        _ id: Int64, from states: [QueueState], set assignments: String, saying what: String, by who: String?
    ) throws -> Change {
        var line = JobLog(worker: who ?? "")
        line.append(what)
        let changed = try connection.execute(
            """
            UPDATE vmerge.jobs SET \(assignments), log = \(JobQueue.appendLog("$3"))
            FROM (SELECT id, state FROM vmerge.jobs WHERE id = $1::bigint FOR UPDATE) AS before
            WHERE vmerge.jobs.id = before.id AND before.state = ANY($2::text[])
            RETURNING vmerge.jobs.name, before.state
            """,
            ["\(id)", "{" + states.map(\.rawValue).joined(separator: ",") + "}", who == nil ? nil : line.lines.first])
        if let name = changed.value(0, 0), let was = changed.value(0, 1).flatMap(QueueState.init) {
            return .changed(name: name, was: was)
        }
        let found = try connection.execute("SELECT name, state FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"])
        guard let name = found.value(0, 0), let state = found.value(0, 1).flatMap(QueueState.init) else {
            return .notFound
        }
        return .refused(name: name, state: state)
    }
}

/// A timestamptz column as UTC ISO 8601 text (NULL stays NULL).
func utc(_ column: String) -> String {
    "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
}

/// A time as UTC ISO 8601 to the second, as `utc` writes a column.
func utcText(_ time: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: time)
}
