import Foundation
import VMergeCore
import VMergeJobs

/// A job a worker holds. Its lease lasts while the worker renews it (`heartbeat`); the worker and
/// the claim's number together are its proof: once the lease has run out and another claim took
/// the job, this one can no longer renew, finish or fail it.
package struct Claim: Sendable, Equatable {
    package var id: Int64
    package var name: String
    package var worker: String
    /// 1 for the first try, counting every claim since the job was added (or retried).
    package var attempt: Int
    package var maxAttempts: Int
    /// The job's claims so far, this one included (never reset, unlike attempts).
    package var number: Int
    /// The job as added: a job-list line (JobSpec).
    package var spec: String

    package func job() throws -> Job { try JobSpec.job(from: spec, file: "job \(id)") }
}

extension JobQueue {
    /// How long a claim lasts without a heartbeat.
    package static let defaultLease: Double = 60

    /// The wait before a job put back after a retryable error is tried again: 5 s after the
    /// first attempt, doubling, at most 5 minutes.
    package static func backoff(afterAttempt attempt: Int) -> Double {
        min(300, 5 * pow(2, Double(max(0, min(attempt - 1, 16)))))
    }

    /// Takes the oldest job that is queued (and due) or whose lease ran out, for `worker`; nil when
    /// there is none. Claims by many workers at once never take one job twice (SKIP LOCKED: each
    /// takes the first row no other is taking). A job whose lease ran out on its last attempt is
    /// failed instead. While the queue is paused (`pause`), nothing is taken.
    package func claim(worker: String, lease: Double = JobQueue.defaultLease) throws -> Claim? {
        // Failed for good with no worker to say so: its job.failed is written here, with the change.
        try connection.transaction {
            let failed = try connection.execute(
                """
                UPDATE vmerge.jobs SET state = 'failed', lease_until = NULL, finished_at = now(),
                    last_error = 'worker ' || coalesce(worker, '?') || ' stopped renewing its lease (attempt '
                        || attempts || ' of ' || max_attempts || ')'
                WHERE state = 'running' AND lease_until < now() AND attempts >= max_attempts
                RETURNING id, last_error, worker
                """)
            try noteEnds(of: failed, workerColumn: 2, result: "failed")
            for row in 0..<failed.rowCount {
                guard let id = failed.value(row, 0).flatMap({ Int64($0) }) else { continue }
                let error: JSON = .object([("file", .null), ("message", .string(failed.value(row, 1)))])
                try enqueue(
                    try ownEvents(
                        of: id, .failed, data: [("error", error), ("retryable", .bool(false)), ("report", .null)]),
                    job: id)
            }
        }
        // A row whose counters are at the integer's limit (written by hand, or after billions of
        // claims) would make every claim fail on "integer out of range" and stall the whole queue:
        // it is failed, saying why, and the claim goes on to the next.
        try connection.execute(
            """
            UPDATE vmerge.jobs SET state = 'failed', lease_until = NULL, finished_at = now(),
                last_error = 'its attempts (' || attempts || ') or claims (' || claims
                    || ') reached the counter''s limit; vmerge queue retry resets the attempts'
            WHERE state IN ('queued', 'running') AND (attempts >= 2147483647 OR claims >= 2147483647)
                AND (state = 'queued' OR lease_until < now())
            """)
        let claimed = try connection.execute(
            """
            UPDATE vmerge.jobs SET state = 'running', worker = $1, attempts = attempts + 1, claims = claims + 1,
                lease_until = now() + make_interval(secs => $2::double precision), started_at = now(),
                finished_at = NULL, heartbeat_at = now(), progress = NULL, report = NULL
            WHERE id = (
                SELECT id FROM vmerge.jobs
                WHERE ((state = 'queued' AND not_before <= now())
                        OR (state = 'running' AND lease_until < now() AND attempts < max_attempts))
                    AND NOT EXISTS (SELECT FROM vmerge.control WHERE paused_at IS NOT NULL)
                ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING id, name, attempts, max_attempts, claims, spec::text
            """, [worker, "\(lease)"])
        guard let id = claimed.value(0, 0).flatMap({ Int64($0) }) else { return nil }
        return Claim(
            id: id, name: claimed.value(0, 1) ?? "", worker: worker,
            attempt: claimed.value(0, 2).flatMap { Int($0) } ?? 0,
            maxAttempts: claimed.value(0, 3).flatMap { Int($0) } ?? 0,
            number: claimed.value(0, 4).flatMap { Int($0) } ?? 0,
            spec: claimed.value(0, 5) ?? "{}")
    }

    /// What a heartbeat found.
    package enum Heartbeat: Sendable, Equatable {
        /// The lease runs `lease` seconds from now.
        case renewed
        /// The job was cancelled (`queue cancel`): stop it.
        case cancelled
        /// Another claim holds the job now (this one's lease ran out): stop it, record nothing.
        case lost
    }

    /// Renews the claim's lease and publishes how far the job has got (`progress`, a
    /// MergeProgress's JSON; nil keeps what was published last), in one statement.
    package func heartbeat(
        _ claim: Claim, lease: Double = JobQueue.defaultLease, progress: String? = nil
    ) throws -> Heartbeat {
        let renewed = try connection.execute(
            """
            UPDATE vmerge.jobs SET lease_until = now() + make_interval(secs => $4::double precision),
                heartbeat_at = now(), progress = coalesce($5::jsonb, progress)
            WHERE id = $1::bigint AND state = 'running' AND worker = $2 AND claims = $3::integer
            RETURNING id
            """, fence(claim) + ["\(lease)", progress])
        if renewed.rowCount == 1 { return .renewed }
        let found = try connection.execute(
            "SELECT state FROM vmerge.jobs WHERE id = $1::bigint AND worker = $2 AND claims = $3::integer",
            fence(claim))
        return found.value(0, 0) == QueueState.cancelled.rawValue ? .cancelled : .lost
    }

    /// Marks the job done, its `progress` the last the worker had (nil keeps the published one),
    /// with the attempt's `report` (a RunReport's JSON) and `log` lines (JobLog's, added to the
    /// row's); false if the claim no longer holds it (taken over, or retried since). A job
    /// cancelled in the queue while this claim held it is done all the same: its output is
    /// published, and the row says what is on disk (see `attemptEnds`).
    package func complete(_ claim: Claim, progress: String? = nil, report: String? = nil, log: [String] = []) throws
        -> Bool
    {
        try finish(
            claim, noting: "done",
            set: "state = 'done', lease_until = NULL, finished_at = now(), last_error = NULL, "
                + "progress = coalesce($4::jsonb, progress), report = $5::jsonb, log = \(JobQueue.appendLog("$6"))",
            progress, report, JobQueue.logText(log))
    }

    /// What `fail` did with the job.
    package enum Failure: Sendable, Equatable {
        /// Queued again, tried once its backoff has passed.
        case retrying(afterSeconds: Double)
        /// Failed for good: not retryable, or its last attempt.
        case failed
        /// Cancelled in the queue while the attempt ran: left cancelled (never retried), with
        /// the attempt's error, report and log.
        case cancelled
        /// The claim no longer holds the job: nothing was recorded.
        case lost
    }

    /// Records the attempt's error. A retryable one (output side: a write error, a full disk)
    /// queues the job again after a backoff while attempts remain; any other (a bad input) fails
    /// it at once.
    /// `progress`: how far the attempt got (nil keeps the published one); `report` and `log` as
    /// for `complete`. A job cancelled in the queue while this claim held it stays cancelled.
    package func fail(
        _ claim: Claim, error: String, retryable: Bool, progress: String? = nil, report: String? = nil,
        log: [String] = []
    ) throws -> Failure {
        let retry = JobQueue.retry(after: claim, retryable: retryable)
        let again = retry != nil
        let backoff = retry ?? 0
        // SET reads the row as it was: `state` is 'cancelled' only when the cancel came first.
        let recorded = try connection.execute(
            """
            WITH ended AS (
            UPDATE vmerge.jobs SET lease_until = NULL, last_error = $4,
                state = CASE WHEN state = 'cancelled' THEN 'cancelled' WHEN $5::boolean THEN 'queued' ELSE 'failed' END,
                not_before = CASE WHEN state <> 'cancelled' AND $5::boolean
                    THEN now() + make_interval(secs => $6::double precision) ELSE not_before END,
                finished_at = CASE WHEN state = 'cancelled' THEN finished_at WHEN $5::boolean THEN NULL ELSE now() END,
                progress = coalesce($7::jsonb, progress), report = $8::jsonb, log = \(JobQueue.appendLog("$9"))
            WHERE \(JobQueue.attemptEnds)
            RETURNING state, worker),
            noted AS (
                INSERT INTO vmerge.attempt_ends (worker, result)
                SELECT worker, 'failed' FROM ended WHERE state <> 'cancelled')
            SELECT state FROM ended
            """,
            fence(claim) + [error, again ? "true" : "false", "\(backoff)", progress, report, JobQueue.logText(log)])
        guard recorded.rowCount == 1 else { return .lost }
        if recorded.value(0, 0) == QueueState.cancelled.rawValue { return .cancelled }
        return again ? .retrying(afterSeconds: backoff) : .failed
    }

    /// How `fail` treats an attempt's error: queued again after this many seconds, or (nil) failed
    /// for good. A retryable error is retried while attempts remain.
    package static func retry(after claim: Claim, retryable: Bool) -> Double? {
        retryable && claim.attempt < claim.maxAttempts ? backoff(afterAttempt: claim.attempt) : nil
    }

    /// Puts the job back, queued, as if this attempt had not been made (the worker is stopping:
    /// SIGTERM), keeping its `report` (cancelled) and `log` as `complete` does; false if the claim
    /// no longer holds it running (a job cancelled in the queue meanwhile is not put back: see
    /// `recordCancelled`).
    package func release(_ claim: Claim, report: String? = nil, log: [String] = []) throws -> Bool {
        try finish(
            claim, running: true,
            set: "state = 'queued', attempts = attempts - 1, lease_until = NULL, started_at = NULL, "
                + "not_before = now(), progress = NULL, report = $4::jsonb, log = \(JobQueue.appendLog("$5"))",
            report, JobQueue.logText(log))
    }

    /// Keeps the `report`, `log` and last `progress` of an attempt stopped because the job was
    /// cancelled in the queue (`cancel`) while this claim held it; false if the row has moved on
    /// since (retried, claimed again).
    package func recordCancelled(_ claim: Claim, progress: String? = nil, report: String?, log: [String]) throws
        -> Bool
    {
        let recorded = try connection.execute(
            """
            UPDATE vmerge.jobs SET progress = coalesce($4::jsonb, progress), report = $5::jsonb,
                log = \(JobQueue.appendLog("$6"))
            WHERE id = $1::bigint AND state = 'cancelled' AND worker = $2 AND claims = $3::integer
            RETURNING id
            """, fence(claim) + [progress, report, JobQueue.logText(log)])
        return recorded.rowCount == 1
    }

    /// The row's log with `lines` (a parameter: lines joined by newlines, or NULL) added, keeping
    /// the last `JobLog.maxLines` lines and, of those, the last that fit in `JobLog.maxBytes`
    /// (whole lines: each is at most `JobLog.maxLineBytes`).
    static func appendLog(_ lines: String) -> String {
        """
        (SELECT string_agg(line, E'\\n' ORDER BY n) FROM (
            SELECT line, n, sum(octet_length(line) + 1) OVER (ORDER BY n DESC) AS tail
            FROM unnest(string_to_array(concat_ws(E'\\n', log, \(lines)::text), E'\\n')) WITH ORDINALITY AS all_lines (line, n)
            ORDER BY n DESC LIMIT \(JobLog.maxLines)) AS kept
        WHERE tail <= \(JobLog.maxBytes + 1))
        """
    }

    /// Lines as `appendLog` takes them.
    static func logText(_ lines: [String]) -> String? { lines.isEmpty ? nil : lines.joined(separator: "\n") }

    /// The rows an attempt's end is recorded in (parameters $1..$3: `fence`): the job while this
    /// claim holds it, running, or cancelled in the queue while this claim held it. A cancel is a
    /// request the worker sees at its next heartbeat; the attempt may have published its output,
    /// or failed, before it did, and the row must say what happened (a done job whose output is
    /// on disk; a failed attempt's report and log), not drop it. Once the job was retried or
    /// claimed again, the row is no longer this attempt's.
    static let attemptEnds =
        "id = $1::bigint AND worker = $2 AND claims = $3::integer AND state IN ('running', 'cancelled')"

    /// Changes the job as `assignments` say (their parameters from $4: `parameters`), only while
    /// `claim` holds it (`attemptEnds`; with `running`, only while it is running).
    /// `noting`: the attempt's end ('done'), counted in `vmerge.attempt_ends` with the change.
    private func finish(
        _ claim: Claim, running: Bool = false, noting result: String? = nil, set assignments: String,
        _ parameters: String?...
    ) throws -> Bool {
        let update = """
            UPDATE vmerge.jobs SET \(assignments)
            WHERE \(JobQueue.attemptEnds)\(running ? " AND state = 'running'" : "")
            RETURNING id, worker
            """
        let statement =
            result.map {
                "WITH ended AS (\(update)), noted AS (INSERT INTO vmerge.attempt_ends (worker, result) "
                    + "SELECT worker, '\($0)' FROM ended) SELECT id FROM ended"
            } ?? update
        return try connection.execute(statement, fence(claim) + parameters).rowCount == 1
    }

    /// Notes the ends of the attempts in `rows` (their worker in `workerColumn`) as `result`.
    private func noteEnds(of rows: PGResult, workerColumn: Int, result: String) throws {
        for worker in (0..<rows.rowCount).compactMap({ rows.value($0, workerColumn) }) {
            try connection.execute(
                "INSERT INTO vmerge.attempt_ends (worker, result) VALUES ($1, $2)", [worker, result])
        }
    }

    /// Forgets attempt ends older than two days (the page shows one).
    package func pruneAttemptEnds() throws {
        try connection.execute("DELETE FROM vmerge.attempt_ends WHERE ended_at < now() - interval '2 days'")
    }

    /// The parameters $1..$3 that pin a statement to this claim's lease.
    private func fence(_ claim: Claim) -> [String?] { ["\(claim.id)", claim.worker, "\(claim.number)"] }
}
