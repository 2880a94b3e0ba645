import Foundation
import VMergeCore
import VMergeQueue

/// The dashboard's routes. GET: `/` the page (the queue's figures, its jobs a page at a time,
/// and the watch folders), `/jobs/ID` a job's page and `/jobs/ID/poster` its poster, `/metrics`
/// Prometheus's text, `/healthz` the server's own health, and the built-in assets. POST: sign-in
/// and out, and the actions. Under `/api/v1/` the job API (`JobAPI`). Any other path is 404:
/// paths are matched whole, never mapped to files.
package struct DashboardSite: HTTPHandler {
    /// The queue; nil for a dashboard of watch folders only.
    let reader: QueueReader?
    /// The watchers' status files (--watch).
    let watch: WatchStatusSource
    let access: ActionAccess
    /// What jobs submitted over the API may name.
    let policy: SubmissionPolicy

    package init(
        reader: QueueReader?, watch: WatchStatusSource = WatchStatusSource(paths: []),
        access: ActionAccess = ActionAccess(token: nil), policy: SubmissionPolicy = SubmissionPolicy()
    ) {
        self.reader = reader
        self.watch = watch
        self.access = access
        self.policy = policy
    }

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        if request.path.hasPrefix(JobAPI.prefix) {
            guard let reader else { return JobAPI.error(APIError(404, "this dashboard shows no queue")) }
            return JobAPI(reader: reader, access: access, policy: policy).respond(to: request)
        }
        if request.method == "POST" {
            guard let reader else { return .text(404, "this dashboard shows no queue to act on\n") }
            return DashboardActions(reader: reader, access: access).respond(to: request)
        }
        if DashboardActions.isAction(request.path) {
            return HTTPResponse.text(405, "this address takes a POST (a form's button)\n").allowing("POST")
        }
        switch request.path {
        case "/": return front(request)
        case "/metrics":
            return HTTPResponse(
                status: 200, headers: [("Content-Type", MetricsText.contentType), ("Cache-Control", "no-store")],
                body: Array((reader.map { QueueMetrics.text($0.snapshot()) } ?? MetricsText()).text.utf8))
        case "/healthz":
            // The server answers; the database is /metrics' business (vmerge_database_up).
            return .text(200, "ok\n")
        default:
            if let asset = StaticAssets.all[request.path] {
                return HTTPResponse(
                    status: 200,
                    headers: [
                        ("Content-Type", asset.contentType),
                        ("Cache-Control", HTTPResponse.CachePolicy.maxAge(300).headerValue),
                    ],
                    body: Array(asset.body.utf8))
            }
            return job(request)
        }
    }

    /// The front page: the queue (paused or not, counts, workers, running jobs, the jobs a page at
    /// a time) and the watch folders.
    private func front(_ request: HTTPRequest) -> HTTPResponse {
        let query = JobListSection.Query(request)
        return page(request, title: "queue", nav: reader == nil ? "" : JobListSection.form(query)) { context in
            var parts: [String] = []
            if let reader {
                switch reader.snapshot() {
                case .failure: parts.append(QueueSections.unavailable())
                case let .success(snapshot):
                    parts += QueueSections.all(snapshot, context: context)
                    let filter = query.filter
                    let before = query.before
                    switch reader.read({ try $0.page(filter, before: before, limit: JobListSection.pageSize) }) {
                    case .failure: parts.append(QueueSections.unavailable())
                    case let .success(page): parts.append(JobListSection.list(page, query: query, context: context))
                    }
                }
            }
            if !watch.paths.isEmpty { parts.append(WatchSection.html(watch.read(), now: context.now)) }
            return parts
        }
    }

    /// `/jobs/ID` and `/jobs/ID/poster`; 404 for anything else.
    private func job(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard let reader, parts.count == 3 || (parts.count == 4 && parts[3] == "poster"), parts[0].isEmpty,
            parts[1] == "jobs", parts[2].count <= 18, parts[2].allSatisfy({ $0.isASCII && $0.isNumber }),
            let id = Int64(parts[2])
        else { return .notFound() }
        let detail = reader.read { try $0.detail(id) }
        if parts.count == 4 { return (try? detail.get()).flatMap { $0.map(JobDetailPage.poster) } ?? .notFound() }
        var found = true
        let response = page(request, title: "job \(id)") { context in
            switch detail {
            case .failure: return [QueueSections.unavailable()]
            case .success(nil):
                found = false
                return ["<p id=\"not-found\">Job \(id) is not in the queue.</p>"]
            case let .success(detail?): return JobDetailPage.parts(detail, context: context)
            }
        }
        return found ? response : HTTPResponse(status: 404, headers: response.headers, body: response.body)
    }

    /// A page: the whole document, or only its `<main>` for the script that keeps it live.
    func page(_ request: HTTPRequest, title: String, nav: String = "", parts: (PageContext) -> [String]) -> HTTPResponse
    {
        let partial = request.headers["x-vmerge-part"] == "main"
        let context = PageContext(
            now: Date(), actionsEnabled: access.enabled && reader != nil, session: access.session(of: request),
            returnPath: URLText.localReturn(URLText.path(request.path, request.query)),
            notice: partial ? nil : access.takeNotice(of: request))
        let main = DashboardPage.main(parts(context), context: context)
        let body = partial ? main : DashboardPage.document(title: title, nav: nav, main: main, context: context)
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"), ("Vary", "X-VMerge-Part"),
            ],
            body: Array(body.utf8))
    }
}

extension HTTPResponse {
    func allowing(_ methods: String) -> HTTPResponse {
        var response = self
        response.headers.append(("Allow", methods))
        return response
    }

    /// 303 to `location` (a path on this server).
    static func seeOther(_ location: String, cookie: String? = nil) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("Location", location), ("Cache-Control", "no-store")]
        if let cookie { headers.append(("Set-Cookie", cookie)) }
        return HTTPResponse(status: 303, headers: headers)
    }
}
