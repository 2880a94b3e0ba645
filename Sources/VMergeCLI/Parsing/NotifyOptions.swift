import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// --notify URL (repeatable), --notify-secret-file FILE and --notify-wait SECONDS: where a run's
/// events go (job.started, job.progress, job.completed, job.failed, job.cancelled), signed as
/// Standard Webhooks sign them, and how long a run waits at its end for what is not delivered.
enum NotifyOptions {
    static let notify = CommandOption<[String]>.repeated(
        "notify", value: "url",
        help: "Send the run's events to this https URL (repeatable): job.started, job.progress (at most every 30 s), "
            + "job.completed with the report, job.failed, job.cancelled, signed as Standard Webhooks sign them. A "
            + "private or local address only under --allow-remote.")
    static let secretFile = CommandOption.text(
        "notify-secret-file", value: "file",
        help: "The secret the events are signed with: whsec_ and its key in base64 "
            + "(echo whsec_$(head -c 32 /dev/urandom | base64)).",
        empty: "missing file name for '--notify-secret-file'")
    static let wait = CommandOption.seconds(
        "notify-wait",
        help: "At the end of the run, try what was not delivered for up to this long, then say what could "
            + "not be. (default: 30)", in: 0...3600)

    static let specs = [notify.spec, secretFile.spec, wait.spec]

    /// Where a run's events go, signed with what, and how long its end waits for them.
    struct Settings: Equatable {
        var targets: [NotifyTarget]
        var secret: WebhookSecret
        var wait: Double

        /// A notifier for one run.
        func notifier() -> Notifier {
            // A signal ends the wait for receivers at once (the run stops within a second).
            Notifier(targets: targets, secret: secret, shouldStop: { VMergeProcess.pendingSignal != 0 })
        }
    }

    /// The run's events' settings, or nil without --notify; `access` says which URLs may be
    /// private. `secretAlone`: a secret without --notify is of use (a worker signs the events
    /// its jobs' own `notify` names).
    static func read(_ parsed: ParsedArguments, access: RemoteAccess, secretAlone: Bool = false) throws -> Settings? {
        let urls = try notify.read(parsed)
        let secretPath = try secretFile.read(parsed)
        guard !urls.isEmpty || (secretAlone && secretPath != nil) else {
            if secretPath != nil { throw UsageError(description: "'--notify-secret-file' is for --notify") }
            return nil
        }
        var targets: [NotifyTarget] = []
        for text in urls {
            switch NotifyTarget.parse(text, access: access) {
            case let .success(target): targets.append(target)
            case .failure:
                throw UsageError.naming("'--notify \(RemoteName.shown(text))': events go to an https:// URL")
            }
        }
        guard let secretPath else {
            throw UsageError(description: "--notify needs --notify-secret-file: events are always signed")
        }
        return Settings(targets: targets, secret: try WebhookSecret.read(secretPath), wait: try wait.read(parsed) ?? 30)
    }
}
