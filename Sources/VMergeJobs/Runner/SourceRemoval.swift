import CVMergePOSIX
import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// --delete-sources' account of one job: every input file once (by device and inode, not by
/// name), with whether the published output holds all of it, and if not, why it is kept.
///
/// A file is consumed only when it is a recording (never a still image or a single picture),
/// every use of it was merged whole (not dropped, not trimmed, not cut by --max-duration or where
/// --max-size ended the file), and the output carries every stream of it that is footage (no
/// other sound, video, subtitle or data track but a timecode, no sound running on past the
/// picture). Batch adds one rule across jobs: a file another job of the run names goes only once
/// every such job has consumed it (see `Batch`).
package struct SourceLedger: Sendable {
    package struct Entry: Sendable {
        /// The name it was first used under (the one that is deleted).
        package var path: String
        /// The file that name held when it was probed, and the folder it was in.
        package var id: FileID?
        package var folder: FileID?
        /// An object: the version the job read (what it holds, and the only one that may go).
        package var object: ObjectVersion?
        /// nil: the output holds all of it.
        package var keptBecause: String?

        package init(path: String, id: FileID?, keptBecause: String? = nil) {
            self.path = path
            self.id = id
            self.keptBecause = keptBecause
        }

        /// The file, whatever its name: device and inode.
        package var key: String { SourceLedger.key(path: path, id: id) }
    }

    package var entries: [Entry] = []

    package init(entries: [Entry] = []) { self.entries = entries }

    package var consumed: [Entry] { entries.filter { $0.keptBecause == nil } }
    package var kept: [Entry] { entries.filter { $0.keptBecause != nil } }

    package static func key(path: String, id: FileID?) -> String {
        id.map { "\($0.device):\($0.inode)" } ?? "path:\(path)"
    }

    /// Keeps every entry of the file `key`, unless it is kept already.
    package mutating func keep(_ key: String, because reason: String) {
        for index in entries.indices where entries[index].key == key && entries[index].keptBecause == nil {
            entries[index].keptBecause = reason
        }
    }

    /// Records the version of each object the job read through `sources`: the one it holds, and
    /// the only one that may be deleted.
    package mutating func recordVersions(_ sources: RemoteInputs?) {
        guard let sources else { return }
        for index in entries.indices where RemoteName.looksRemote(entries[index].path) {
            entries[index].object = sources.version(named: entries[index].path)
        }
    }

    /// Keeps every entry named `path` that is not kept already.
    package mutating func keep(path: String, because reason: String) {
        for index in entries.indices where entries[index].path == path && entries[index].keptBecause == nil {
            entries[index].keptBecause = reason
        }
    }

    /// Keeps everything: the output could not be trusted.
    package mutating func keepAll(because reason: String) {
        for index in entries.indices where entries[index].keptBecause == nil { entries[index].keptBecause = reason }
    }
}

/// --delete-sources for a merge, a batch job or a watch job, the recorder's "delete the segments
/// once the export succeeded": after the output is published, and only once it is read back whole
/// (a regular file, index first, a video and a sound stream, as long as written), the files the
/// ledger says it consumed are deleted, each through its held folder and only while its name
/// still holds the very file that was probed (not a link, not a file put there since).
package enum SourceRemoval {
    /// What a finished merge consumed: each file once, at its first use.
    package static func ledger(_ plan: MergePlan, outputMicros: Int64) -> SourceLedger {
        var ledger = SourceLedger()
        var byFile: [String: Int] = [:]
        var unread: [(path: String, reason: String)] = []
        for input in plan.inputs {
            guard case let .clip(clip) = input.probe else {
                // Never read (left out past --max-duration) or not readable as a video: the file
                // stays whatever it is, and so does every other use of it.
                var why = "a use of it could not be read"
                if case .notProbed = input.probe { why = "a use of it was not reached" }
                unread.append((input.probe.path, "kept: \(why)"))
                continue
            }
            let key = SourceLedger.key(path: clip.path, id: clip.fileID)
            let index = byFile[key] ?? ledger.entries.count
            if index == ledger.entries.count {
                byFile[key] = index
                var reason = clip.notARecording.map { "kept: \($0)" }
                if RemoteName.looksRemote(clip.path) && !clip.path.hasPrefix("s3://") {
                    reason = "kept: vmerge deletes objects in a bucket, not https resources"
                }
                if reason == nil, let first = clip.leftOut.first {
                    reason = "kept: the output does not hold \(first)"
                }
                var entry = SourceLedger.Entry(path: clip.path, id: clip.fileID, keptBecause: reason)
                entry.folder = clip.folderID
                ledger.entries.append(entry)
            }
            guard ledger.entries[index].keptBecause == nil else { continue }
            switch input.disposition {
            case let .kept(planIndex):
                let planned = plan.clips[planIndex]
                if planned.isTrimmed {
                    ledger.entries[index].keptBecause = "kept: only a part of it was merged (--trim)"
                } else if planned.isCut || planned.endMicros > outputMicros {
                    ledger.entries[index].keptBecause = "kept: the output holds only part of it"
                } else if let corrupt = planned.decodeCount?.corrupt, corrupt > 0 {
                    ledger.entries[index].keptBecause =
                        "kept: \(corrupt) corrupt packet\(corrupt == 1 ? " was" : "s were") concealed in the output"
                }
            case let .dropped(reason):
                ledger.entries[index].keptBecause = "kept: a use of it is in no output (\(reason.message))"
            case .notProbed:
                ledger.entries[index].keptBecause = "kept: a use of it was not reached"
            }
        }
        for (path, reason) in unread {
            // An object never read is not in the ledger: nothing deletes it.
            if RemoteName.looksRemote(path) { continue }
            var info = stat()
            guard POSIX.stat(FileName(path), &info) == 0 else { continue }
            ledger.keep(SourceLedger.key(path: path, id: FileID(info)), because: reason)
        }
        return ledger
    }

    /// Keeps every file the ledger would consume of which some byte is in no output: bytes, not
    /// kinds of data, are what is accounted for (see `ByteAccount`), so a kind of data no one
    /// thought of (an attachment, a maker's trailer, sound its edit list hides) keeps the file.
    package static func account(_ ledger: inout SourceLedger, _ plan: MergePlan, sources: (any InputSources)? = nil) {
        var accounted: Set<String> = []
        let consumed = Set(ledger.consumed.map(\.key))
        for input in plan.inputs {
            guard case let .clip(clip) = input.probe else { continue }
            let key = SourceLedger.key(path: clip.path, id: clip.fileID)
            guard consumed.contains(key), accounted.insert(key).inserted else { continue }
            if let reason = ByteAccount.unaccounted(clip, sources: sources) { ledger.keep(key, because: reason) }
        }
    }

    /// For an output an earlier run wrote (a re-run, a watch job recovered after a crash): keeps
    /// every file its tag does not vouch for, being that very file, read without concealed damage
    /// (see `JobTag`); what a fresh run learns by decoding, this run learns from the output.
    package static func vouch(
        _ ledger: inout SourceLedger, _ plan: MergePlan, by tag: JobTag?, sources: (any InputSources)? = nil
    ) {
        // By the files themselves, not by position: a folder input expands to fewer files once
        // some are deleted.
        let recorded = Set(tag?.files ?? [])
        for input in plan.inputs {
            guard case let .clip(clip) = input.probe else { continue }
            let key = SourceLedger.key(path: clip.path, id: clip.fileID)
            let file = JobTag.file(of: clip.path, id: clip.fileID, sources: sources)
            if tag?.files == nil {
                ledger.keep(key, because: "kept: its output does not record which files it was made from")
            } else if recorded.contains(file + "!") {
                ledger.keep(key, because: "kept: corrupt packets of it were concealed in the output")
            } else if recorded.contains(file + "~") {
                ledger.keep(key, because: "kept: a use of it is not whole in the output")
            } else if !recorded.contains(file) {
                ledger.keep(key, because: "kept: the output was made from another version of it")
            }
        }
    }

    /// The published output read back: its duration, or why it cannot be trusted (not a regular
    /// file, index not first, no sound, or not as long as `expectedMicros` within a frame).
    package static func readBack(_ path: String, expectedMicros: Int64?, frameMicros: Int64) -> Result<Int64, Problem> {
        guard FileKind.at(FileName(path)) == .regular else { return .failure(Problem("it is not a regular file")) }
        do {
            let file = try SafeFile.openForReading(path, followLinks: false)
            guard MP4Layout.isFaststart(file) else { return .failure(Problem("its index is not at the front")) }
            let (clip, _) = try Probe.clip(at: path)
            guard clip.audio != nil else { return .failure(Problem("it has no sound stream")) }
            if let expectedMicros, abs(clip.durationMicros - expectedMicros) > frameMicros {
                return .failure(
                    Problem(
                        "it lasts \(formatSeconds(clip.durationSeconds)) s, not the "
                            + "\(formatSeconds(Double(expectedMicros) / 1e6)) s written"))
            }
            return .success(clip.durationMicros)
        } catch {
            return .failure(Problem(VMergeError.reason(of: error)))
        }
    }

    package struct Problem: Error, Sendable {
        package var text: String
        init(_ text: String) { self.text = text }
    }

    /// Why the published output cannot be trusted yet, or nil when it reads back whole.
    package static func problem(withOutput path: String, expectedMicros: Int64, frameMicros: Int64) -> String? {
        if case let .failure(problem) = readBack(path, expectedMicros: expectedMicros, frameMicros: frameMicros) {
            return problem.text
        }
        return nil
    }

    /// Deletes each consumed file whose name still holds it, and each consumed object that is still
    /// the version merged (see `RemoteConnector.deleteObject`, through `objects`); returns what was
    /// deleted, and what was not with why.
    package static func remove(_ entries: [SourceLedger.Entry], objects: RemoteConnector? = nil) -> (
        deleted: [String], notDeleted: [(path: String, reason: String)]
    ) {
        var deleted: [String] = [], notDeleted: [(String, String)] = []
        for entry in entries where !deleted.contains(entry.path) {
            if RemoteName.looksRemote(entry.path) {
                let reason: String? =
                    if let objects { objects.deleteObject(named: entry.path, version: entry.object) } else {
                        "not deleted: no object of this job"
                    }
                if let reason { notDeleted.append((entry.path, reason)) } else { deleted.append(entry.path) }
                continue
            }
            let (folderPath, name) = SafeFile.split(entry.path)
            let folder = FileDescriptor(
                POSIX.openat(AT_FDCWD, FileName(folderPath), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0))
            guard folder.raw >= 0 else {
                notDeleted.append((entry.path, "not deleted: cannot open its folder: \(SafeFile.errorText())"))
                continue
            }
            if let expected = entry.folder, let held = folder.info,
                UInt64(truncatingIfNeeded: held.st_dev) != expected.device
                    || UInt64(truncatingIfNeeded: held.st_ino) != expected.inode
            {
                notDeleted.append(
                    (entry.path, "not deleted: its folder is not the one it was merged from (moved since?)"))
                continue
            }
            switch remove(name, in: folder, id: entry.id) {
            case nil: deleted.append(entry.path)
            case let reason?: notDeleted.append((entry.path, reason))
            }
        }
        return (deleted, notDeleted)
    }

    /// Deletes `name` in `folder` if it is a regular file and still the file `id` (the last
    /// identity check, through the same folder the deletion goes through); nil when deleted,
    /// else why not.
    package static func remove(_ name: String, in folder: FileDescriptor, id: FileID?) -> String? {
        var info = stat()
        guard POSIX.fstatat(folder.raw, FileName(name), &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            return "not deleted: already gone (\(SafeFile.errorText()))"
        }
        guard FileKind(mode: info.st_mode) == .regular else {
            return "not deleted: it is not a regular file (a link is never followed)"
        }
        guard let id, FileID(info) == id else {
            return "not deleted: it is not the file that was merged (replaced or changed since)"
        }
        guard POSIX.unlinkat(folder.raw, FileName(name), 0) == 0 else { return "not deleted: \(SafeFile.errorText())" }
        return nil
    }
}
