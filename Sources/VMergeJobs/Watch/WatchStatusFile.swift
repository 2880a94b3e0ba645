import Foundation
import VMergeCore

/// The worker's state in a small JSON file (`--status-file`, `WatchStatus`), rewritten as it
/// changes (at most every 2 s while a job runs) and every `idleRewrite` seconds between jobs. It
/// replaces only an earlier status file, never anything else.
final class WatchStatusFile {
    static let signature = WatchStatus.signature
    /// Well within the dashboard's 30 s before it calls a status stale.
    static let idleRewrite = 10.0

    let path: String?
    private let now: () -> Double
    private var lastWrite = -1.0
    private var warned = false
    private let log: DiagnosticSink
    var state: WatchStatus

    init(settings: WatchSettings, now: @escaping () -> Double, log: DiagnosticSink) {
        path = settings.statusFile
        state = WatchStatus(inbox: settings.inbox, outbox: settings.outbox)
        self.now = now
        self.log = log
    }

    /// Refuses, at start, a status file that cannot be written.
    func check() throws {
        guard let path else { return }
        try SafeFile.checkTarget(path, replace: .ifStartsWith([WatchStatusFile.signature]))
    }

    /// A job starts: its name and inputs (as the log names them).
    func started(_ job: String, inputs: [String]) {
        state.job = job
        state.jobStarted = Date()
        state.inputs = Array(inputs.prefix(WatchStatus.inputsListed))
        state.inputCount = inputs.count
        state.progress = nil
        state.percent = nil
    }

    /// The running job ended so; the next write says the watcher is between jobs.
    func finished(_ finished: WatchStatus.Finished) {
        state.record(finished)
        state.job = nil
    }

    func write(_ state: String, throttled: Bool = false) {
        self.state.state = state
        guard let path else { return }
        let now = now()
        if throttled && lastWrite >= 0 && now - lastWrite < 2 { return }
        lastWrite = now
        if self.state.job == nil { (self.state.percent, self.state.progress, self.state.inputs) = (nil, nil, []) }
        self.state.updated = Date()
        do {
            try SafeFile.write(
                self.state.json.text(pretty: true) + "\n", to: path,
                replace: .ifStartsWith([WatchStatusFile.signature]))
            warned = false
        } catch {
            if !warned { log.warning("\(VMergeError.message(of: error)) (the status file)") }
            warned = true
        }
    }
}
