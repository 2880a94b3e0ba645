import Foundation
import VMergeCore

extension QueueSnapshot {
    /// A paused queue: since when (Unix seconds) and by whom (as the pausing side named itself:
    /// text from outside, shown through VisibleText).
    package struct Pause: Sendable, Equatable {
        package var since: Double
        package var by: String

        package init(since: Double, by: String) {
            self.since = since
            self.by = by
        }

        /// `since` as UTC ISO 8601 to the second, as `queue status` shows times.
        package var sinceText: String { utcText(Date(timeIntervalSince1970: since.rounded(.down))) }
    }
}

/// Pausing the queue (the one row of `vmerge.control`). While it is paused, a claim takes
/// nothing: neither queued jobs nor running ones whose lease ran out (those wait, running, for the
/// resume). Running jobs go on to their end, their leases renewed as always, and are recorded;
/// queued jobs stay queued and listed. A claim that had begun when the pause was written may
/// still take its job. A job whose lease ran out on its last attempt is still failed: that
/// takes nothing, it says what became of it.
extension JobQueue {
    /// The longest `by` kept: it names an operator, not a story.
    package static let pauseByLimit = 200

    /// Pauses the queue; true if it was not paused (a second pause keeps the first's time and
    /// name).
    package func pause(by who: String) throws -> Bool {
        let paused = try connection.execute(
            """
            UPDATE vmerge.control SET paused_at = now(), paused_by = $1
            WHERE paused_at IS NULL RETURNING singleton
            """, [String(who.prefix(JobQueue.pauseByLimit))])
        return paused.rowCount == 1
    }

    /// Resumes the queue: the next claim takes jobs again; true if it was paused.
    package func resume() throws -> Bool {
        let resumed = try connection.execute(
            "UPDATE vmerge.control SET paused_at = NULL, paused_by = NULL WHERE paused_at IS NOT NULL RETURNING singleton"
        )
        return resumed.rowCount == 1
    }

    /// Whether the queue is paused, since when and by whom; nil when it is not.
    package func paused() throws -> QueueSnapshot.Pause? {
        let row = try connection.execute(
            "SELECT extract(epoch FROM paused_at), paused_by FROM vmerge.control WHERE paused_at IS NOT NULL")
        guard let since = row.value(0, 0).flatMap({ Double($0) }) else { return nil }
        return QueueSnapshot.Pause(since: since, by: row.value(0, 1) ?? "")
    }
}
