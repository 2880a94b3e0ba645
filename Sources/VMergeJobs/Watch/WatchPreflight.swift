import Foundation
import VMergeCore

/// What a watch folder checks before it takes any job: the output folder is there (made if
/// missing) and is a folder, and neither it nor an --allow-inputs folder overlaps the inbox,
/// which producers can write.
enum WatchPreflight {
    static func check(_ settings: WatchSettings, inbox folders: WatchFolders) throws {
        var outboxInfo = stat()
        if POSIX.stat(FileName(settings.outbox), &outboxInfo) != 0 {
            guard POSIX.makeFolders(FileName(settings.outbox)) else {
                throw VMergeError.io(file: settings.outbox, message: "cannot create this folder")
            }
        }
        guard POSIX.stat(FileName(settings.outbox), &outboxInfo) == 0, FileKind(mode: outboxInfo.st_mode) == .directory else {
            throw VMergeError.io(file: settings.outbox, message: "is not a folder")
        }
        if let inbox = folders.inbox.info, inbox.st_dev == outboxInfo.st_dev, inbox.st_ino == outboxInfo.st_ino {
            // Every output would be a new loose file in the inbox: a loop.
            throw VMergeError.io(file: settings.outbox, message: "the output folder must not be the inbox")
        }
        for allowed in settings.allowedInputs {
            guard let folder = resolvedPath(allowed) else { continue }
            // Jobs could read other producers' files (their job folders, .processing, .done).
            if folders.inboxPath == folder || folders.inboxPath.hasPrefix(folder + "/")
                || folder.hasPrefix(folders.inboxPath + "/")
            {
                throw VMergeError.io(
                    file: allowed,
                    message: "--allow-inputs may not hold the inbox or lie inside it: jobs could read other producers' files")
            }
        }
        if let outbox = resolvedPath(settings.outbox), outbox.hasPrefix(folders.inboxPath + "/") {
            // Producers could rename it and put a link in its place: outputs would go anywhere.
            throw VMergeError.io(
                file: settings.outbox, message: "the output folder must not be inside the inbox, which producers can write")
        }
    }
}

/// What a watch job's failed attempt leads to. No space is not the job's fault: it goes back to
/// the inbox, not taken again for a wait that doubles (30 s up to 10 min). An output-side error
/// that may pass (a write error, a name taken meanwhile) is tried again after 2, 4, 8... s (at
/// most 60), up to --retries times. Anything else fails the job.
struct RetryPolicy: Equatable {
    var retries: Int

    enum Decision: Equatable {
        case backToInbox(delay: Double)
        case retry(delay: Double)
        case fail
    }

    /// - Parameters:
    ///   - attempt: attempts made before this one (0 for the first).
    ///   - lastDelay: the wait this job was last put back for, if it was.
    func decide(_ failure: VMergeError, attempt: Int, output: String, inputs: [FileName], lastDelay: Double?) -> Decision {
        if case .noSpace = failure { return .backToInbox(delay: min(600, (lastDelay ?? 15) * 2)) }
        if attempt < retries && WatchJob.isTransient(failure, output: output, inputs: inputs) {
            return .retry(delay: min(60, pow(2, Double(attempt + 1))))
        }
        return .fail
    }
}
