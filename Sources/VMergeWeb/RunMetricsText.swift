import VMergeJobs

/// A `watch` or `worker` process's own metrics (`--metrics-listen`), from its `RunMetrics`. Every
/// labelled series is there from the start at 0, so a rate or an alert over it has a series to
/// read before the first job ends.
package enum RunMetricsText {
    package static func text(_ metrics: RunMetrics.Snapshot) -> MetricsText {
        var text = MetricsText()
        var up = MetricFamily(
            "vmerge_up", kind: .gauge, help: "1: this vmerge process is running and serving its metrics.")
        up.add(1)
        text.append(up)
        var started = MetricFamily(
            "process_start_time_seconds", kind: .gauge, help: "When this process started (Unix time).")
        started.add(metrics.startTime)
        text.append(started)
        var heartbeat = MetricFamily(
            "vmerge_last_heartbeat_timestamp_seconds", kind: .gauge,
            help: "The last sign of life (Unix time): a worker's last claim or lease renewal the queue answered, a "
                + "watcher's last full look at its inbox. Absent until the first.")
        if let last = metrics.lastHeartbeat { heartbeat.add(last) }
        text.append(heartbeat)
        text.append(jobs(metrics))
        text.append(
            histogram(
                "vmerge_job_duration_seconds", metrics.duration,
                help: "Wall time of each job that wrote an output (not those found done already)."))
        text.append(
            histogram(
                "vmerge_job_encode_speed_ratio", metrics.speed,
                help: "Speed of each job that wrote an output: seconds of output video made per second of wall time."))
        for (name, value, help) in [
            (
                "vmerge_read_bytes_total", Double(metrics.readBytes),
                "Bytes of input files merged into the outputs written (each kept clip's size when probed)."
            ),
            ("vmerge_written_bytes_total", Double(metrics.writtenBytes), "Bytes of the outputs written."),
            (
                "vmerge_sources_deleted_total", Double(metrics.sourcesDeleted),
                "Input files deleted with --delete-sources once their output held all of them."
            ),
        ] {
            var family = MetricFamily(name, kind: .counter, help: help)
            family.add(value)
            text.append(family)
        }
        for family in events(metrics) { text.append(family) }
        return text
    }

    /// Tries to deliver events, and a watcher's events owed.
    private static func events(_ metrics: RunMetrics.Snapshot) -> [MetricFamily] {
        var deliveries = MetricFamily(
            "vmerge_event_deliveries_total", kind: .counter,
            help: "Tries to deliver an event (--notify) to its receiver, by result.")
        deliveries.add(Double(metrics.deliveries.delivered), labels: ["result": "delivered"])
        deliveries.add(Double(metrics.deliveries.failed), labels: ["result": "failed"])
        guard let outbox = metrics.outbox else { return [deliveries] }
        return [deliveries] + QueueMetrics.outbox(waiting: outbox.waiting, oldestAge: outbox.oldestAge)
    }

    /// The finished and failed counters, every label value at 0 before its first job.
    private static func jobs(_ metrics: RunMetrics.Snapshot) -> [MetricFamily] {
        var finished = MetricFamily(
            "vmerge_jobs_finished_total", kind: .counter,
            help: "Jobs this process ran to an end, by result: done (merged, or found done already), failed (for "
                + "good, not tried again), cancelled (stopped before the end: cancelled in the queue, lease lost, "
                + "SIGINT/SIGTERM).")
        for result in RunMetrics.Result.allCases {
            finished.add(Double(metrics.finished[result] ?? 0), labels: ["result": result.rawValue])
        }
        var failed = MetricFamily(
            "vmerge_jobs_failed_total", kind: .counter,
            help: "Jobs that failed for good, by reason: input, output, no_space, nothing_to_merge, crashed (its "
                + "workers kept dying), other.")
        for reason in RunMetrics.FailureReason.allCases {
            failed.add(Double(metrics.failed[reason] ?? 0), labels: ["reason": reason.rawValue])
        }
        return [finished, failed]
    }

    private static func histogram(_ name: String, _ histogram: RunMetrics.Histogram, help: String) -> MetricFamily {
        var family = MetricFamily(name, kind: .histogram, help: help)
        family.addHistogram(buckets: histogram.cumulative, sum: histogram.sum, count: histogram.count)
        return family
    }
}

extension MetricsText {
    fileprivate mutating func append(_ families: [MetricFamily]) {
        for family in families { append(family) }
    }
}

/// The routes of a `watch` or `worker` process's metrics server: `/metrics` and `/healthz`, any
/// other path 404.
package struct RunMetricsSite: HTTPHandler {
    let metrics: RunMetrics

    package init(metrics: RunMetrics) { self.metrics = metrics }

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        switch request.path {
        case "/metrics":
            return HTTPResponse(
                status: 200, headers: [("Content-Type", MetricsText.contentType), ("Cache-Control", "no-store")],
                body: Array(RunMetricsText.text(metrics.snapshot).text.utf8))
        case "/healthz":
            return .text(200, "ok\n")
        default:
            return .notFound()
        }
    }
}
