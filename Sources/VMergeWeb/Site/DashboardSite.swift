import Foundation
import VMergeCore
import VMergeQueue

/// The dashboard's routes. GET: `/` the page, `/metrics` Prometheus's text, `/healthz` the
/// server's own health, and the built-in assets. POST: sign-in and out, and the actions. Any
/// other path is 404: paths are matched whole, never mapped to files.
package struct DashboardSite: HTTPHandler {
    let reader: QueueReader
    let access: ActionAccess

    package init(reader: QueueReader, access: ActionAccess = ActionAccess(token: nil)) {
        self.reader = reader
        self.access = access
    }

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        if request.method == "POST" { return DashboardActions(reader: reader, access: access).respond(to: request) }
        if DashboardActions.isAction(request.path) {
            return HTTPResponse.text(405, "this address takes a POST (a form's button)\n").allowing("POST")
        }
        switch request.path {
        case "/":
            return page(request, title: "queue") { context in
                switch reader.snapshot() {
                case .failure: return [QueueSections.unavailable()]
                case let .success(snapshot):
                    let latest = reader.read { try $0.latest(20) }
                    return QueueSections.all(snapshot, context: context)
                        + [(try? latest.get()).map { JobListSection.table($0, heading: "Newest jobs", context: context) }
                            ?? QueueSections.unavailable()]
                }
            }
        case "/metrics":
            return HTTPResponse(
                status: 200, headers: [("Content-Type", MetricsText.contentType), ("Cache-Control", "no-store")],
                body: Array(QueueMetrics.text(reader.snapshot()).text.utf8))
        case "/healthz":
            // The server answers; the database is /metrics' business (vmerge_database_up).
            return .text(200, "ok\n")
        default:
            guard let asset = StaticAssets.all[request.path] else { return .notFound() }
            return HTTPResponse(
                status: 200,
                headers: [("Content-Type", asset.contentType), ("Cache-Control", HTTPResponse.CachePolicy.maxAge(300).headerValue)],
                body: Array(asset.body.utf8))
        }
    }

    /// A page: the whole document, or only its `<main>` for the script that keeps it live.
    func page(_ request: HTTPRequest, title: String, status: Int = 200, parts: (PageContext) -> [String]) -> HTTPResponse {
        let partial = request.headers["x-vmerge-part"] == "main"
        let context = PageContext(
            now: Date(), actionsEnabled: access.enabled, session: access.session(of: request),
            returnPath: URLText.localReturn(URLText.path(request.path, request.query)),
            notice: partial ? nil : access.takeNotice(of: request))
        let main = DashboardPage.main(parts(context), context: context)
        let body = partial ? main : DashboardPage.document(title: title, main: main, context: context)
        return HTTPResponse(
            status: status,
            headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"), ("Vary", "X-VMerge-Part")],
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
