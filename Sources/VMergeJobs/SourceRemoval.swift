import Foundation
import VMergeAV
import VMergeCore

/// --delete-sources for a merge or a batch job, the recorder's "delete the segments once the
/// export succeeded": after the output is published, and only once it is read back whole (a
/// regular file, index first, a video and a sound stream, as long as written), the files whose
/// footage the output holds all of are deleted, each only while its name still holds the very
/// file that was probed (not a link, not a file put there since).
///
/// Decided per file (by device and inode), over every use of it in the job: a file is consumed
/// only when it is a recording (never a still image or a single picture), every use of it was
/// merged whole (not dropped, not trimmed, not cut by --max-duration or where --max-size ended
/// the file), and the output carries every stream of it that is footage (no other sound, video
/// or subtitle track, no sound running on past the picture). Whatever fails is kept, with why.
public enum SourceRemoval {
    /// What a finished merge consumed, with the file each name held when it was probed, and the
    /// files it kept with why (each file once, at its first use).
    public static func ledger(_ plan: MergePlan, outputMicros: Int64) -> (
        consumed: [(path: String, id: FileID?)], kept: [(path: String, reason: String)]
    ) {
        struct Entry {
            var path: String
            var id: FileID?
            var keptBecause: String?
        }
        var entries: [Entry] = []
        var byFile: [String: Int] = [:]
        for input in plan.inputs {
            guard case let .clip(clip) = input.probe else { continue }
            let key = clip.fileID.map { "\($0.device):\($0.inode)" } ?? "path:\(clip.path)"
            let index = byFile[key] ?? entries.count
            if index == entries.count {
                byFile[key] = index
                var reason = clip.notARecording.map { "kept: \($0)" }
                if reason == nil, let first = clip.leftOut.first {
                    reason = "kept: the output does not hold \(first)"
                }
                entries.append(Entry(path: clip.path, id: clip.fileID, keptBecause: reason))
            }
            guard entries[index].keptBecause == nil else { continue }
            switch input.disposition {
            case let .kept(planIndex):
                let planned = plan.clips[planIndex]
                if planned.isTrimmed {
                    entries[index].keptBecause = "kept: only a part of it was merged (--trim)"
                } else if planned.isCut || planned.endMicros > outputMicros {
                    entries[index].keptBecause = "kept: the output holds only part of it"
                }
            case let .dropped(reason):
                entries[index].keptBecause = "kept: a use of it is in no output (\(reason.message))"
            case .notProbed:
                entries[index].keptBecause = "kept: a use of it was not reached"
            }
        }
        return (
            entries.filter { $0.keptBecause == nil }.map { ($0.path, $0.id) },
            entries.compactMap { entry in entry.keptBecause.map { (entry.path, $0) } }
        )
    }

    /// What a finished merge consumed (see `ledger`).
    public static func consumed(_ plan: MergePlan, outputMicros: Int64) -> [(path: String, id: FileID?)] {
        ledger(plan, outputMicros: outputMicros).consumed
    }

    /// Why the published output cannot be trusted yet, or nil when it reads back whole.
    public static func problem(withOutput path: String, expectedMicros: Int64, frameMicros: Int64) -> String? {
        guard FileKind.at(path) == .regular else { return "it is not a regular file" }
        do {
            let file = try SafeFile.openForReading(path, followLinks: false)
            guard MP4Layout.isFaststart(file) else { return "its index is not at the front" }
            let (clip, _) = try Probe.clip(at: path)
            guard clip.audio != nil else { return "it has no sound stream" }
            guard abs(clip.durationMicros - expectedMicros) <= frameMicros else {
                return "it lasts \(formatSeconds(clip.durationSeconds)) s, not the "
                    + "\(formatSeconds(Double(expectedMicros) / 1e6)) s written"
            }
            return nil
        } catch {
            return (error as? VMergeError)?.reason ?? "\(error)"
        }
    }

    /// Deletes each file whose name still holds it; returns what was deleted, and what was kept
    /// with why.
    public static func remove(_ files: [(path: String, id: FileID?)]) -> (
        deleted: [String], kept: [(path: String, reason: String)]
    ) {
        var deleted: [String] = [], kept: [(String, String)] = []
        for (path, id) in files where !deleted.contains(path) {
            var info = stat()
            guard lstat(path, &info) == 0 else {
                kept.append((path, "already gone: \(SafeFile.errorText())"))
                continue
            }
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                kept.append((path, "not deleted: it is not a regular file (a link is never followed)"))
                continue
            }
            guard let id, FileID(info) == id else {
                kept.append((path, "not deleted: it is not the file that was merged (replaced since?)"))
                continue
            }
            if unlink(path) == 0 {
                deleted.append(path)
            } else {
                kept.append((path, "cannot delete it: \(SafeFile.errorText())"))
            }
        }
        return (deleted, kept)
    }
}
