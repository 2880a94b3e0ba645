import Foundation
import VMergeCore
import VMergeQueue

/// The jobs table, a page at a time (newest first; `before` pages back by id, so a page stays
/// fast and stable at any depth), filtered by state and by a part of the name: the filter is a
/// plain GET form (it works without scripts, and its address can be kept), outside the part the
/// script replaces, so typing in it is never swept away.
enum JobListSection {
    static let pageSize = 50

    /// What the address asks of the list: `state`, `name` and `before`, each ignored when it is
    /// not one (a list is never refused for its address).
    struct Query: Equatable {
        var filter = JobFilter()
        var before: Int64?

        init(_ request: HTTPRequest) {
            filter.state = request.argument("state").flatMap(QueueState.init(rawValue:))
            if let name = request.argument("name"), !name.isEmpty { filter.nameContains = String(name.prefix(200)) }
            before = request.argument("before").flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        }

        /// The address of this list with `before` set to `older` (nil: the newest page).
        func path(before older: Int64?) -> String {
            URLText.path(
                "/",
                [
                    ("state", filter.state?.rawValue ?? ""), ("name", filter.nameContains ?? ""),
                    ("before", older.map { "\($0)" } ?? ""),
                ])
        }
    }

    static func form(_ query: Query) -> String {
        let states = ([""] + QueueState.allCases.map(\.rawValue)).map { state in
            let selected = state == (query.filter.state?.rawValue ?? "") ? " selected" : ""
            return "<option value=\"\(state)\"\(selected)>\(state.isEmpty ? "every state" : state)</option>"
        }.joined()
        return "<nav><form id=\"filter\" method=\"get\" action=\"/\"><label>State <select name=\"state\">\(states)"
            + "</select></label> <label>Name contains <input type=\"search\" name=\"name\" maxlength=\"200\" value=\""
            + HTMLText.escaped(query.filter.nameContains ?? "") + "\"></label> <button type=\"submit\">Show</button>"
            + "</form></nav>"
    }

    /// The page of jobs, its count and the links to the newest and the next older page.
    static func list(_ page: JobPage, query: Query, context: PageContext) -> String {
        let what = query.filter.state.map { "\($0.rawValue) jobs" } ?? "Jobs"
        let named = query.filter.nameContains.map { " named like “\(HTMLText.escaped($0))”" } ?? ""
        var lines = ["<h2 id=\"jobs-heading\">\(what)\(named): <span id=\"jobs-total\">\(page.total)</span></h2>"]
        lines.append(retryAll(page, query: query, context: context))
        if page.jobs.isEmpty {
            lines.append("<p id=\"no-jobs\">No jobs\(query.before == nil ? "" : " on this page").</p>")
        } else {
            lines.append(table(page.jobs, context: context))
        }
        var links: [String] = []
        if query.before != nil {
            links.append("<a id=\"newest\" href=\"\(HTMLText.escaped(query.path(before: nil)))\">newest</a>")
        }
        if let older = page.nextBefore {
            links.append("<a id=\"older\" href=\"\(HTMLText.escaped(query.path(before: older)))\">older</a>")
        }
        if !links.isEmpty { lines.append("<p class=\"paging\">" + links.joined(separator: " · ") + "</p>") }
        return lines.joined(separator: "\n")
    }

    /// For a signed-in browser looking at failed jobs: one button that queues every one the filter
    /// matches again, with their count, behind a box to tick (the browser will not send it
    /// unticked, and the server refuses it without).
    static func retryAll(_ page: JobPage, query: Query, context: PageContext) -> String {
        guard query.filter.state == .failed, page.total > 0, let session = context.session else { return "" }
        let named = query.filter.nameContains.map { " named like “\(HTMLText.escaped($0))”" } ?? ""
        return "<form id=\"retry-failed\" method=\"post\" action=\"/queue/retry-failed\">"
            + DashboardPage.hidden("form_token", session.formToken) + DashboardPage.hidden("return", context.returnPath)
            + DashboardPage.hidden("name", query.filter.nameContains ?? "")
            + "<label><input type=\"checkbox\" name=\"confirm\" value=\"yes\" required> all \(page.total) failed "
            + "job\(page.total == 1 ? "" : "s")\(named)</label> <button type=\"submit\">Retry them</button></form>"
    }

    static func table(_ jobs: [QueuedJob], context: PageContext) -> String {
        let rows = jobs.map { job in
            DashboardPage.row(
                [
                    "<a href=\"/jobs/\(job.id)\">\(job.id)</a>", HTMLText.escaped(job.name, limit: 300),
                    "<span class=\"state-\(job.state.rawValue)\">\(job.state.rawValue)</span>",
                    "\(job.attempts)/\(job.maxAttempts)", HTMLText.escaped(job.worker ?? ""),
                    HTMLText.escaped(job.finishedAt ?? ""), HTMLText.escaped(job.error ?? "", limit: 500),
                    action(for: job.state, id: job.id, context: context),
                ], id: "row-\(job.id)", classes: ["number", "name", nil, "number", "name", nil, "error"])
        }
        return
            ([
                "<table id=\"jobs\">",
                "<tr><th>id</th><th>name</th><th>state</th><th class=\"number\">attempts</th><th>worker</th>"
                    + "<th>finished</th><th>error</th><th></th></tr>",
            ]
            + rows + ["</table>"]).joined(separator: "\n")
    }

    /// The action that applies to a job in `state`: retry a failed or cancelled one, cancel a
    /// queued or running one.
    static func action(for state: QueueState, id: Int64, context: PageContext) -> String {
        switch state {
        case .failed, .cancelled: return DashboardPage.action("/jobs/\(id)/retry", "Retry", context: context)
        case .queued, .running: return DashboardPage.action("/jobs/\(id)/cancel", "Cancel", context: context)
        case .done: return ""
        }
    }
}
