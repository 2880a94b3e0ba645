import Foundation
import VMergeCore
import VMergeQueue

/// The queue's parts of the front page, from one snapshot: counts by state, the workers, and the
/// running jobs with how far each has got. Every value from outside goes through `HTMLText`.
enum QueueSections {
    /// A worker whose last heartbeat is older than this is shown as silent: a worker merging
    /// beats every second, and renews its lease every third of it at least.
    static let silentAfter: Double = 30

    static func all(_ snapshot: QueueSnapshot, context: PageContext) -> [String] {
        [
            noWorkers(snapshot), pause(snapshot, context: context), counts(snapshot),
            ProgressSection.html(snapshot, now: context.now), workers(snapshot, now: context.now),
            running(snapshot, context: context),
        ]
    }

    /// Said first, at once: jobs wait and no live worker can take them (every one stopped or
    /// silent), which no stall rule would say for half an hour.
    static func noWorkers(_ snapshot: QueueSnapshot) -> String {
        guard snapshot.queuedWithoutWorkers else { return "" }
        let queued = snapshot.counts[.queued] ?? 0
        return "<p class=\"down\" id=\"no-workers\">\(queued) job\(queued == 1 ? " is" : "s are") queued and no worker "
            + "is alive to take \(queued == 1 ? "it" : "them"): start one ('vmerge worker'), or see below why they "
            + "stopped.</p>"
    }

    /// Whether workers may claim, and the button that changes it (for a signed-in browser).
    static func pause(_ snapshot: QueueSnapshot, context: PageContext) -> String {
        guard let paused = snapshot.paused else {
            let button = DashboardPage.action("/queue/pause", "Pause the queue", context: context)
            return button.isEmpty ? "" : "<p id=\"queue-control\">\(button)</p>"
        }
        return
            "<p class=\"paused\" id=\"paused\">The queue is paused since \(DashboardPage.timestamp(paused.since)) by "
            + "\(HTMLText.escaped(paused.by)): workers finish the jobs they run and claim no new ones; queued jobs wait. "
            + DashboardPage.action("/queue/resume", "Resume", context: context) + "</p>"
    }

    /// Why the queue is not shown. The database's own message (it can name the host, the user,
    /// the database) goes to the dashboard's log, not to whoever can reach the page.
    static func unavailable() -> String {
        "<p class=\"down\" id=\"database-down\">The queue's database cannot be read just now; the dashboard's log "
            + "says why. This page comes back by itself when it answers.</p>"
    }

    static func counts(_ snapshot: QueueSnapshot) -> String {
        let rows = QueueState.allCases.map { state in
            let count = snapshot.counts[state] ?? 0
            return "<tr><td><a href=\"/?state=\(state.rawValue)\">\(state.rawValue)</a></td>"
                + "<td class=\"number\" id=\"count-\(state.rawValue)\">\(count)</td></tr>"
        }
        return
            (["<table id=\"counts\">", "<tr><th>state</th><th class=\"number\">jobs</th></tr>"] + rows + ["</table>"])
            .joined(separator: "\n")
    }

    /// Every worker heard from in the last day: what it runs, what it finished in the last day
    /// (done, failed), its lease, its last heartbeat, and "silent" when that is old (it stopped,
    /// or cannot reach the database).
    static func workers(_ snapshot: QueueSnapshot, now: Date) -> String {
        let names = Set(snapshot.workers.keys).union(snapshot.heartbeats.keys).union(snapshot.presences.keys).sorted()
        let liveness = snapshot.liveness
        guard !names.isEmpty else { return "<h2>Workers</h2>\n<p>No worker heard from in the last day.</p>" }
        let rows = names.map { name in
            let lease = snapshot.workers[name]
            let beat = snapshot.heartbeats[name]
            let finished = snapshot.finishedByWorker[name]
            let state = liveness[name].map { "<span class=\"worker-\($0.rawValue)\">\($0.rawValue)</span>" } ?? ""
            return DashboardPage.row(
                [
                    HTMLText.escaped(name), state, "\(lease?.runningJobs ?? 0)", "\(finished?.done ?? 0)",
                    "\(finished?.failed ?? 0)",
                    lease.map { DashboardPage.timestamp($0.leaseUntil) } ?? "",
                    beat.map { DashboardPage.timestamp($0) + silence(since: $0, now: now, running: lease != nil) }
                        ?? "",
                ], classes: ["name", nil, "number", "number", "number"])
        }
        return
            ([
                "<h2>Workers</h2>", "<table id=\"workers\">",
                "<tr><th>worker</th><th>state</th><th class=\"number\">running</th><th class=\"number\">done, 24 h</th>"
                    + "<th class=\"number\">failed, 24 h</th><th>lease until</th><th>last heartbeat</th></tr>",
            ]
            + rows + ["</table>"]).joined(separator: "\n")
    }

    /// " (silent for 2:10)" for a worker holding a job whose heartbeat is old; "" otherwise.
    private static func silence(since beat: Double, now: Date, running: Bool) -> String {
        let age = now.timeIntervalSince1970 - beat
        guard running, age > silentAfter else { return "" }
        return " <span class=\"stale\">(silent for \(DashboardPage.duration(age)))</span>"
    }

    /// Each running job and how far it has got, as its worker last published it; a job whose
    /// worker has gone silent says so, since its figures no longer move.
    static func running(_ snapshot: QueueSnapshot, context: PageContext) -> String {
        guard !snapshot.running.isEmpty else { return "<h2>Running</h2>\n<p>No job is running.</p>" }
        let rows = snapshot.running.map { job in
            var cells = [
                "<a href=\"/jobs/\(job.id)\">\(job.id)</a>", HTMLText.escaped(job.name, limit: 300),
                HTMLText.escaped(job.worker, limit: 100),
                inputs(job),
            ]
            cells += progressCells(job.progress)
            if let beat = snapshot.heartbeats[job.worker] {
                cells[2] += silence(since: beat, now: context.now, running: true)
            }
            cells.append(DashboardPage.action("/jobs/\(job.id)/cancel", "Cancel", context: context))
            return DashboardPage.row(
                cells, id: "job-\(job.id)",
                classes: ["number", "name", "name", "name", nil, "number", "number", "number", "number", "number"])
        }
        return
            ([
                "<h2>Running</h2>", "<table id=\"running\">",
                "<tr><th>id</th><th>name</th><th>worker</th><th>inputs</th><th>clip</th><th class=\"number\">done</th>"
                    + "<th class=\"number\">speed</th><th class=\"number\">elapsed</th><th class=\"number\">time left</th>"
                    + "<th class=\"number\">written / expected</th><th></th></tr>",
            ]
            + rows + ["</table>"]).joined(separator: "\n")
    }

    /// The job's first inputs by file name (the whole path on hover), and how many more.
    private static func inputs(_ job: QueueSnapshot.RunningJob) -> String {
        let shown = job.inputs.map { path in
            "<span title=\"\(HTMLText.escaped(path))\">\(HTMLText.escaped(FileName(path).lastComponent.escaped))</span>"
        }
        // The count is the row's: saturated, so a hand-written one cannot trap.
        let more = job.inputCount.subtractingSaturating(job.inputs.count)
        return (shown + (more > 0 ? ["and \(more) more"] : [])).joined(separator: ", ")
    }

    /// clip N of M, per cent (with a bar), speed, elapsed, time left, bytes written and the size
    /// the output is heading for (written bytes over the share made, once a twentieth is made).
    static func progressCells(_ progress: MergeProgress?) -> [String] {
        guard let progress else { return ["starting", "", "", "", "", ""] }
        // The figures are a row's or a status file's, maybe written by hand: pinned to their
        // ranges, and the division saturated, so no value can trap the page.
        let fraction = progress.fraction.isFinite ? min(1, max(0, progress.fraction)) : 0
        let percent = String(format: "%.1f%%", fraction * 100)
        let written = max(0, progress.outputBytes)
        let expected = fraction >= 0.05 ? " / ≈ " + ByteSize.format(Int64(saturating: Double(written) / fraction)) : ""
        return [
            progress.itemCount > 0
                ? "<span class=\"clip\">clip \(min(progress.item, progress.itemCount)) of \(progress.itemCount)</span>"
                : "",
            "<progress max=\"1\" value=\"\(String(format: "%.3f", fraction))\">\(percent)</progress> \(percent)",
            progress.speed.map { String(format: "%.2fx", $0) } ?? "",
            DashboardPage.duration(progress.elapsedSeconds), progress.etaSeconds.map(DashboardPage.duration) ?? "",
            ByteSize.format(written) + expected,
        ]
    }
}
