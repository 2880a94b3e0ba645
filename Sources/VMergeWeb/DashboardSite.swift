import Foundation
import VMergeCore
import VMergeQueue

/// The dashboard's routes: `/` the page, `/metrics` Prometheus's text, `/healthz` the server's own
/// health. Any other path is 404: paths are matched whole, never mapped to files.
package struct DashboardSite: HTTPHandler {
    /// The queue; nil for a dashboard of watch folders only.
    let reader: QueueReader?
    /// The watchers' status files (--watch).
    let watch: WatchStatusSource

    package init(reader: QueueReader?, watch: WatchStatusSource = WatchStatusSource(paths: [])) {
        self.reader = reader
        self.watch = watch
    }

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        switch request.path {
        case "/":
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Array(DashboardPage.html(reader?.read(), watch: watch, now: Date()).utf8))
        case "/metrics":
            return HTTPResponse(
                status: 200, headers: [("Content-Type", MetricsText.contentType), ("Cache-Control", "no-store")],
                body: Array((reader.map { QueueMetrics.text($0.read()) } ?? MetricsText()).text.utf8))
        case "/healthz":
            // The server answers; the database is /metrics' business (vmerge_database_up).
            return .text(200, "ok\n")
        default:
            return .notFound()
        }
    }
}

/// The page: counts by state, the workers running jobs, the running jobs' progress and the
/// newest jobs, rendered on the server (no script; it reloads itself every 10 s through a meta
/// refresh). Every value from outside goes through `HTMLText`.
enum DashboardPage {
    static func html(
        _ reading: QueueReader.Reading?, watch: WatchStatusSource = WatchStatusSource(paths: []), now: Date
    ) -> String {
        var body: [String] = ["<h1>vmerge queue</h1>"]
        switch reading {
        case nil: break
        case let .unavailable(reason)?:
            body.append("<p class=\"down\">The database cannot be read: \(HTMLText.escaped(reason))</p>")
        case let .snapshot(snapshot, latest)?:
            body += counts(snapshot) + workers(snapshot) + running(snapshot) + jobs(latest)
        }
        if !watch.paths.isEmpty { body.append(WatchSection.html(watch.read(), now: now)) }
        body.append(
            "<p><small>Read at \(timestamp(now.timeIntervalSince1970)). Metrics: <a href=\"/metrics\">/metrics</a>.</small></p>"
        )
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="refresh" content="10">
            <title>vmerge queue</title>
            </head>
            <body>
            \(body.joined(separator: "\n"))
            </body>
            </html>

            """
    }

    private static func counts(_ snapshot: QueueSnapshot) -> [String] {
        ["<table id=\"counts\">", "<tr><th>state</th><th>jobs</th></tr>"]
            + QueueState.allCases.map { state in
                "<tr><td>\(state.rawValue)</td><td id=\"count-\(state.rawValue)\">\(snapshot.counts[state] ?? 0)</td></tr>"
            } + ["</table>"]
    }

    private static func workers(_ snapshot: QueueSnapshot) -> [String] {
        guard !snapshot.workers.isEmpty else { return ["<p>No worker is running a job.</p>"] }
        return [
            "<h2>Workers</h2>", "<table id=\"workers\">",
            "<tr><th>worker</th><th>running</th><th>lease until</th><th>last heartbeat</th></tr>",
        ]
            + snapshot.workers.keys.sorted().map { name in
                let lease = snapshot.workers[name] ?? QueueSnapshot.WorkerLease(leaseUntil: 0, runningJobs: 0)
                let cells = [
                    HTMLText.escaped(name), "\(lease.runningJobs)", timestamp(lease.leaseUntil),
                    snapshot.heartbeats[name].map(timestamp) ?? "",
                ]
                return "<tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>"
            } + ["</table>"]
    }

    /// Each running job and how far it has got, as its worker last published it.
    private static func running(_ snapshot: QueueSnapshot) -> [String] {
        guard !snapshot.running.isEmpty else { return [] }
        return [
            "<h2>Running jobs</h2>", "<table id=\"running\">",
            "<tr><th>id</th><th>name</th><th>worker</th><th>clip</th><th>done</th><th>speed</th><th>elapsed</th>"
                + "<th>time left</th><th>written</th></tr>",
        ]
            + snapshot.running.map { job in
                var cells = ["\(job.id)", HTMLText.escaped(job.name), HTMLText.escaped(job.worker)]
                if let progress = job.progress {
                    cells += [
                        "clip \(progress.item) of \(progress.itemCount)",
                        String(format: "%.1f%%", progress.fraction * 100),
                        progress.speed.map { String(format: "%.2fx", $0) } ?? "",
                        duration(progress.elapsedSeconds), progress.etaSeconds.map(duration) ?? "",
                        ByteSize.format(progress.outputBytes),
                    ]
                } else {
                    cells += ["starting", "", "", "", "", ""]
                }
                return "<tr id=\"job-\(job.id)\">" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>"
            } + ["</table>"]
    }

    /// Whole seconds as h:mm:ss (m:ss under an hour).
    static func duration(_ seconds: Double) -> String {
        let whole = seconds.isFinite ? Int(min(max(0, seconds), 1e9).rounded()) : 0
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    private static func jobs(_ latest: [QueuedJob]) -> [String] {
        guard !latest.isEmpty else { return ["<p>No jobs.</p>"] }
        return [
            "<h2>Newest jobs</h2>", "<table id=\"jobs\">",
            "<tr><th>id</th><th>name</th><th>state</th><th>attempts</th><th>worker</th><th>error</th></tr>",
        ]
            + latest.map { job in
                let cells = [
                    "\(job.id)", HTMLText.escaped(job.name), job.state.rawValue, "\(job.attempts)/\(job.maxAttempts)",
                    HTMLText.escaped(job.worker ?? ""), HTMLText.escaped(job.error ?? ""),
                ]
                return "<tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>"
            } + ["</table>"]
    }

    /// UTC, to the second.
    private static func timestamp(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}
