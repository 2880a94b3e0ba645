import Foundation
import VMergeCore

/// The worker's state in a small JSON file (`--status-file`), rewritten as it changes (at most
/// every 2 s while a job runs). It replaces only an earlier status file, never anything else.
final class WatchStatusFile {
    /// How every status file begins: an earlier one may be replaced, nothing else.
    static let signature = "{\n  \"kind\": \"vmerge watch status\",\n"

    struct State {
        var state = "starting"
        var job: String?
        var jobStarted: Date?
        var percent: Double?
        var done = 0
        var failed = 0
        var started = Date()
    }

    let path: String?
    private let settings: WatchSettings
    private let now: () -> Double
    private var lastWrite = -1.0
    private var warned = false
    private let log: WorkerLog
    var state = State()


    init(settings: WatchSettings, now: @escaping () -> Double, log: @escaping @Sendable (WorkerLogLine) -> Void) {
        path = settings.statusFile
        self.settings = settings
        self.now = now
        self.log = WorkerLog(log)
    }

    /// Refuses, at start, a status file that cannot be written.
    func check() throws {
        guard let path else { return }
        try SafeFile.checkTarget(path, replace: .ifStartsWith([WatchStatusFile.signature]))
    }

    func write(_ state: String, throttled: Bool = false) {
        self.state.state = state
        guard let path else { return }
        let now = now()
        if throttled && lastWrite >= 0 && now - lastWrite < 2 { return }
        lastWrite = now
        if self.state.job == nil { self.state.percent = nil }
        let formatter = ISO8601DateFormatter()
        let s = self.state
        let json = JSON.object([
            ("kind", .string("vmerge watch status")),
            ("pid", .int(Int64(getpid()))),
            ("host", .string(shortHostName)),
            ("inbox", .string(settings.inbox)),
            ("outbox", .string(settings.outbox)),
            ("state", .string(state)),
            ("job", .string(s.job)),
            ("job_started_at", .string(s.job == nil ? nil : s.jobStarted.map(formatter.string))),
            ("percent", .number(s.percent)),
            ("jobs_done", .int(s.done)),
            ("jobs_failed", .int(s.failed)),
            ("started_at", .string(formatter.string(from: s.started))),
            ("updated_at", .string(formatter.string(from: Date()))),
        ])
        do {
            try SafeFile.write(
                json.text(pretty: true) + "\n", to: path, replace: .ifStartsWith([WatchStatusFile.signature]))
            warned = false
        } catch {
            if !warned { log.warning("\(VMergeError.message(of: error)) (the status file)") }
            warned = true
        }
    }
}
