import Foundation
import VMergeCore
import VMergeQueue

/// The job API under `/api/v1/` (JSON both ways), on the dashboard's server:
/// - `POST /api/v1/jobs`: a job-list line; 201 with the job (200 when the same job, or a repeat
///   of the same `Idempotency-Key`, answers an earlier one).
/// - `GET /api/v1/jobs?state=&name=&after=&limit=`: newest first, a page at a time (`next_after`).
/// - `GET /api/v1/jobs/ID`: its state, attempts, progress, error and report.
/// - `POST /api/v1/jobs/ID/cancel`, `.../retry`, `POST /api/v1/queue/pause`, `.../resume`.
/// - `GET /api/v1/openapi.json`: the OpenAPI document (no token needed).
///
/// Every other request needs `Authorization: Bearer TOKEN` whose scope allows it (`APIScope`).
struct JobAPI {
    let reader: QueueReader
    let access: ActionAccess
    let policy: SubmissionPolicy

    static let prefix = "/api/v1/"

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let method = request.method == "HEAD" ? "GET" : request.method
        let parts = request.path.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
            .map(String.init)
        if parts == ["openapi.json"] {
            guard method == "GET" else {
                return Self.error(APIError(405, "this address takes GET"), allow: "GET, HEAD")
            }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                body: Array(OpenAPIDocument.json.text(pretty: true).utf8))
        }
        guard let route = Route(method: method, parts: parts) else {
            if let allow = Route.methods(of: parts) {
                return Self.error(APIError(405, "this address takes \(allow)"), allow: allow)
            }
            return Self.error(APIError(404, "no such address in the API (see /api/v1/openapi.json)"))
        }
        let caller: APICaller
        switch access.apiCaller(of: request) {
        case let .success(found): caller = found
        case let .failure(refusal):
            var error = APIError(refusal.status, refusal.reason)
            if refusal.status == 401 { error.headers["WWW-Authenticate"] = "Bearer" }
            return Self.error(error)
        }
        guard caller.scopes.contains(route.scope) else {
            return Self.error(APIError(403, "the token '\(caller.name)' has no '\(route.scope.rawValue)' scope"))
        }
        let result: Result<HTTPResponse, APIError>
        switch route {
        case .submit: result = submit(request, by: caller)
        case .list: result = list(request)
        case let .job(id): result = job(id).map { Self.json(200, $0) }
        case let .cancel(id): result = change(id, retrying: false, by: caller)
        case let .retry(id): result = change(id, retrying: true, by: caller)
        case .pause: result = control(pausing: true, by: caller)
        case .resume: result = control(pausing: false, by: caller)
        }
        switch result {
        case let .success(response): return response
        case let .failure(error): return Self.error(error)
        }
    }

    /// The routes, and the scope each needs.
    enum Route: Equatable {
        case submit, list, job(Int64), cancel(Int64), retry(Int64), pause, resume

        init?(method: String, parts: [String]) {
            switch (method, parts) {
            case ("POST", ["jobs"]): self = .submit
            case ("GET", ["jobs"]): self = .list
            case ("POST", ["queue", "pause"]): self = .pause
            case ("POST", ["queue", "resume"]): self = .resume
            case let ("GET", parts) where parts.count == 2 && parts[0] == "jobs":
                guard let id = Route.id(parts[1]) else { return nil }
                self = .job(id)
            case let ("POST", parts) where parts.count == 3 && parts[0] == "jobs":
                guard let id = Route.id(parts[1]) else { return nil }
                switch parts[2] {
                case "cancel": self = .cancel(id)
                case "retry": self = .retry(id)
                default: return nil
                }
            default: return nil
            }
        }

        /// The methods a known address takes, for a 405; nil for an unknown address.
        static func methods(of parts: [String]) -> String? {
            for (method, allow) in [("GET", "GET, HEAD"), ("POST", "POST")]
            where Route(method: method, parts: parts) != nil {
                return allow
            }
            return nil
        }

        static func id(_ text: String) -> Int64? {
            guard (1...18).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int64(text)
        }

        var scope: APIScope {
            switch self {
            case .list, .job: .read
            case .submit: .submit
            case .cancel, .retry, .pause, .resume: .operate
            }
        }
    }

    private func submit(_ request: HTTPRequest, by caller: APICaller) -> Result<HTTPResponse, APIError> {
        var idempotency: IdempotencyKey?
        if let key = request.headers["idempotency-key"] {
            guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                return .failure(APIError(400, "an Idempotency-Key is 1 to 255 printable ASCII characters"))
            }
            idempotency = IdempotencyKey(caller: caller.name, key: key)
        }
        let job: Job
        switch policy.job(from: request.body) {
        case let .success(made): job = made
        case let .failure(error): return .failure(error)
        }
        let policy = self.policy
        let submitted = reader.change { [idempotency] queue in
            try queue.submit(
                job, maxAttempts: policy.maxAttempts, idempotency: idempotency, maxQueued: policy.maxQueued)
        }
        let submission: Submission
        switch submitted {
        case let .failure(unavailable): return .failure(Self.unavailable(unavailable))
        case let .success(.failure(.queueFull(waiting, limit))):
            return .failure(
                APIError(
                    429, "the queue holds \(waiting) waiting jobs, as many as this server takes (\(limit)); try later",
                    headers: ["Retry-After": "30"]))
        case .success(.failure(.keyReused)):
            return .failure(APIError(422, "this Idempotency-Key was used for another request in the last 24 hours"))
        case let .success(.success(made)): submission = made
        }
        if submission.outcome == .existed, let refusal = existing(submission.id, asked: job, by: caller) {
            return .failure(refusal)
        }
        return self.job(submission.id).map { json in
            var response = Self.json(submission.outcome == .added ? 201 : 200, json)
            response.headers.append(("Location", "\(Self.prefix)jobs/\(submission.id)"))
            if submission.outcome == .replayed { response.headers.append(("Idempotent-Replayed", "true")) }
            return response
        }
    }

    /// The same job (inputs, options, output) was in the queue: never shown to a caller that may
    /// not read jobs, and refused when this request asks for other receivers or metadata (they
    /// would be dropped without a word).
    private func existing(_ id: Int64, asked: Job, by caller: APICaller) -> APIError? {
        guard caller.scopes.contains(.read) else {
            return APIError(409, "the same job (the same inputs, options and output) is in the queue already")
        }
        guard case let .success(detail?) = reader.read({ try $0.detail(id) }), let kept = detail.job else { return nil }
        guard kept.notify == asked.notify, kept.metadata == asked.metadata else {
            return APIError(
                409, "the same job is in the queue already (job \(id)), with other notify or metadata; not changed")
        }
        return nil
    }

    private func list(_ request: HTTPRequest) -> Result<HTTPResponse, APIError> {
        var filter = JobFilter()
        if let state = request.argument("state"), !state.isEmpty {
            guard let known = QueueState(rawValue: state) else {
                let states = QueueState.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(APIError(400, "state is one of \(states)"))
            }
            filter.state = known
        }
        filter.nameContains = request.argument("name")
        var after: Int64?
        if let text = request.argument("after"), !text.isEmpty {
            guard let id = Route.id(text) else { return .failure(APIError(400, "after is a job's id")) }
            after = id
        }
        var limit = 50
        if let text = request.argument("limit"), !text.isEmpty {
            guard let number = Int(text), (1...JobQueue.pageLimit).contains(number) else {
                return .failure(APIError(400, "limit is 1 to \(JobQueue.pageLimit)"))
            }
            limit = number
        }
        switch reader.read({ [filter, after, limit] in try $0.page(filter, before: after, limit: limit) }) {
        case let .failure(unavailable): return .failure(Self.unavailable(unavailable))
        case let .success(page):
            return .success(
                Self.json(
                    200,
                    .object([
                        ("jobs", .array(page.jobs.map(\.json))), ("total", .int(page.total)),
                        ("next_after", .int(page.nextBefore)),
                    ])))
        }
    }

    /// The job `id` as the API shows it, or 404.
    private func job(_ id: Int64) -> Result<JSON, APIError> {
        switch reader.read({ try $0.detail(id) }) {
        case let .failure(unavailable): return .failure(Self.unavailable(unavailable))
        case .success(nil): return .failure(APIError(404, "job \(id) is not in the queue"))
        case let .success(detail?): return .success(APIJobJSON.of(detail))
        }
    }

    private func change(_ id: Int64, retrying: Bool, by caller: APICaller) -> Result<HTTPResponse, APIError> {
        let who = "api (\(caller.name))"
        switch reader.change({ retrying ? try $0.retry(id, by: who) : try $0.cancel(id, by: who) }) {
        case let .failure(unavailable): return .failure(Self.unavailable(unavailable))
        case .success(.notFound): return .failure(APIError(404, "job \(id) is not in the queue"))
        case let .success(.refused(_, state)):
            let wanted =
                retrying ? "a failed or cancelled job can be retried" : "a queued or running job can be cancelled"
            return .failure(APIError(409, "job \(id) is \(state.rawValue); only \(wanted)"))
        case .success(.changed): return job(id).map { Self.json(200, $0) }
        }
    }

    private func control(pausing: Bool, by caller: APICaller) -> Result<HTTPResponse, APIError> {
        let who = "api (\(caller.name))"
        switch reader.change({ pausing ? try $0.pause(by: who) : try $0.resume() }) {
        case let .failure(unavailable): return .failure(Self.unavailable(unavailable))
        case let .success(changed):
            return .success(Self.json(200, .object([("paused", .bool(pausing)), ("changed", .bool(changed))])))
        }
    }

    /// The database's own message (it names the host, the user, the database, the statement)
    /// goes to the dashboard's log, not to a network caller.
    static func unavailable(_ unavailable: QueueReader.Unavailable) -> APIError {
        APIError(
            503, "the database cannot be read just now; the dashboard's log says why", headers: ["Retry-After": "5"])
    }

    static func json(_ status: Int, _ json: JSON) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: Array((json.text(pretty: true) + "\n").utf8))
    }

    static func error(_ error: APIError, allow: String? = nil) -> HTTPResponse {
        var response = HTTPResponse.refusal(error.status, error.message, path: prefix)
        for (name, value) in error.headers.sorted(by: { $0.key < $1.key }) { response.headers.append((name, value)) }
        if let allow { response.headers.append(("Allow", allow)) }
        return response
    }
}
