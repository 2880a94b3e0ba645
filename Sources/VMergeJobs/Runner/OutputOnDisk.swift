import Foundation
import VMergeAV
import VMergeCore

/// What is under a job's output name, read without following a link: whether it is this user's
/// finished output of the job (done), another user's file, or, after a run that published
/// nothing, the earlier file the report names as kept.
package enum OutputOnDisk {
    /// Whether `path` is a regular file (not a link) owned by the effective user running vmerge
    /// (as root: root's). A job tag is text anyone who may write the folder can copy or compute,
    /// so only such a file can be an output this user's vmerge wrote: no other is done, vouches
    /// for sources, or has a poster made from it.
    package static func isOurs(_ path: String) -> Bool { SafeFile.isOurs(path) }

    /// The owner of the regular file at `path` when it is another user's; nil otherwise.
    static func foreignOwner(of path: String) -> UInt32? {
        guard let info = status(path), info.st_uid != geteuid() else { return nil }
        return UInt32(info.st_uid)
    }

    /// Whether `output` is a finished output of the job with this key, written by this user.
    static func holds(_ output: String, key: String) -> Bool {
        isOurs(output) && MP4Layout.isWhole(output) && Probe.recordedJobKey(at: output) == key
    }

    /// What a run that published nothing left at its output's name: a regular file there, with
    /// the key it records and the poster beside it (`KeptOutput`, the report's `kept_output`).
    static func kept(by job: Job) -> KeptOutput? {
        guard let info = status(job.output.escaped) else { return nil }
        let poster = job.options.posterPath(forOutput: job.output.escaped).flatMap {
            FileKind.at(FileName($0)) == .regular ? $0 : nil
        }
        return KeptOutput(
            path: job.output.escaped, bytes: Int64(info.st_size), jobKey: Probe.recordedJobKey(at: job.output.escaped),
            poster: poster)
    }

    /// lstat of a regular file at `path`; nil for anything else or nothing.
    private static func status(_ path: String) -> stat? {
        var info = stat()
        guard POSIX.lstat(FileName(path), &info) == 0, FileKind(mode: info.st_mode) == .regular else { return nil }
        return info
    }
}
