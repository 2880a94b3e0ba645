import Foundation
import VMergeCore
import VMergeQueue

/// The dashboard's POSTs: signing in and out, and the actions on the queue. Each action is
/// authorised by `ActionAccess` (the token, a session with its form token, never another site),
/// done through the reader's connection, and answered with a redirect back to the page it came
/// from (the outcome shown there once), or with a line of text for a client using the token.
struct DashboardActions {
    let reader: QueueReader
    let access: ActionAccess

    enum Action: Equatable {
        case retry(Int64)
        case cancel(Int64)
        case pause
        case resume
        /// Every failed job whose name holds the form's `name`, with its `confirm` ticked.
        case retryFailed
    }

    /// `/jobs/ID/retry`, `/jobs/ID/cancel`, `/queue/pause`, `/queue/resume`.
    static func action(at path: String) -> Action? {
        if path == "/queue/pause" { return .pause }
        if path == "/queue/resume" { return .resume }
        if path == "/queue/retry-failed" { return .retryFailed }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "jobs", parts[2].count <= 18,
            parts[2].allSatisfy({ $0.isASCII && $0.isNumber }), let id = Int64(parts[2])
        else { return nil }
        switch parts[3] {
        case "retry": return .retry(id)
        case "cancel": return .cancel(id)
        default: return nil
        }
    }

    /// The paths that take a POST.
    static func isAction(_ path: String) -> Bool { path == "/login" || path == "/logout" || action(at: path) != nil }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        switch request.path {
        case "/login": return signIn(request)
        case "/logout":
            if let refusal = ActionAccess.crossSite(request) { return .text(refusal.status, refusal.reason + "\n") }
            access.signOut(request)
            return .seeOther("/", cookie: ActionAccess.clearedCookie)
        default:
            guard let action = Self.action(at: request.path) else {
                return HTTPResponse.text(405, "this address takes GET\n").allowing("GET, HEAD")
            }
            if let refusal = access.refusal(of: request) { return .text(refusal.status, refusal.reason + "\n") }
            let who = access.session(of: request) == nil ? "dashboard (token)" : "dashboard"
            let (status, outcome) =
                action == .retryFailed ? retryFailed(request, by: who) : perform(action, by: who)
            guard access.session(of: request) != nil else { return .text(status, outcome + "\n") }
            access.leave(outcome, for: request)
            return .seeOther(URLText.localReturn(request.field("return")))
        }
    }

    private func signIn(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = ActionAccess.crossSite(request) { return .text(refusal.status, refusal.reason + "\n") }
        switch access.signIn(offered: request.field("token") ?? "") {
        case let .success(session):
            return .seeOther(URLText.localReturn(request.field("return")), cookie: ActionAccess.cookie(for: session))
        case let .failure(refusal): return .text(refusal.status, refusal.reason + "\n")
        }
    }

    /// Does `action`; the HTTP status and one line saying what happened.
    func perform(_ action: Action, by who: String) -> (Int, String) {
        let (id, retrying): (Int64, Bool)
        switch action {
        case let .retry(job): (id, retrying) = (job, true)
        case let .cancel(job): (id, retrying) = (job, false)
        case .pause, .resume: return control(pausing: action == .pause, by: who)
        case .retryFailed: return (400, "not done: retry-failed is a form's")
        }
        let change = reader.change { retrying ? try $0.retry(id, by: who) : try $0.cancel(id, by: who) }
        switch change {
        case let .failure(unavailable): return (503, "not done: the database cannot be read (\(unavailable.reason))")
        case let .success(.changed(name, was)):
            let job = "job \(id) (\(VisibleText.of(name)))"
            if retrying { return (200, "\(job) is queued again") }
            return (
                200,
                was == .running
                    ? "\(job) is cancelled; its worker stops it at its next heartbeat" : "\(job) is cancelled"
            )
        case .success(.notFound): return (404, "job \(id) is not in the queue")
        case let .success(.refused(name, state)):
            let wanted =
                retrying ? "a failed or cancelled job can be retried" : "a queued or running job can be cancelled"
            return (409, "job \(id) (\(VisibleText.of(name))) is \(state.rawValue); only \(wanted)")
        }
    }

    /// Queues every failed job the form's name matches again, once its box is ticked.
    private func retryFailed(_ request: HTTPRequest, by who: String) -> (Int, String) {
        guard request.field("confirm") == "yes" else {
            return (400, "not done: tick the box that says which jobs are retried")
        }
        let name = request.field("name").flatMap { $0.isEmpty ? nil : $0 }
        switch reader.change({ try $0.retryAll(in: .failed, nameContains: name, by: who) }) {
        case let .failure(unavailable): return (503, "not done: the database cannot be read (\(unavailable.reason))")
        case let .success(retried):
            return (200, "\(retried.count) failed job\(retried.count == 1 ? " is" : "s are") queued again")
        }
    }

    /// Pauses or resumes the queue.
    private func control(pausing: Bool, by who: String) -> (Int, String) {
        switch reader.change({ pausing ? try $0.pause(by: who) : try $0.resume() }) {
        case let .failure(unavailable): return (503, "not done: the database cannot be read (\(unavailable.reason))")
        case .success(true):
            return (
                200,
                pausing
                    // The page's paused banner says what it means; the notice does not repeat it.
                    ? "the queue is paused"
                    : "the queue is resumed"
            )
        case .success(false): return (200, pausing ? "the queue was already paused" : "the queue was not paused")
        }
    }
}
