import Foundation
import VMergeCore

/// What a dashboard or a metrics scrape shows of the queue, read in one snapshot of the database
/// so that the figures agree. Times are seconds since 1970 (UTC), as Prometheus has them.
package struct QueueSnapshot: Sendable, Equatable {
    /// Jobs in each state; every state is there (0 when none).
    package var counts: [QueueState: Int]
    /// How long the queued job that has waited longest for a worker has waited: since it could
    /// first be claimed (`not_before`: when it was added, retried, or its backoff ran out).
    /// 0 when no job is waiting.
    package var oldestPendingAge: Double
    /// When a job last ended in each of done, failed and cancelled; a state no job has ended in
    /// is left out.
    package var lastFinished: [QueueState: Double]
    /// Each worker holding a running job: when its latest lease runs out (every heartbeat moves it
    /// on, so a worker that stopped shows a time in the past) and how many jobs it runs.
    package var workers: [String: WorkerLease]
    /// Each worker heard from in the last day: when it last claimed a job or renewed a lease
    /// (an idle worker holds no lease, and so beats no heart in the queue).
    package var heartbeats: [String: Double] = [:]
    /// The running jobs, by id, with how far each has got.
    package var running: [RunningJob] = []
    /// What each worker heard from in the last day ended in that day (the jobs whose last attempt
    /// was its): done and failed.
    package var finishedByWorker: [String: Finished] = [:]
    /// Events owed to receivers (the outbox's undelivered ones), and how long the oldest has
    /// waited (0: none).
    package var eventsWaiting = 0
    package var oldestEventAge = 0.0
    /// What each worker heard from in the last day said of itself (see `WorkerPresence`).
    package var presences: [String: WorkerPresence] = [:]
    /// How far the current wave has got and how fast jobs finish.
    package var throughput = QueueThroughput()
    /// When the snapshot was read, by the database's clock (what `liveness` is judged at).
    package var readAt = 0.0

    /// Each worker's liveness now: those that said nothing of themselves (an older vmerge) by
    /// their leases alone.
    package var liveness: [String: WorkerPresence.Liveness] {
        var states: [String: WorkerPresence.Liveness] = [:]
        for (name, presence) in presences {
            states[name] = presence.liveness(at: readAt, holdsJobs: workers[name] != nil)
        }
        for (name, lease) in workers where states[name] == nil {
            states[name] = lease.leaseUntil >= readAt ? .running : .silent
        }
        return states
    }

    /// Jobs are queued, the queue is not paused, and no live worker is there to take them.
    package var queuedWithoutWorkers: Bool {
        (counts[.queued] ?? 0) > 0 && paused == nil && !liveness.values.contains { $0 == .running || $0 == .idle }
    }

    package struct Finished: Sendable, Equatable {
        package var done: Int
        package var failed: Int

        package init(done: Int, failed: Int) {
            self.done = done
            self.failed = failed
        }
    }
    /// Set while the queue is paused (`JobQueue.pause`).
    package var paused: Pause?

    package struct WorkerLease: Sendable, Equatable {
        package var leaseUntil: Double
        package var runningJobs: Int

        package init(leaseUntil: Double, runningJobs: Int) {
            self.leaseUntil = leaseUntil
            self.runningJobs = runningJobs
        }
    }

    /// A running job and the progress its worker last published (nil before the first): the
    /// worker's own `MergeProgress`, read back from its JSON.
    package struct RunningJob: Sendable, Equatable {
        package var id: Int64
        package var name: String
        package var worker: String
        package var progress: MergeProgress?
        /// Its first inputs as the job names them (at most `shownInputs`), and how many it has.
        package var inputs: [String] = []
        package var inputCount = 0

        package static let shownInputs = 3
    }
}

extension JobQueue {
    /// The queue now, as `QueueSnapshot` describes it: its reads in one read-only snapshot of
    /// the database, so the figures agree with each other.
    package func snapshot() throws -> QueueSnapshot {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        defer { _ = try? connection.execute("ROLLBACK") }
        var snapshot = QueueSnapshot(
            counts: Dictionary(uniqueKeysWithValues: QueueState.allCases.map { ($0, 0) }), oldestPendingAge: 0,
            lastFinished: [:], workers: [:])
        for (state, jobs) in try JobQueue.counts(connection) { snapshot.counts[state] = jobs }
        let last = try connection.execute(SnapshotStatement.lastFinished)
        for (column, state) in SnapshotStatement.ended.enumerated() {
            snapshot.lastFinished[state] = last.value(0, column).flatMap { Double($0) }
        }
        let waiting = try connection.execute(SnapshotStatement.waiting)
        snapshot.oldestPendingAge = max(0, waiting.value(0, 0).flatMap { Double($0) } ?? 0)
        let workers = try connection.execute(SnapshotStatement.workers)
        for row in 0..<workers.rowCount {
            guard let name = workers.value(row, 0) else { continue }
            snapshot.workers[name] = QueueSnapshot.WorkerLease(
                leaseUntil: workers.value(row, 1).flatMap { Double($0) } ?? 0,
                runningJobs: workers.value(row, 2).flatMap { Int($0) } ?? 0)
        }
        let heartbeats = try connection.execute(SnapshotStatement.heartbeats)
        for row in 0..<heartbeats.rowCount {
            guard let name = heartbeats.value(row, 0), let time = heartbeats.value(row, 1).flatMap({ Double($0) })
            else { continue }
            snapshot.heartbeats[name] = time
            snapshot.finishedByWorker[name] = QueueSnapshot.Finished(
                done: heartbeats.value(row, 2).flatMap { Int($0) } ?? 0,
                failed: heartbeats.value(row, 3).flatMap { Int($0) } ?? 0)
        }
        let events = try connection.execute(SnapshotStatement.events)
        snapshot.eventsWaiting = events.value(0, 0).flatMap { Int($0) } ?? 0
        snapshot.oldestEventAge = max(0, events.value(0, 1).flatMap { Double($0) } ?? 0)
        snapshot.presences = try workerPresences()
        snapshot.throughput = try throughput()
        snapshot.readAt =
            try connection.execute("SELECT extract(epoch FROM now())").value(0, 0).flatMap { Double($0) } ?? 0
        snapshot.running = try runningJobs()
        snapshot.paused = try paused()
        return snapshot
    }

    /// The running jobs with their last published progress.
    private func runningJobs() throws -> [QueueSnapshot.RunningJob] {
        let running = try connection.execute(SnapshotStatement.running)
        let first = 3 + PublishedProgress.columnCount
        return (0..<running.rowCount).map { row in
            QueueSnapshot.RunningJob(
                id: running.value(row, 0).flatMap { Int64($0) } ?? 0, name: running.value(row, 1) ?? "",
                worker: running.value(row, 2) ?? "", progress: PublishedProgress.read(running, row: row, from: 3),
                inputs: inputPaths(running.value(row, first + 1)),
                inputCount: running.value(row, first).flatMap { Int($0) } ?? 0)
        }
    }
}

/// The statements `snapshot` runs, read once a second by a dashboard: each goes through an index
/// or `job_counts` (QueueSchema's version 4), never through every job (JobPageScaleTests explains
/// each at 100,000 jobs).
enum SnapshotStatement {
    /// The outbox's undelivered events (through its partial index) and the oldest one's age.
    static let events = """
        SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0) FROM vmerge.events
        WHERE delivered_at IS NULL AND given_up_at IS NULL
        """
    /// The jobs in each state, from `job_counts` (a few rows, however many jobs).
    static let counts = "SELECT state, sum(jobs) FROM vmerge.job_counts GROUP BY state HAVING sum(jobs) <> 0"
    /// The states whose last end `lastFinished` reads, in its columns' order.
    static let ended: [QueueState] = [.done, .failed, .cancelled]
    /// When a job last ended in each of `ended`: one step down the (state, finished_at) index each.
    static let lastFinished =
        "SELECT "
        + ended.map { "(SELECT extract(epoch FROM max(finished_at)) FROM vmerge.jobs WHERE state = '\($0.rawValue)')" }
        .joined(separator: ", ")
    /// How long the queued job that can be claimed and has waited longest has waited.
    static let waiting = """
        SELECT coalesce(extract(epoch FROM now() - min(not_before)), 0) FROM vmerge.jobs
        WHERE state = 'queued' AND not_before <= now()
        """
    static let workers = """
        SELECT worker, extract(epoch FROM max(lease_until)), count(*) FROM vmerge.jobs
        WHERE state = 'running' AND worker IS NOT NULL GROUP BY worker
        """
    /// A day bounds the series a scrape carries (each worker name, even of workers long gone,
    /// would stay for ever) while a worker that stopped still shows, its heartbeat growing old.
    /// Done and failed count attempts that ended so in the day (`vmerge.attempt_ends`): a
    /// failure retried since still counts, a job failed long ago and untouched does not.
    static let heartbeats = """
        SELECT beats.worker, beats.at,
            (SELECT count(*) FROM vmerge.attempt_ends AS e
                WHERE e.worker = beats.worker AND e.result = 'done' AND e.ended_at > now() - interval '1 day'),
            (SELECT count(*) FROM vmerge.attempt_ends AS e
                WHERE e.worker = beats.worker AND e.result = 'failed' AND e.ended_at > now() - interval '1 day')
        FROM (SELECT worker, extract(epoch FROM max(heartbeat_at)) AS at FROM vmerge.jobs
            WHERE heartbeat_at > now() - interval '1 day' AND worker IS NOT NULL GROUP BY worker) AS beats
        """
    static let running = """
        SELECT id, name, worker, \(PublishedProgress.columns),
            CASE WHEN jsonb_typeof(spec->'inputs') = 'array' THEN jsonb_array_length(spec->'inputs') ELSE 0 END,
            CASE WHEN jsonb_typeof(spec->'inputs') = 'array'
                THEN jsonb_path_query_array(spec->'inputs', '$[0 to \(QueueSnapshot.RunningJob.shownInputs - 1)]')::text
            END
        FROM vmerge.jobs WHERE state = 'running' ORDER BY id
        """
    static let all = [counts, lastFinished, waiting, workers, heartbeats, running]
}

/// A job's progress as its worker published it (`jobs.progress`, a MergeProgress's JSON), read
/// back: as text, parsed here, so that a row written by hand cannot make the read fail.
enum PublishedProgress {
    /// What a statement selects (from vmerge.jobs) for `read`.
    static let columns = """
        progress->>'phase', progress->>'clip', progress->>'clips', progress->>'out_time', progress->>'total_time',
        progress->>'elapsed', progress->>'total_size'
        """
    /// How many `columns` are.
    static let columnCount = 7

    /// The progress in `columns`, from `first` on; nil before the first was published. Every
    /// number is read as MergeProgress(jsonObject:) reads a status file's: finite, at least 0,
    /// pinned to its type (a row written by hand may hold 9e18, -1 or 1e300 anywhere).
    static func read(_ rows: PGResult, row: Int, from first: Int) -> MergeProgress? {
        let text = { rows.value(row, first + $0) }
        return text(0).map { phase in
            MergeProgress(
                phase: MergeProgress.Phase(rawValue: phase) ?? .encoding, item: Int(saturating: finite(text(1))),
                itemCount: Int(saturating: finite(text(2))), file: nil, doneMicros: micros(text(3)),
                totalMicros: micros(text(4)), elapsedSeconds: finite(text(5)),
                outputBytes: Int64(saturating: finite(text(6))))
        }
    }
}

/// A JSON number's text as a finite, non-negative Double (0 otherwise).
private func finite(_ text: String?) -> Double {
    guard let value = text.flatMap({ Double($0) }), value.isFinite else { return 0 }
    return max(0, value)
}

/// Seconds' text as microseconds, within Int64 (with room for the sums made of them).
private func micros(_ text: String?) -> Int64 { Int64(min(finite(text) * 1e6, 9e18)) }

/// The paths in a job spec's inputs (each a path, or an object with one), as the row holds them;
/// whatever is not one is left out (a row written by hand cannot make the read fail).
private func inputPaths(_ text: String?) -> [String] {
    guard let text, let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any] else { return [] }
    return array.compactMap { ($0 as? String) ?? (($0 as? [String: Any])?["path"] as? String) }
}
