import Foundation

/// The folder a job publishes in, opened once when the job starts and never looked up by its
/// name again: every file of the job's publish set (the video, its poster, a report beside them)
/// is created and published relative to this one descriptor. Swapping the folder for a link (or
/// renaming it) while the job runs cannot split the set between two places: all of it lands in
/// the folder the job started with.
package final class OutputFolder: @unchecked Sendable {
    /// The folder as the job named it: for messages and for telling which files lie in it,
    /// never opened again.
    package let path: String
    package let descriptor: FileDescriptor

    /// Opens the folder `file` lies in. A folder named through a link when the job starts
    /// (~/Videos kept on another disk) is the user's choice: the folder the link leads to then,
    /// resolved once, in the one lookup that opens it, and held from there on.
    package init(of file: String) throws {
        let folder = SafeFile.split(file).folder
        let fd = POSIX.openat(AT_FDCWD, FileName(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else {
            throw VMergeError.io(file: file, message: "cannot open its folder: \(SafeFile.errorText())")
        }
        path = folder
        descriptor = FileDescriptor(fd)
    }

    /// Opens `folder` to stand for the folder `name` (an output bound for a bucket, `s3://b/trip`,
    /// is staged here: its files are made and published in this folder under their own names).
    package init(named name: String, opening folder: String) throws {
        let fd = POSIX.openat(AT_FDCWD, FileName(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, 0)
        guard fd >= 0 else {
            throw VMergeError.io(file: name, message: "cannot open its staging folder: \(SafeFile.errorText())")
        }
        path = name
        descriptor = FileDescriptor(fd)
    }

    /// Whether `file` is named in this folder (the poster beside the output, a report beside it).
    package func holds(_ file: String) -> Bool { SafeFile.split(file).folder == path }

    /// What `name` in this folder is, the name not followed.
    package func kind(of name: String) -> FileKind { SafeFile.kind(of: name, in: descriptor) }

    /// A temporary file for `target` (a file of this folder) in this folder.
    package func temporaryFile(for target: String, tag: String? = nil) throws -> TemporaryFile {
        try TemporaryFile(in: descriptor, target: target, tag: tag)
    }
}
