import Foundation
import VMergeCore
import VMergeJobs

/// The dashboard's section on watch folders: a table per watcher (its inbox, state, the status's
/// age, flagged stale past `staleAfter`; the running job with its clip, per cent, speed, elapsed,
/// time left and bytes; its inputs; the jobs it finished last). Every value read from a status
/// file is outside text: escaped with `HTMLText` and isolated in `<bdi>`, so neither markup nor a
/// right-to-left override in a name reaches the page's structure or its neighbours' text.
package enum WatchSection {
    /// A watcher rewrites its status at least every 30 s while it runs (each inbox scan); older
    /// than this, it has stopped or hangs.
    package static let staleAfter = 30.0

    package static func html(_ watchers: [WatchFolderStatus], now: Date) -> String {
        var lines = ["<section id=\"watch\">", "<h2>Watch folders</h2>"]
        if watchers.isEmpty { lines.append("<p>No watcher's status file found.</p>") }
        for (index, watcher) in watchers.enumerated() {
            lines.append("<div class=\"watcher\" id=\"watcher-\(index)\">")
            switch watcher.reading {
            case let .unavailable(reason):
                lines += [
                    "<h3>\(text(watcher.source))</h3>",
                    "<p class=\"down\">unavailable: \(text(reason))</p>",
                ]
            case let .status(status):
                lines +=
                    summary(status, source: watcher.source, now: now) + running(status, now: now)
                    + recent(status)
            }
            lines.append("</div>")
        }
        lines.append("</section>")
        return lines.joined(separator: "\n")
    }

    /// Outside text, escaped and isolated.
    static func text(_ value: String) -> String { "<bdi>\(HTMLText.escaped(value))</bdi>" }

    private static func row(_ cells: [String]) -> String {
        "<tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>"
    }

    private static func summary(_ status: WatchStatus, source: String, now: Date) -> [String] {
        let age = now.timeIntervalSince(status.updated)
        let stale = age > staleAfter ? " <span class=\"stale\">stale</span>" : ""
        return [
            "<h3>\(text(status.inbox))</h3>",
            "<table class=\"watch-summary\">",
            "<tr><th>inbox</th><th>out</th><th>host</th><th>pid</th><th>state</th><th>done</th><th>failed</th>"
                + "<th>updated</th><th>status file</th></tr>",
            row([
                text(status.inbox), text(status.outbox), text(status.host), "\(status.pid)",
                "<span class=\"state\">\(text(status.state))</span>", "\(status.done)", "\(status.failed)",
                "\(DashboardPage.duration(age)) ago\(stale)", text(source),
            ]),
            "</table>",
        ]
    }

    /// The running job and how far it has got, as the watcher last wrote it.
    private static func running(_ status: WatchStatus, now: Date) -> [String] {
        guard let job = status.job else { return [] }
        var cells = [text(job)]
        if let progress = status.progress {
            cells += [
                "clip \(progress.item) of \(progress.itemCount)",
                String(format: "%.1f%%", progress.fraction * 100),
                progress.speed.map { String(format: "%.2fx", $0) } ?? "",
                DashboardPage.duration(progress.elapsedSeconds), progress.etaSeconds.map(DashboardPage.duration) ?? "",
                ByteSize.format(progress.outputBytes),
            ]
        } else {
            let elapsed = status.jobStarted.map { DashboardPage.duration(now.timeIntervalSince($0)) } ?? ""
            cells += ["starting", "", "", elapsed, "", ""]
        }
        let listed = status.inputs.map(text).joined(separator: "<br>")
        let more =
            status.inputCount > status.inputs.count ? "<br>and \(status.inputCount - status.inputs.count) more" : ""
        cells.append(listed + more)
        return [
            "<table class=\"watch-running\">",
            "<tr><th>running</th><th>clip</th><th>done</th><th>speed</th><th>elapsed</th><th>time left</th>"
                + "<th>written</th><th>inputs (\(status.inputCount))</th></tr>",
            row(cells), "</table>",
        ]
    }

    private static func recent(_ status: WatchStatus) -> [String] {
        guard !status.recent.isEmpty else { return [] }
        return [
            "<table class=\"watch-recent\">",
            "<tr><th>job</th><th>result</th><th>finished</th><th>output</th><th>bytes</th><th>error</th></tr>",
        ]
            + status.recent.map { job in
                row([
                    text(job.name), job.result.rawValue, DashboardPage.timestamp(job.finishedAt.timeIntervalSince1970),
                    text(job.output ?? ""), job.outputBytes.map(ByteSize.format) ?? "", text(job.error ?? ""),
                ])
            } + ["</table>"]
    }
}
