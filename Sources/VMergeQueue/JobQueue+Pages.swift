import VMergeCore

/// One job as its page shows it. Times are seconds since 1970 (UTC), as in QueueSnapshot.
package struct JobDetail: Sendable, Equatable {
    package var id: Int64
    package var name: String
    package var state: QueueState
    package var attempts: Int
    package var maxAttempts: Int
    /// The worker running it, or that ran it last.
    package var worker: String?
    package var createdAt: Double?
    package var startedAt: Double?
    package var finishedAt: Double?
    /// A job put back after a retryable error waits until then.
    package var notBefore: Double?
    /// When its worker last claimed it or renewed its lease.
    package var heartbeatAt: Double?
    /// The last attempt's error.
    package var error: String?
    /// The job as added (inputs, output, options), read back as a worker reads it; nil when its
    /// spec cannot be read, and then `specError` says why.
    package var job: Job?
    package var specError: String?
    /// How far its merge has got (the same reading as QueueSnapshot.RunningJob's), kept when it
    /// ends.
    package var progress: MergeProgress?
    /// The last attempt's run report, as `vmerge --report` writes it (JSON text); nil before an
    /// attempt has ended, and while one runs.
    package var report: String?
    /// What the workers said about it, every attempt's, oldest first (JobLog's lines).
    package var log: [String]
}

/// Which jobs a page lists.
package struct JobFilter: Sendable, Equatable {
    /// nil: every state.
    package var state: QueueState?
    /// Jobs whose name holds this text, in any case (nil or empty: every name).
    package var nameContains: String?

    package init(state: QueueState? = nil, nameContains: String? = nil) {
        self.state = state
        self.nameContains = nameContains
    }
}

/// A page of jobs, newest first.
package struct JobPage: Sendable, Equatable {
    package var jobs: [QueuedJob]
    /// How many jobs the filter matches, on every page.
    package var total: Int
    /// The `before` of the next (older) page; nil on the last.
    package var nextBefore: Int64?
}

extension JobQueue {
    /// The most a page lists.
    package static let pageLimit = 500

    /// The job `id` as its page shows it; nil when there is none.
    package func detail(_ id: Int64) throws -> JobDetail? {
        // The log is bounded when written; read bounded too, as a row written by hand may be anything.
        let rows = try connection.execute(
            """
            SELECT id, name, state, attempts, max_attempts, worker, extract(epoch FROM created_at),
                extract(epoch FROM started_at), extract(epoch FROM finished_at), extract(epoch FROM not_before),
                extract(epoch FROM heartbeat_at), last_error, spec::text, report::text,
                right(log, \(JobLog.maxBytes)), \(PublishedProgress.columns)
            FROM vmerge.jobs WHERE id = $1::bigint
            """, ["\(id)"])
        guard rows.rowCount == 1 else { return nil }
        let text = { rows.value(0, $0) }
        let time = { text($0).flatMap { Double($0) } }
        var detail = JobDetail(
            id: id, name: text(1) ?? "", state: text(2).flatMap(QueueState.init) ?? .failed,
            attempts: text(3).flatMap { Int($0) } ?? 0, maxAttempts: text(4).flatMap { Int($0) } ?? 0,
            worker: text(5), createdAt: time(6), startedAt: time(7), finishedAt: time(8), notBefore: time(9),
            heartbeatAt: time(10), error: text(11), progress: PublishedProgress.read(rows, row: 0, from: 15),
            report: text(13), log: (text(14) ?? "").split(separator: "\n").suffix(JobLog.maxLines).map(String.init))
        do {
            detail.job = try JobSpec.job(from: text(12) ?? "", file: "job \(id)")
        } catch {
            detail.specError = VMergeError.message(of: error)
        }
        return detail
    }

    /// Up to `limit` jobs the filter matches, newest (highest id) first, below `before` when
    /// given: each page's `nextBefore` is the next one's `before` (keyset paging: a deep page costs
    /// what the first does, and jobs added meanwhile shift nothing). Counting and listing are one
    /// statement, so they agree.
    package func page(_ filter: JobFilter, before: Int64?, limit: Int) throws -> JobPage {
        let limit = max(1, min(limit, JobQueue.pageLimit))
        let (statement, parameters) = JobQueue.pageStatement(filter, before: before, limit: limit)
        let rows = try connection.execute(statement, parameters)
        let total = rows.value(0, 0).flatMap { Int($0) } ?? 0
        // Without a job, the one row holds the count and NULLs.
        var jobs = (0..<rows.rowCount).filter { rows.value($0, 1) != nil }.map { QueuedJob(rows, row: $0, from: 1) }
        var next: Int64?
        if jobs.count > limit {
            jobs.removeLast()
            next = jobs.last?.id
        }
        return JobPage(jobs: jobs, total: total, nextBefore: next)
    }

    /// The statement `page` runs: the count of the matching jobs, then up to `limit` + 1 of them
    /// (one more than shown: whether there is a next page). Only the conditions the filter needs
    /// are written (each value a parameter), so that the planner sees an index's own shape. Nothing
    /// is scanned (QueueSchema's version 4): without a name the count is the state's (or every
    /// state's) from `job_counts`, in the same snapshot as the list, so they agree; a name is
    /// found through the index of the names' suffixes, once: the ids that match are kept, then
    /// counted and paged.
    static func pageStatement(_ filter: JobFilter, before: Int64?, limit: Int) -> (String, [String?]) {
        var conditions: [String] = []
        var parameters: [String?] = ["\(limit + 1)"]
        var stateCondition = ""
        if let state = filter.state {
            parameters.append(state.rawValue)
            conditions.append("state = $\(parameters.count)")
            stateCondition = "WHERE state = $\(parameters.count)"
        }
        let byName = filter.nameContains.map { !$0.isEmpty } ?? false
        // The index holds 32 characters of each suffix: longer text is matched in full too (the
        // planner drops this for shorter text, its value being known when it plans).
        if let name = filter.nameContains, byName {
            conditions += JobQueue.nameConditions(name, parameters: &parameters)
        }
        let matching = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        var below = ""
        if let before {
            parameters.append("\(before)")
            below = "id < $\(parameters.count)::bigint"
        }
        let listed = conditions + (below.isEmpty ? [] : [below])
        let columns = QueuedJob.columns
        let statement =
            byName
            ? """
            WITH matching AS MATERIALIZED (SELECT id FROM vmerge.jobs \(matching))
            SELECT total.n, page.* FROM (SELECT count(*) AS n FROM matching) AS total
            LEFT JOIN LATERAL (
                SELECT \(columns) FROM vmerge.jobs WHERE id IN (
                    SELECT id FROM matching \(below.isEmpty ? "" : "WHERE " + below) ORDER BY id DESC LIMIT $1::integer)
                ORDER BY id DESC
            ) AS page ON true
            """
            : """
            SELECT total.n, page.* FROM (
                SELECT coalesce(sum(jobs), 0) AS n FROM vmerge.job_counts \(stateCondition)
            ) AS total
            LEFT JOIN LATERAL (
                SELECT \(columns) FROM vmerge.jobs \(listed.isEmpty ? "" : "WHERE " + listed.joined(separator: " AND "))
                ORDER BY id DESC LIMIT $1::integer
            ) AS page ON true
            """
        return (statement, parameters)
    }

    /// `text` matched literally by LIKE: its `\`, `%` and `_` escaped (ESCAPE '\').
    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
