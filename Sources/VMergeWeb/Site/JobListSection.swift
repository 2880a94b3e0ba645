import Foundation
import VMergeCore
import VMergeQueue

/// The jobs table: id (to the job's page), name, state, attempts, worker, error, and the action
/// that applies (retry a failed or cancelled job, cancel a queued or running one).
enum JobListSection {
    static func table(_ jobs: [QueuedJob], heading: String, context: PageContext) -> String {
        guard !jobs.isEmpty else { return "<h2>\(heading)</h2>\n<p id=\"no-jobs\">No jobs.</p>" }
        let rows = jobs.map { job in
            DashboardPage.row(
                [
                    "<a href=\"/jobs/\(job.id)\">\(job.id)</a>", HTMLText.escaped(job.name),
                    "<span class=\"state-\(job.state.rawValue)\">\(job.state.rawValue)</span>",
                    "\(job.attempts)/\(job.maxAttempts)", HTMLText.escaped(job.worker ?? ""),
                    HTMLText.escaped(job.error ?? ""), action(for: job, context: context),
                ], id: "row-\(job.id)", classes: ["number", "name", nil, "number", "name", "error"])
        }
        return (["<h2>\(heading)</h2>", "<table id=\"jobs\">",
            "<tr><th>id</th><th>name</th><th>state</th><th class=\"number\">attempts</th><th>worker</th>"
                + "<th>error</th><th></th></tr>"]
            + rows + ["</table>"]).joined(separator: "\n")
    }

    static func action(for job: QueuedJob, context: PageContext) -> String {
        switch job.state {
        case .failed, .cancelled: return DashboardPage.action("/jobs/\(job.id)/retry", "Retry", context: context)
        case .queued, .running: return DashboardPage.action("/jobs/\(job.id)/cancel", "Cancel", context: context)
        case .done: return ""
        }
    }
}
