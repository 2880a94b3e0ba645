import CVMergeSupport
import Foundation
import VMergeAV
import VMergeCore

/// The inbox: which entries are jobs, whether they have settled, room for one more, and the
/// claims of workers that died.
extension WatchFolder {
    // MARK: scan and settle

    func entry(_ name: String) -> InboxEntry? {
        var info = stat()
        guard POSIX.fstatat(claims.folders.inbox.raw, FileName(name), &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        var entry = InboxEntry(
            name: name, kind: FileKind(mode: info.st_mode), size: Int64(info.st_size), mtime: modificationNanos(info))
        if entry.kind == .directory {
            entry.isReadyFolder =
                SafeFile.kind(of: name + "/" + settings.marker, in: claims.folders.inbox) != .missing
                || SafeFile.kind(of: name + "/job.json", in: claims.folders.inbox) != .missing
        }
        return entry
    }

    /// The inbox's entries, from one reading of it.
    func inboxEntries(watcher: Int32) -> [InboxEntry] {
        guard let names = SafeFile.names(in: claims.folders.inbox) else {
            log.error("cannot list the inbox \(settings.inbox): \(SafeFile.errorText())")
            if settings.once { jobsNotDone += 1 }
            return []
        }
        var entries: [InboxEntry] = []
        for name in names where !InboxScanner.isIgnored(name) {
            guard let entry = entry(name) else { continue }
            if entry.kind == .directory && watcher >= 0 && watches[name] == nil {
                watches[name] = POSIX.named(FileName(claims.folders.inboxPath + "/" + name), failure: -1) { vm_watch_add(watcher, $0) }
            }
            if ![.directory, .regular].contains(entry.kind) && InboxScanner.isVideo(name) && !mentioned.contains(name) {
                mentioned.insert(name)
                log.error("ignored \(name): it is \(entry.kind.phrase), not a file")
            }
            entries.append(entry)
        }
        mentioned = mentioned.intersection(names)
        // Folders that left the inbox (claimed here or elsewhere) are watched no more.
        let present = Set(entries.filter { $0.kind == .directory }.map(\.name))
        for (name, watch) in watches where !present.contains(name) {
            vm_watch_remove(watcher, watch)
            watches[name] = nil
        }
        return entries
    }

    func hasRoomForAJob() -> Bool {
        let needed = settings.settings.minFree ?? FreeSpace.margin
        guard let available = FreeSpace.available(inFolderOf: settings.outbox + "/x"), available < needed else {
            return true
        }
        if status.state.state != "waiting-for-space" {
            log(
                "waiting: \(ByteSize.format(available)) free in \(settings.outbox), "
                    + "--min-free asks for \(ByteSize.format(needed))")
            status.write("waiting-for-space")
        }
        return false
    }

    /// A name that cannot be claimed (too long for the claim's derived names, or with a control
    /// character): moved aside to .failed once, with a note, so it never loops.
    func setAside(_ name: String, why: String) {
        jobsFailed += 1
        metrics.finished(.failed, reason: .input)
        status.state.failed = jobsFailed
        guard let id = claims.setAside(name) else {
            log.error("failed \(name): \(why); cannot move it to .failed: \(SafeFile.errorText())")
            return
        }
        writeNote(id: id, job: name, error: .invalidInput(file: name, reason: why), report: nil, attempts: 0)
        status.state.record(WatchStatus.Finished(name: name, result: .failed, error: "\(name): \(why)"))
        log.error("failed \(name): \(why); moved to .failed/\(id)")
    }

    // MARK: recovery

    /// Claims whose worker is gone are finished here: their temporary files removed, then
    /// processed as if just claimed, unless they keep killing their workers.
    func recoverDeadClaims() {
        let dead = claims.deadClaims()
        dead.cleared.forEach(removeTemporaries)
        for (claim, recoveries) in dead.found where VMergeProcess.pendingSignal == 0 {
            removeTemporaries(of: claim.token)
            let crashes = recoveries + 1
            claim.lock.setRecoveries(crashes)
            if crashes >= WatchSettings.crashLimit {
                fail(
                    claim, error: .io(file: claim.name, message: "its worker stopped \(crashes) times while working on it"),
                    report: nil, attempts: crashes, reason: .crashed)
                continue
            }
            log(
                "recovered \(claim.id) from a worker that stopped (recovery \(crashes) of at most "
                    + "\(WatchSettings.crashLimit - 1))")
            process(claim)
        }
    }

    /// A dead claim's temporaries in OUTBOX (regular files only; a planted link is left alone).
    func removeTemporaries(of token: String) {
        let names = SafeFile.names(ofFolderAt: settings.outbox) ?? []
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") && name.contains(".vmerge-\(token)-") {
            let path = FileName.joined(settings.outbox, name)
            if FileKind.at(FileName(path)) == .regular { POSIX.unlink(FileName(path)) }
        }
    }
}
