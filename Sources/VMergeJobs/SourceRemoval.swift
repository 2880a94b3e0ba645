import Foundation
import VMergeAV
import VMergeCore

/// --delete-sources for a merge or a batch job, the recorder's "delete the segments once the
/// export succeeded": after the output is published, and only once it is read back whole (a
/// regular file, index first, a video and a sound stream, as long as written), the inputs the job
/// consumed are deleted: those merged or dropped as too short, never an unreadable one, and each
/// only while its name still holds the very file that was probed (not a link, not a file put
/// there since). A clip the output holds only part of (cut by --max-duration, or past where
/// --max-size ended the file) is kept; a trimmed one is deleted once its trimmed part is all in
/// the output (the rest was cut away as asked).
public enum SourceRemoval {
    /// What a finished merge consumed, with the file each name held when it was probed.
    public static func consumed(_ plan: MergePlan, outputMicros: Int64) -> [(path: String, id: FileID?)] {
        plan.inputs.compactMap { input in
            guard case let .clip(clip) = input.probe else { return nil }
            switch input.disposition {
            case let .kept(index):
                let planned = plan.clips[index]
                return !planned.isCut && planned.endMicros <= outputMicros ? (clip.path, clip.fileID) : nil
            // Too short as recorded: a stray tap. A trim too short is kept: its part was asked for.
            case .dropped(.tooShort(_, _, trimmed: false)): return (clip.path, clip.fileID)
            default: return nil
            }
        }
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
