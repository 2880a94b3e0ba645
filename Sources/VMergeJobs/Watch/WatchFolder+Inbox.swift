import CVMergeSupport
import Foundation
import VMergeAV
import VMergeCore

/// The inbox: which entries are jobs, whether they have settled, room for one more, and the
/// claims of workers that died.
extension WatchFolder {
    // MARK: scan and settle

    /// Whether an entry known only by its bytes would be a job: a video file, or a folder with
    /// the marker or a job.json.
    func isJob(_ raw: [UInt8]) -> Bool {
        if raw.first == UInt8(ascii: ".") { return false }
        let kind = { (path: [UInt8]) -> FileKind in
            var info = stat()
            let found = (path + [0]).withUnsafeBufferPointer { bytes in
                bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    fstatat(self.folders.inbox.raw, $0, &info, AT_SYMLINK_NOFOLLOW) == 0
                }
            }
            return found ? FileKind(mode: info.st_mode) : .missing
        }
        switch kind(raw) {
        case .regular:
            let tail = String(decoding: raw.suffix(5), as: UTF8.self).lowercased()
            return InputList.videoExtensions.contains { tail.hasSuffix("." + $0) }
        case .directory:
            return [settings.marker, "job.json"].contains { kind(raw + Array(("/" + $0).utf8)) != .missing }
        default: return false
        }
    }

    func entry(_ name: String) -> InboxEntry? {
        var info = stat()
        guard fstatat(folders.inbox.raw, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        var entry = InboxEntry(
            name: name, kind: FileKind(mode: info.st_mode), size: Int64(info.st_size), mtime: modificationNanos(info))
        if entry.kind == .directory {
            entry.isReadyFolder =
                SafeFile.kind(of: name + "/" + settings.marker, in: folders.inbox) != .missing
                || SafeFile.kind(of: name + "/job.json", in: folders.inbox) != .missing
        }
        return entry
    }

    /// The inbox's entries, from one reading of it; names no String can address again are set
    /// aside on the way (said once).
    func inboxEntries(watcher: Int32) -> [InboxEntry] {
        guard let (names, undecodable) = SafeFile.listing(of: folders.inbox) else {
            log.problem("cannot list the inbox \(settings.inbox): \(SafeFile.errorText())")
            if settings.once { jobsNotDone += 1 }
            return []
        }
        for raw in undecodable where isJob(raw) {
            setAside(raw, why: "its name is not valid UTF-8; rename it and put it back")
        }
        var entries: [InboxEntry] = []
        for name in names where !InboxScanner.isIgnored(name) {
            guard let entry = entry(name) else { continue }
            if entry.kind == .directory && watcher >= 0 && watches[name] == nil {
                watches[name] = vm_watch_add(watcher, folders.inboxPath + "/" + name)
            }
            if ![.directory, .regular].contains(entry.kind) && InboxScanner.isVideo(name) && !mentioned.contains(name) {
                mentioned.insert(name)
                log.problem("ignored \(name): it is \(entry.kind.phrase), not a file")
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

    /// A name that cannot be claimed (too long for the claim's derived names, or not UTF-8): moved
    /// aside to .failed once, with a note, so it never loops.
    func setAside(_ raw: [UInt8], why: String) {
        let name = SafeFile.printable(raw)
        jobsFailed += 1
        status.state.failed = jobsFailed
        guard let id = claims.setAside(raw) else {
            log.problem("failed \(name): \(why); cannot move it to .failed: \(SafeFile.errorText())")
            return
        }
        writeNote(id: id, job: name, error: .invalidInput(file: name, reason: why), report: nil, attempts: 0)
        log.problem("failed \(name): \(why); moved to .failed/\(id)")
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
                    report: nil, attempts: crashes)
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
        let names = (try? FileManager.default.contentsOfDirectory(atPath: settings.outbox)) ?? []
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") && name.contains(".vmerge-\(token)-") {
            let path = settings.outbox + "/" + name
            if FileKind.at(path) == .regular { unlink(path) }
        }
    }
}
