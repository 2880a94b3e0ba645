import Foundation
import VMergeCore
import VMergeRemote

/// Settings of a watch folder, with the defaults in one place (help and parsing read them here).
package struct WatchSettings: Sendable, Equatable {
    package static let defaultSettle = 5.0
    package static let defaultMarker = ".ready"
    package static let defaultRetries = 2
    /// Seconds between looks at the inbox with --poll (or without inotify).
    package static let pollInterval = 2.0
    /// Seconds between full rescans with inotify (an event may be missed).
    package static let rescanInterval = 30.0
    /// Recoveries before a claim counts as poison: high enough that restarts during a long job
    /// (deploys, reboots) do not fail it, low enough that a file that crashes FFmpeg cannot stall
    /// the inbox for ever.
    package static let crashLimit = 5

    package var inbox: String
    package var outbox: String
    /// A loose file is a job once its size and modification time held still this long.
    package var settle = defaultSettle
    /// A subfolder is a job once it holds this file (or a job.json).
    package var marker = defaultMarker
    package var deleteSources = false
    /// Retries after a transient error (write errors, a name taken), with doubling waits.
    package var retries = defaultRetries
    package var poll = false
    package var once = false
    package var statusFile: String?
    /// Folders outside the job folders that job.json inputs may name (absolute paths).
    package var allowedInputs: [String] = []
    /// The run-wide job settings; a job.json's options are read over them. Its `minFree` is
    /// also what OUTBOX must have before a job starts (default 1 MiB; each job also checks for
    /// its own estimated size).
    package var settings: JobSettings
    /// --notify: every job's events go here, and to a job.json's own `notify` (only under
    /// `remoteAccess`'s prefixes), kept in the inbox's .events until delivered.
    package var notify: [NotifyTarget] = []
    /// The secret events are signed with; nil: this watcher sends no events.
    package var notifySecret: WebhookSecret?
    /// With --once: how long the end waits for events not yet delivered.
    package var notifyWait = 30.0
    /// --allow-remote: private receivers allowed, and where a job.json's `notify` may point.
    package var remoteAccess = RemoteAccess(listingRequired: true)
    /// Tests' switches, for every job (see the CLI's TestHooks).
    package var hooks = MergeHooks()

    package init(inbox: String, outbox: String, settings: JobSettings) {
        self.inbox = inbox
        self.outbox = outbox
        self.settings = settings
    }
}
