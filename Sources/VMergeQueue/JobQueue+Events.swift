import VMergeCore
import VMergeRemote

/// An event a worker owes a receiver (the outbox's row): where, its webhook-id, its type and its
/// body, signed only when sent.
package struct OutboxEvent: Sendable, Equatable {
    package var id: Int64 = 0
    package var url: String
    package var eventID: String
    package var type: String
    package var payload: String
    package var attempts = 0

    package init(url: String, eventID: String, type: String, payload: String) {
        self.url = url
        self.eventID = eventID
        self.type = type
        self.payload = payload
    }

    /// `event` for each of `urls` (a URL named twice gets it once), each with a webhook-id of
    /// its own.
    static func each(_ event: JobEvent, to urls: [String]) -> [OutboxEvent] {
        let payload = event.payload.text()
        var seen: Set<String> = []
        return urls.filter { seen.insert($0).inserted }.map {
            OutboxEvent(url: $0, eventID: WebhookSender.eventID(), type: event.kind.rawValue, payload: payload)
        }
    }
}

/// The outbox as a page and metrics read it.
package struct OutboxFigures: Sendable, Equatable {
    package var waiting: Int
    package var delivered: Int
    package var givenUp: Int
    /// Seconds the oldest waiting event has waited (0: none waits).
    package var oldestWaitingSeconds: Double
}

extension JobQueue {
    /// How long an event is tried before it is given up: three days, as webhook senders do.
    static let eventLifetime = "3 days"
    /// How long a worker holds the events it took to send: another takes them after that.
    static let eventLease = 120.0

    /// Writes `events` for job `id` (in the caller's transaction, with the state they tell of).
    func enqueue(_ events: [OutboxEvent], job id: Int64) throws {
        for event in events {
            _ = try connection.execute(
                "INSERT INTO vmerge.events (job_id, url, event_id, type, payload) VALUES ($1::bigint, $2, $3, $4, $5)",
                ["\(id)", event.url, event.eventID, event.type, event.payload])
        }
    }

    /// `body`'s change and the events its result calls for, in one transaction: the events are
    /// written if and only if the change is.
    package func recording<T>(
        job id: Int64, events: (T) -> [OutboxEvent], _ body: (JobQueue) throws -> T
    ) throws -> T {
        try connection.transaction {
            let result = try body(self)
            try enqueue(events(result), job: id)
            return result
        }
    }

    /// `job.cancelled` for job `id`'s own receivers (its spec's `notify`), with its metadata.
    func cancelledEvents(of id: Int64) throws -> [OutboxEvent] {
        try ownEvents(of: id, .cancelled, data: [("report", .null)])
    }

    /// An event of `kind` for job `id`'s own receivers (its spec's `notify`), with its metadata:
    /// what the queue itself says when no worker is there to (a queued job cancelled, a job whose
    /// worker died on its last attempt).
    func ownEvents(of id: Int64, _ kind: JobEvent.Kind, data: [(String, JSON)]) throws -> [OutboxEvent] {
        let row = try connection.execute("SELECT name, spec::text FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"])
        guard let name = row.value(0, 0), let text = row.value(0, 1),
            let job = try? JobSpec.job(from: text, file: "job \(id)"), !job.notify.isEmpty
        else { return [] }
        return OutboxEvent.each(
            JobEvent(kind, job: name, output: job.output.escaped, queueID: id, metadata: job.metadata, data: data),
            to: job.notify)
    }

    /// Writes `events` for job `id` on their own (a job's start).
    package func enqueueEvents(_ events: [OutboxEvent], job id: Int64) throws {
        guard !events.isEmpty else { return }
        try connection.transaction { try enqueue(events, job: id) }
    }

    /// Takes up to `limit` events due now, oldest first, for `eventLease` seconds: events another
    /// worker holds are skipped, and one whose holder died is due again when its lease ends.
    /// `skipping`: receivers whose events are not taken now (a lane of this worker's still
    /// sends to them).
    package func takeDueEvents(
        limit: Int, lease: Double = JobQueue.eventLease, skipping receivers: Set<String> = []
    ) throws -> [OutboxEvent] {
        let skipped = JSON.array(receivers.sorted().map { .string($0) }).text()
        let rows = try connection.execute(
            """
            UPDATE vmerge.events SET attempts = attempts + 1,
                next_attempt_at = now() + make_interval(secs => $2::double precision)
            WHERE id IN (
                SELECT id FROM vmerge.events
                WHERE delivered_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= now()
                    AND url NOT IN (SELECT jsonb_array_elements_text($3::jsonb))
                ORDER BY id LIMIT $1::integer FOR UPDATE SKIP LOCKED)
            RETURNING id, url, event_id, type, payload, attempts
            """, ["\(limit)", "\(lease)", skipped])
        return (0..<rows.rowCount).map { row in
            var event = OutboxEvent(
                url: rows.value(row, 1) ?? "", eventID: rows.value(row, 2) ?? "", type: rows.value(row, 3) ?? "",
                payload: rows.value(row, 4) ?? "")
            event.id = rows.value(row, 0).flatMap { Int64($0) } ?? 0
            event.attempts = rows.value(row, 5).flatMap { Int($0) } ?? 1
            return event
        }.sorted { $0.id < $1.id }
    }

    /// Records a try of event `id`: delivered, or why not and when to try again (given up past
    /// `eventLifetime`).
    package func recordDelivery(_ id: Int64, error: String?, retryAfter seconds: Double) throws {
        if error == nil {
            _ = try connection.execute(
                "UPDATE vmerge.events SET delivered_at = now(), last_error = NULL WHERE id = $1::bigint", ["\(id)"])
            return
        }
        _ = try connection.execute(
            """
            UPDATE vmerge.events SET last_error = $2,
                next_attempt_at = now() + make_interval(secs => $3::double precision),
                given_up_at = CASE WHEN created_at < now() - interval '\(JobQueue.eventLifetime)' THEN now() END
            WHERE id = $1::bigint
            """, ["\(id)", error, "\(seconds)"])
    }

    /// Puts back event `id`, taken but not tried (its receiver failed the event before it): due
    /// again in `seconds`, its try not counted.
    package func putBackEvent(_ id: Int64, retryAfter seconds: Double) throws {
        _ = try connection.execute(
            """
            UPDATE vmerge.events SET attempts = greatest(0, attempts - 1),
                next_attempt_at = now() + make_interval(secs => $2::double precision)
            WHERE id = $1::bigint AND delivered_at IS NULL
            """, ["\(id)", "\(seconds)"])
    }

    /// Forgets events delivered or given up more than a week ago (the outbox would otherwise grow
    /// with every job for ever); how many.
    @discardableResult
    package func pruneEvents() throws -> Int {
        try connection.execute(
            """
            DELETE FROM vmerge.events
            WHERE coalesce(delivered_at, given_up_at) < now() - interval '7 days'
            RETURNING id
            """
        ).rowCount
    }

    /// The outbox's figures.
    package func outboxFigures() throws -> OutboxFigures {
        let row = try connection.execute(
            """
            SELECT count(*) FILTER (WHERE delivered_at IS NULL AND given_up_at IS NULL),
                count(*) FILTER (WHERE delivered_at IS NOT NULL), count(*) FILTER (WHERE given_up_at IS NOT NULL),
                coalesce(extract(epoch FROM now() - min(created_at)
                    FILTER (WHERE delivered_at IS NULL AND given_up_at IS NULL)), 0)
            FROM vmerge.events
            """)
        let int = { row.value(0, $0).flatMap { Int($0) } ?? 0 }
        return OutboxFigures(
            waiting: int(0), delivered: int(1), givenUp: int(2),
            oldestWaitingSeconds: row.value(0, 3).flatMap { Double($0) } ?? 0)
    }
}
