import VMergeQueue

/// The queue's metrics for Prometheus, from one reading: what `/metrics` serves. Read at scrape
/// time from the database, so every dashboard shows the same figures; the queue's own series
/// are left out when the database cannot be read (0 would be a lie), and `vmerge_database_up`
/// says so. (Prometheus's own `up` says whether the dashboard answered.)
package enum QueueMetrics {
    package static func text(_ reading: QueueReader.Reading) -> MetricsText {
        var metrics = MetricsText()
        var up = MetricFamily(
            "vmerge_database_up", kind: .gauge,
            help: "1 if the queue's database answered this scrape (with a queue of this vmerge's schema), else 0.")
        guard case let .success(snapshot) = reading else {
            up.add(0)
            metrics.append(up)
            return metrics
        }
        up.add(1)
        metrics.append(up)
        var jobs = MetricFamily("vmerge_jobs", kind: .gauge, help: "Jobs in the queue, by state.")
        for state in QueueState.allCases {
            jobs.add(Double(snapshot.counts[state] ?? 0), labels: ["state": state.rawValue])
        }
        metrics.append(jobs)
        metrics.append(oldestPending(snapshot))
        for family in outbox(snapshot) { metrics.append(family) }
        metrics.append(workers(snapshot))
        metrics.append(paused(snapshot))
        var finished = MetricFamily(
            "vmerge_queue_last_finished_timestamp_seconds", kind: .gauge,
            help: "When a job last ended in this state (Unix time); absent for a state no job has ended in.")
        for (state, time) in snapshot.lastFinished { finished.add(time, labels: ["state": state.rawValue]) }
        metrics.append(finished)
        var lease = MetricFamily(
            "vmerge_worker_lease_expiry_timestamp_seconds", kind: .gauge,
            help: "For each worker running a job: when its latest lease runs out (Unix time). Heartbeats move it on; "
                + "in the past, the worker stopped renewing it.")
        var running = MetricFamily(
            "vmerge_worker_running_jobs", kind: .gauge, help: "For each worker running a job: how many it runs.")
        for (worker, held) in snapshot.workers {
            lease.add(held.leaseUntil, labels: ["worker": worker])
            running.add(Double(held.runningJobs), labels: ["worker": worker])
        }
        metrics.append(lease)
        metrics.append(running)
        var heartbeat = MetricFamily(
            "vmerge_worker_last_heartbeat_timestamp_seconds", kind: .gauge,
            help: "For each worker heard from in the last day: when it last claimed a job or renewed a lease "
                + "(Unix time). A worker holding a job beats every second while it merges and every third of its "
                + "lease at least.")
        for (worker, time) in snapshot.heartbeats { heartbeat.add(time, labels: ["worker": worker]) }
        metrics.append(heartbeat)
        // Labelled by job id for running jobs only: the series end with the job, so there are
        // never more than the workers' slots.
        var progress = MetricFamily(
            "vmerge_job_progress_ratio", kind: .gauge,
            help: "For each running job whose worker has published its progress: the share of its output media made, "
                + "0 to 1.")
        for job in snapshot.running {
            guard let published = job.progress else { continue }
            progress.add(published.fraction, labels: ["job": "\(job.id)"])
        }
        metrics.append(progress)
        return metrics
    }

    /// The workers heard from in the last day, by liveness.
    private static func workers(_ snapshot: QueueSnapshot) -> MetricFamily {
        var workers = MetricFamily(
            "vmerge_workers", kind: .gauge,
            help: "Workers heard from in the last day, by state: running (holding jobs), idle, stopped (said so), "
                + "silent (not heard from for a whole lease).")
        let liveness = snapshot.liveness
        for state in WorkerPresence.Liveness.allCases {
            workers.add(Double(liveness.values.filter { $0 == state }.count), labels: ["state": state.rawValue])
        }
        return workers
    }

    /// The events owed to receivers, and how long the oldest has waited.
    private static func outbox(_ snapshot: QueueSnapshot) -> [MetricFamily] {
        outbox(waiting: snapshot.eventsWaiting, oldestAge: snapshot.oldestEventAge)
    }

    /// Events owed, and the oldest's age: the queue's outbox here, a watcher's .events on its own
    /// /metrics, by the same names (one alert rule serves both).
    static func outbox(waiting: Int, oldestAge: Double) -> [MetricFamily] {
        var events = MetricFamily(
            "vmerge_events_waiting", kind: .gauge, help: "Events owed to their receivers (--notify), not yet delivered."
        )
        events.add(Double(waiting))
        var age = MetricFamily(
            "vmerge_events_oldest_waiting_age_seconds", kind: .gauge,
            help: "How long the oldest event not yet delivered has waited; 0 when none waits.")
        age.add(oldestAge)
        return [events, age]
    }

    private static func oldestPending(_ snapshot: QueueSnapshot) -> MetricFamily {
        var oldest = MetricFamily(
            "vmerge_queue_oldest_pending_age_seconds", kind: .gauge,
            help: "Seconds the longest-waiting claimable queued job has waited for a worker; 0 when none waits.")
        oldest.add(snapshot.oldestPendingAge)
        return oldest
    }

    /// 1 while the queue is paused: an alert on jobs waiting can leave a paused queue out.
    private static func paused(_ snapshot: QueueSnapshot) -> MetricFamily {
        var paused = MetricFamily(
            "vmerge_queue_paused", kind: .gauge,
            help: "1 while the queue is paused ('vmerge queue pause': workers claim nothing new), else 0.")
        paused.add(snapshot.paused == nil ? 0 : 1)
        return paused
    }
}
