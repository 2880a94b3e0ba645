import CVMergePOSIX
import CVMergeSupport
import Foundation
import VMergeCore

/// The worker's own folders inside the inbox (.processing, .done, .failed), held open: producers
/// may write the inbox, so they could rename these or plant links in their place; every move and
/// every bookkeeping file goes through the open folders, never through a path into the inbox.
final class WatchFolders {
    /// The inbox's real path.
    let inboxPath: String
    /// As the user named it (a removed and re-made inbox is found again by this name).
    private let givenPath: String
    let inbox: FileDescriptor
    let processing: FileDescriptor
    let done: FileDescriptor
    let failed: FileDescriptor
    /// Events owed to receivers (`WatchOutbox`).
    let events: FileDescriptor
    /// The inbox's identity when opened, to notice it being removed or replaced.
    private let identity: (dev: UInt64, ino: UInt64)

    var processingPath: String { inboxPath + "/.processing" }
    var donePath: String { inboxPath + "/.done" }
    var failedPath: String { inboxPath + "/.failed" }
    var eventsPath: String { inboxPath + "/.events" }

    /// Opens the inbox and its worker folders, creating those that are missing. Each must be a
    /// real folder (not a link) owned by this user and writable by nobody else.
    init(inbox: String) throws {
        // Absolute and without "..": claim paths are built on it, and a job's confinement is
        // judged on those paths.
        givenPath = inbox
        inboxPath = resolvedPath(inbox) ?? absolutePath(inbox)
        let fd = POSIX.openat(AT_FDCWD, FileName(inbox), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else {
            throw VMergeError.io(
                file: inbox, message: errno == ENOENT ? "inbox folder does not exist" : "cannot open the inbox: \(SafeFile.errorText())")
        }
        let inboxFolder = FileDescriptor(fd)
        self.inbox = inboxFolder
        let info = inboxFolder.info ?? stat()
        identity = (UInt64(truncatingIfNeeded: info.st_dev), UInt64(truncatingIfNeeded: info.st_ino))
        func own(_ name: String) throws -> FileDescriptor {
            let path = inbox + "/" + name
            if POSIX.mkdirat(inboxFolder.raw, FileName(name), 0o755) != 0 && errno != EEXIST {
                throw VMergeError.io(file: path, message: "cannot create this folder: \(SafeFile.errorText())")
            }
            guard let folder = SafeFile.openFolder(name, in: inboxFolder), let info = folder.info else {
                let kind = SafeFile.kind(of: name, in: inboxFolder)
                throw VMergeError.io(
                    file: path, message: "is \(kind.phrase), not the worker's own folder; move it away and restart")
            }
            guard info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
                throw VMergeError.io(
                    file: path,
                    message: "belongs to another user or is writable by others; the worker's own folders must be its alone")
            }
            return folder
        }
        processing = try own(".processing")
        done = try own(".done")
        failed = try own(".failed")
        events = try own(".events")
    }

    /// Whether the inbox path still names the folder held open (it may have been removed, or
    /// removed and made anew).
    var inboxIsCurrent: Bool {
        var info = stat()
        guard POSIX.stat(FileName(givenPath), &info) == 0 else { return false }
        return UInt64(truncatingIfNeeded: info.st_dev) == identity.dev && UInt64(truncatingIfNeeded: info.st_ino) == identity.ino
    }
}

/// An exclusive lock on a claim's lock file, held while a worker works on the claim; the kernel
/// drops it when the worker exits or dies, which is how other workers tell a live claim from a
/// dead one. The file also counts the claim's recoveries (a job that keeps killing its worker).
final class ClaimLock {
    let name: String
    private let folder: FileDescriptor
    private let file: FileDescriptor

    /// Takes the lock in `folder` (.processing), creating the file if needed; nil if another
    /// worker holds it.
    init?(_ name: String, in folder: FileDescriptor) {
        // The lock must be on the file that is at the name now: another worker may remove a stale
        // lock file between our open and our lock, and a lock on the removed file guards nothing.
        for _ in 0..<3 {
            let fd = POSIX.openat(folder.raw, FileName(name), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return nil }
            let file = FileDescriptor(fd)
            guard vm_try_lock(fd) == 0 else { return nil }
            var named = stat()
            if let held = file.info, POSIX.fstatat(folder.raw, FileName(name), &named, AT_SYMLINK_NOFOLLOW) == 0,
                held.st_ino == named.st_ino, held.st_dev == named.st_dev
            {
                self.name = name
                self.folder = folder
                self.file = file
                return
            }
        }
        return nil
    }

    /// What the worker that made the claim wrote down: the job's kind and how many times the
    /// claim was recovered. The lock file is the worker's (in .processing); the claim folder's
    /// contents are the producer's and decide nothing.
    var record: (kind: InboxJob.Kind?, recoveries: Int) {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(file.raw, $0.baseAddress, $0.count, 0) }
        let words = count > 0 ? String(decoding: bytes.prefix(count), as: UTF8.self).split(separator: " ") : []
        let kind: InboxJob.Kind? = words.first == "folder" ? .folder : words.first == "file" ? .file : nil
        return (kind, words.last.flatMap { Int($0) } ?? 0)
    }

    var recoveries: Int { record.recoveries }

    func write(kind: InboxJob.Kind?, recoveries: Int) {
        let text = (kind.map { $0 == .folder ? "folder " : "file " } ?? "") + "\(recoveries)"
        let bytes = Array(text.utf8)
        _ = ftruncate(file.raw, 0)
        _ = bytes.withUnsafeBytes { pwrite(file.raw, $0.baseAddress, $0.count, 0) }
    }

    func setRecoveries(_ count: Int) { write(kind: record.kind, recoveries: count) }

    /// Releases the lock and removes its file (the claim it guarded has left .processing).
    func release() { POSIX.unlinkat(folder.raw, FileName(name), 0) }
}

/// A job taken by this worker: its folder in .processing, named "<job>@<token>".
struct Claim {
    var id: String
    /// Names the claim's temporary files, so a dead worker's can be found.
    var token: String
    var name: String
    var kind: InboxJob.Kind
    var lock: ClaimLock
    /// Its path, for messages and the job key (the folder is the worker's to move, its contents
    /// the producer's: read only, confined).
    var folder: String

    /// `text` with the claim folder's path as the job's name ("job3/a.mov", not
    /// ".../.processing/job3@w1-.../a.mov"; a loose file's as itself): the folder moves on, to
    /// .done or .failed.
    func shown(_ text: String) -> String { showing(text) }

    /// `shown` as a function holding only the names it needs (not the claim's lock), for a sink
    /// scope the decoding thread says its warnings through too.
    var showing: @Sendable (String) -> String {
        let (folder, shownAs) = (folder + "/", kind == .file ? "" : name + "/")
        return { $0.replacingOccurrences(of: folder, with: shownAs) }
    }

    /// The claim folder itself, opened without following a link right after the claim: every
    /// read of the job starts here. nil if what was claimed is not a folder (a link posing as a
    /// job): the job fails.
    var folderFD: FileDescriptor?
}

/// Claim and recover: takes jobs by an atomic rename into .processing (any number of workers,
/// on one machine or several sharing the folder, never take the same job), finds the claims of
/// workers that died, and moves claims on to .done, .failed or back to the inbox.
final class ClaimStore {
    let folders: WatchFolders
    let marker: String
    private let host = shortHostName
    private let log: DiagnosticSink


    init(folders: WatchFolders, marker: String, log: DiagnosticSink) {
        self.folders = folders
        self.marker = marker
        self.log = log
    }

    /// A token for a new claim: this machine, this process, a random part.
    func newToken() -> String { "\(host)-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))" }

    /// The longest job name whose derived names (".<job>@<token>.lock", "<job>@<token>.error.json")
    /// fit the file system's 255-byte name limit.
    var maxNameBytes: Int { 255 - newToken().utf8.count - 8 - 12 }

    /// Claims a job by renaming it into .processing/<name>@<token>, with the claim's lock taken
    /// first, so no other worker ever sees the claim unlocked. nil if another worker won (or the
    /// job could not be moved: logged).
    func claim(_ job: InboxJob) -> Claim? {
        let token = newToken()
        let id = job.name + "@" + token
        guard let lock = ClaimLock("." + id + ".lock", in: folders.processing) else {
            log.error("cannot claim \(job.name): cannot lock \(folders.processingPath)/.\(id).lock: \(SafeFile.errorText())")
            return nil
        }
        lock.write(kind: job.kind, recoveries: 0)
        switch job.kind {
        case .folder:
            guard POSIX.renameat(folders.inbox.raw, FileName(job.name), folders.processing.raw, FileName(id)) == 0 else {
                let code = errno
                lock.release()
                // Gone: another worker took it. Anything else is worth saying.
                // Moving a folder to another parent needs write permission on the folder itself.
                let why = code == EACCES || code == EPERM
                    ? "; a job folder must be writable by the watcher's user (make the inbox's folders group-writable: docs/operators.md, Watch)"
                    : ""
                if code != ENOENT { log.error("cannot claim \(job.name): \(SafeFile.errorText(code))\(why)") }
                return nil
            }
        case .file:
            // A folder with the file in it (a claim without marker or job.json is a loose file).
            guard POSIX.mkdirat(folders.processing.raw, FileName(id), 0o755) == 0, let claimFolder = SafeFile.openFolder(id, in: folders.processing)
            else {
                log.error("cannot claim \(job.name): cannot create its claim folder: \(SafeFile.errorText())")
                lock.release()
                return nil
            }
            guard POSIX.renameat(folders.inbox.raw, FileName(job.name), claimFolder.raw, FileName(job.name)) == 0 else {
                let code = errno
                POSIX.unlinkat(folders.processing.raw, FileName(id), AT_REMOVEDIR)
                lock.release()
                // Moving a folder to another parent needs write permission on the folder itself.
                let why = code == EACCES || code == EPERM
                    ? "; a job folder must be writable by the watcher's user (make the inbox's folders group-writable: docs/operators.md, Watch)"
                    : ""
                if code != ENOENT { log.error("cannot claim \(job.name): \(SafeFile.errorText(code))\(why)") }
                return nil
            }
        }
        log("claimed \(job.name)")
        // What the rename moved is what counts now, not what the scan saw: a producer may have
        // put a link in the job's place meanwhile.
        return Claim(
            id: id, token: token, name: job.name, kind: job.kind, lock: lock,
            folder: folders.processingPath + "/" + id, folderFD: SafeFile.openFolder(id, in: folders.processing))
    }

    /// Claims whose worker is gone (their lock can be taken), each with how many times it was
    /// recovered before; leftovers are tidied on the way (empty claims, stray lock files).
    /// `cleared`: the tokens of dead claims that held nothing (their temporaries go too).
    func deadClaims() -> (found: [(claim: Claim, recoveries: Int)], cleared: [String]) {
        let names = SafeFile.names(in: folders.processing) ?? []
        var found: [(Claim, Int)] = []
        var cleared: [String] = []
        for name in names.sorted() where !name.hasPrefix(".") {
            guard let at = name.lastIndex(of: "@") else { continue }
            guard let lock = ClaimLock("." + name + ".lock", in: folders.processing) else { continue }  // alive
            let entryKind = SafeFile.kind(of: name, in: folders.processing)
            if entryKind == .missing {
                lock.release()  // finished just now by its owner
                continue
            }
            guard entryKind == .directory, let claimFolder = SafeFile.openFolder(name, in: folders.processing) else {
                // A link (or file) that was claimed in a job folder's place: it fails.
                let token = String(name[name.index(after: at)...])
                let claim = Claim(
                    id: name, token: token, name: String(name[..<at]), kind: .folder, lock: lock,
                    folder: folders.processingPath + "/" + name, folderFD: nil)
                found.append((claim, lock.recoveries))
                continue
            }
            let token = String(name[name.index(after: at)...])
            let jobName = String(name[..<at])
            let entries = SafeFile.names(in: claimFolder) ?? []
            if entries.isEmpty {
                // Died between making a loose file's claim folder and moving the file in: nothing
                // was taken. (Only an empty folder is ever removed here.)
                POSIX.unlinkat(folders.processing.raw, FileName(name), AT_REMOVEDIR)
                cleared.append(token)
                lock.release()
                continue
            }
            // The kind the claiming worker recorded; a lock from before it could write (or from an
            // older vmerge) is read as a folder job unless it holds just the loose file.
            let jobKind =
                lock.record.kind ?? (entries == [jobName] && SafeFile.kind(of: jobName, in: claimFolder) == .regular
                    ? .file : .folder)
            let claim = Claim(
                id: name, token: token, name: jobName, kind: jobKind, lock: lock,
                folder: folders.processingPath + "/" + name, folderFD: claimFolder)
            found.append((claim, lock.recoveries))
        }
        // Lock files whose claim is gone (a worker died between moving it out and unlinking).
        for name in names where name.hasPrefix(".") && name.hasSuffix(".lock") {
            let claim = String(name.dropFirst().dropLast(5))
            if SafeFile.kind(of: claim, in: folders.processing) == .missing,
                let lock = ClaimLock(name, in: folders.processing)
            {
                lock.release()
            }
        }
        return (found, cleared)
    }

    /// Moves the claim to .done; with `deleteSources`, deletes from it only what the job consumed
    /// (`consumed`: paths inside the claim folder) and its marker and job.json, so a file a producer
    /// added after the claim is never deleted unmerged: whatever is left stays in .done. Returns a
    /// note when something could not be moved or was kept.
    /// `deleted`: the consumed files (by their paths in the claim) that were deleted.
    func finish(_ claim: Claim, deleteSources: Bool, consumed: [SourceLedger.Entry]) -> (
        moved: Bool, note: String?, deleted: [String]
    ) {
        guard deleteSources else {
            guard POSIX.renameNoReplace(folders.processing.raw, FileName(claim.id), folders.done.raw, FileName(claim.id)) == 0 else {
                return (false, "cannot move the sources to .done: \(SafeFile.errorText())", [])
            }
            claim.lock.release()
            return (true, nil, [])
        }
        // Out of .processing first (one rename), so a crash mid-delete can never make the job look
        // unfinished; what such a crash leaves is kept in .done at the next start.
        let doomed = ".deleting-" + claim.id
        guard POSIX.renameat(folders.processing.raw, FileName(claim.id), folders.done.raw, FileName(doomed)) == 0 else {
            return (false, "cannot remove the sources: \(SafeFile.errorText())", [])
        }
        claim.lock.release()
        guard let folder = SafeFile.openFolder(doomed, in: folders.done) else {
            return (true, "cannot open .done/\(doomed) to remove the sources: \(SafeFile.errorText())", [])
        }
        let prefix = claim.folder + "/"
        // Each only while its name holds the very file that was probed and merged.
        var deleted: [String] = []
        for entry in consumed where entry.path.hasPrefix(prefix) {
            if SafeFile.removeBeneath(String(entry.path.dropFirst(prefix.count)), in: folder, matching: entry.id) {
                deleted.append(entry.path)
            }
        }
        for name in [marker, "job.json"] { SafeFile.removeBeneath(name, in: folder) }
        if POSIX.unlinkat(folders.done.raw, FileName(doomed), AT_REMOVEDIR) == 0 { return (true, nil, deleted) }
        let left = SafeFile.names(in: folder)?.count ?? 0
        let what = "kept \(left) file(s) that the output does not hold wholly, or that were added after the claim,"
        guard POSIX.renameNoReplace(folders.done.raw, FileName(doomed), folders.done.raw, FileName(claim.id)) == 0 else {
            return (true, "\(what) in .done/\(doomed)", deleted)
        }
        return (true, "\(what) in .done/\(claim.id)", deleted)
    }

    /// Moves the claim to .failed; returns where it went, or why it could not.
    func moveToFailed(_ claim: Claim) -> Result<String, VMergeError> {
        guard POSIX.renameNoReplace(folders.processing.raw, FileName(claim.id), folders.failed.raw, FileName(claim.id)) == 0 else {
            return .failure(.io(file: claim.folder, message: "cannot move to .failed: \(SafeFile.errorText())"))
        }
        return .success(".failed/" + claim.id)
    }

    /// Puts a claim back in the inbox under its own name, unless the name was taken meanwhile.
    func putBack(_ claim: Claim) -> Bool {
        switch claim.kind {
        case .folder:
            guard POSIX.renameNoReplace(folders.processing.raw, FileName(claim.id), folders.inbox.raw, FileName(claim.name)) == 0 else {
                return false
            }
        case .file:
            guard let claimFolder = SafeFile.openFolder(claim.id, in: folders.processing),
                POSIX.renameNoReplace(claimFolder.raw, FileName(claim.name), folders.inbox.raw, FileName(claim.name)) == 0
            else { return false }
            SafeFile.removeTree(claim.id, in: folders.processing)
        }
        claim.lock.release()
        return true
    }

    /// Moves an inbox entry whose name cannot be claimed (too long for the derived names, or with
    /// a control character) to .failed under a shortened, printable name; returns that name.
    func setAside(_ name: String) -> String? {
        let printable = VisibleText.of(name).replacingOccurrences(of: "/", with: "_")
        let short = String(printable.unicodeScalars.prefix(100))
        let id = (short.hasPrefix(".") ? "_" + short : short) + "...@" + newToken()
        return POSIX.renameNoReplace(folders.inbox.raw, FileName(name), folders.failed.raw, FileName(id)) == 0 ? id : nil
    }

    /// Sources a worker was deleting when it died (--delete-sources): the job is done, but what is
    /// left may hold files it never merged, so it is kept in .done under the claim's name.
    func clearAbandonedDeletions() {
        for name in SafeFile.names(in: folders.done) ?? [] where name.hasPrefix(".deleting-") {
            let kept = String(name.dropFirst(".deleting-".count))
            if POSIX.renameNoReplace(folders.done.raw, FileName(name), folders.done.raw, FileName(kept)) == 0 {
                log("kept what a stopped worker had not yet deleted of \(kept) in .done")
            }
        }
    }
}
