import VMergeCore

/// A job added through the HTTP API: what it became.
package struct Submission: Sendable, Equatable {
    package enum Outcome: Sendable, Equatable {
        /// A new job.
        case added
        /// The same job (the same inputs, options and output) was in the queue already.
        case existed
        /// A repeat of a request with the same Idempotency-Key: the job the first one made.
        case replayed
    }

    package var id: Int64
    package var outcome: Outcome
}

/// Why a submission was not taken.
package enum SubmissionRefusal: Error, Sendable, Equatable {
    /// As many jobs wait as the operator allows (`--max-queued`).
    case queueFull(waiting: Int, limit: Int)
    /// The key was used, within 24 hours, for another request.
    case keyReused
}

/// A request's Idempotency-Key, scoped to its caller.
package struct IdempotencyKey: Sendable, Equatable {
    package var caller: String
    package var key: String

    package init(caller: String, key: String) {
        self.caller = caller
        self.key = key
    }

    /// How long a key answers its first job.
    static let lifetime = "24 hours"
}

extension JobQueue {
    /// Adds `job` (as `queue add` does, the same job only once) in one transaction with its
    /// idempotency key. Requests with one key take turns on a lock of their own, so any number of
    /// concurrent repeats make one job; a repeat answers the job the first made, whatever became
    /// of it. Refused past `maxQueued` queued jobs (a repeat is still answered).
    package func submit(
        _ job: Job, maxAttempts: Int, idempotency: IdempotencyKey?, maxQueued: Int?
    ) throws -> Result<Submission, SubmissionRefusal> {
        // What a key answers is compared by the job asked for, in the spec's one form: the same
        // job sent with its fields in another order, or spaced otherwise, is a repeat.
        let digest = SHA256.digest(Array(JobSpec.json(of: JobSpec.absolute(job)).text().utf8))
            .map { String(format: "%02x", $0) }.joined()
        return try connection.transaction {
            if let idempotency {
                _ = try connection.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended($1, 48))",
                    [idempotency.caller + "\u{0}" + idempotency.key])
                let earlier = try connection.execute(
                    """
                    SELECT k.job_id, k.request_digest, k.created_at > now() - interval '\(IdempotencyKey.lifetime)'
                    FROM vmerge.idempotency_keys AS k JOIN vmerge.jobs AS j ON j.id = k.job_id
                    WHERE k.caller = $1 AND k.key = $2
                    """, [idempotency.caller, idempotency.key])
                if earlier.rowCount == 1, earlier.value(0, 2) == "t", let id = earlier.value(0, 0).flatMap(Int64.init) {
                    guard earlier.value(0, 1) == digest else { return .failure(.keyReused) }
                    return .success(Submission(id: id, outcome: .replayed))
                }
                _ = try connection.execute(
                    "DELETE FROM vmerge.idempotency_keys WHERE caller = $1 AND key = $2",
                    [idempotency.caller, idempotency.key])
            }
            if let maxQueued {
                let waiting =
                    try connection.execute(
                        "SELECT coalesce(sum(jobs), 0) FROM vmerge.job_counts WHERE state = 'queued'"
                    ).value(0, 0).flatMap { Int($0) } ?? 0
                if waiting >= maxQueued { return .failure(.queueFull(waiting: waiting, limit: maxQueued)) }
            }
            guard let addition = try addInTransaction([job], maxAttempts: maxAttempts).first else {
                throw VMergeError.database(target: connection.target, message: "job \(job.name) was not added")
            }
            if let idempotency {
                _ = try connection.execute(
                    """
                    INSERT INTO vmerge.idempotency_keys (caller, key, job_id, request_digest)
                    VALUES ($1, $2, $3::bigint, $4)
                    """, [idempotency.caller, idempotency.key, "\(addition.id)", digest])
            }
            return .success(Submission(id: addition.id, outcome: addition.added ? .added : .existed))
        }
    }
}
