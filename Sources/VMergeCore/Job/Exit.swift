import Foundation

/// How a command ended: the one place an ending becomes an exit status, and the one table of
/// statuses that help, the man page and the README print for each command.
package enum Exit: Sendable, Equatable {
    /// The output was written (batch: every job done; watch: stopped, or --once all done).
    case success
    /// A processing error (batch: a job failed; watch: an unusable folder, or a --once job failed).
    case failure
    /// Wrong options or arguments.
    case usage
    /// Every clip was dropped: nothing to merge.
    case nothingToMerge
    /// Stopped by a signal: 128 + its number, as shells report it.
    case cancelled(signal: Int32)

    package var status: Int32 {
        switch self {
        case .success: return 0
        case .failure: return 1
        case .usage: return 2
        case .nothingToMerge: return 3
        case let .cancelled(signal): return 128 &+ signal
        }
    }

    /// A failure after the work was done (a report that could not be written): success becomes
    /// failure, any other ending stays what it was.
    package var failingLate: Exit { self == .success ? .failure : self }

    /// The commands whose statuses are listed.
    package enum Command: String, Sendable, CaseIterable {
        case merge, batch, watch, queue, worker, dashboard
    }

    /// Each command's exit statuses: status and meaning, in order.
    package static func table(for command: Command) -> [(status: String, meaning: String)] {
        let signals = (
            "\(Exit.cancelled(signal: 2).status)",
            "interrupted (SIGINT); \(Exit.cancelled(signal: 15).status) terminated (SIGTERM)"
        )
        switch command {
        case .merge:
            return [
                ("\(Exit.success.status)", "the output was written"),
                ("\(Exit.failure.status)", "processing error (unreadable input, encoding or disk error); no output is left"),
                ("\(Exit.usage.status)", "usage error (unknown option, bad value, missing argument; an output or report "
                    + "in a folder that is not there, an output that is a folder or one of the inputs): running it "
                    + "again cannot help"),
                ("\(Exit.nothingToMerge.status)", "nothing to merge: every clip was dropped"),
                (signals.0, signals.1 + "; no output is left, the report says cancelled"),
            ]
        case .batch:
            return [
                ("\(Exit.success.status)", "every job succeeded or was already done (with --bad-jobs-ok: or failed for "
                    + "good, for a reason of its own that a retry meets again)"),
                ("\(Exit.failure.status)", "at least one job failed or was not run (with --bad-jobs-ok: failed on the "
                    + "output's side, which a retry may cure), or the job list is unusable"),
                ("\(Exit.usage.status)", "usage error"),
                (signals.0, signals.1 + "; running jobs leave no output"),
            ]
        case .watch:
            return [
                ("\(Exit.success.status)", "stopped by SIGINT/SIGTERM (running jobs go back to the inbox), or --once "
                    + "finished with every job done"),
                ("\(Exit.failure.status)", "--once: at least one job failed; or the inbox or output folder is unusable"),
                ("\(Exit.usage.status)", "usage error"),
            ]
        case .queue, .worker, .dashboard:
            return queueTable(for: command, signals: signals)
        }
    }

    /// The exit tables of the commands over the job queue.
    private static func queueTable(for command: Command, signals: (String, String)) -> [(status: String, meaning: String)] {
        switch command {
        case .queue:
            return [
                ("\(Exit.success.status)", "the queue was made or migrated, the grants were printed, the jobs were "
                    + "added or listed, every job named was retried or cancelled, or the queue is paused or resumed as asked"),
                ("\(Exit.failure.status)", "the database cannot be reached or refused, the job list is unusable or names "
                    + "an input not there (without --inputs-elsewhere), or a job named is not there or not in a state to "
                    + "retry or cancel"),
                ("\(Exit.usage.status)", "usage error (also: no --db and no VMERGE_DB; a role name grants refuses)"),
            ]
        case .worker:
            return [
                ("\(Exit.success.status)", "--once: nothing is left queued or running, and no job this worker ran "
                    + "failed for good"),
                ("\(Exit.failure.status)", "the database cannot be reached at start, refused, or holds no queue; or "
                    + "--once: a job this worker ran failed (later outages are waited out)"),
                ("\(Exit.usage.status)", "usage error (also: no --db and no VMERGE_DB)"),
                (signals.0, signals.1 + "; running jobs are cancelled and put back in the queue, their attempts "
                    + "not counted"),
            ]
        case .dashboard:
            return [
                ("\(Exit.success.status)", "stopped by SIGINT/SIGTERM (a database that cannot be read is shown as such, "
                    + "not an exit)"),
                ("\(Exit.failure.status)", "an address cannot be listened on (in use, not this machine's, a privileged "
                    + "port, a Unix socket's path that holds another file or a live socket), or the --token-file "
                    + "cannot be read or holds no token"),
                ("\(Exit.usage.status)", "usage error (also: no --db and no VMERGE_DB, a --listen that is not "
                    + "address:port or unix:PATH)"),
            ]
        case .merge, .batch, .watch:
            return table(for: command)
        }
    }
}

/// A test hook: with VMERGE_TEST_KILL_AT=<point> (read by the command line) the process kills
/// itself with SIGKILL at that point of publishing, the way a power cut or the OOM killer would
/// stop it there; the crash tests then check what the next run finds. With
/// VMERGE_TEST_PAUSE_AT=<point> and VMERGE_TEST_PAUSE_FILE=<path> it stops there instead: it
/// creates the file and waits while it exists (two minutes at most), so a test can change the
/// world (cancel the job, swap a folder) at exactly that point, which no timing could hit every
/// time. Points: "before-video" (the poster and report published, the video not yet),
/// "after-video" (the video published, nothing done after it: no source deleted, no watch
/// bookkeeping), "before-publish" (the set encoded and synced, nothing published).
package enum CrashPoint {
    nonisolated(unsafe) package static var armed: String?
    nonisolated(unsafe) package static var pause: (point: String, file: String)?

    package static func here(_ point: String) {
        if armed == point { kill(getpid(), SIGKILL) }
        if let pause, pause.point == point {
            let made = POSIX.open(FileName(pause.file), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            if made >= 0 { close(made) }
            let start = Date()
            while POSIX.access(FileName(pause.file), F_OK) == 0 && Date().timeIntervalSince(start) < 120 { usleep(20_000) }
        }
    }
}
