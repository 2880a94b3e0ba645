import CVMergePOSIX
import Foundation

/// An open file descriptor, closed when its owner goes.
package final class FileDescriptor: @unchecked Sendable {
    package let raw: Int32

    package init(_ raw: Int32) { self.raw = raw }

    deinit { close(raw) }

    package var info: stat? {
        var info = stat()
        return fstat(raw, &info) == 0 ? info : nil
    }
}

/// What a name is, the last component not followed.
package enum FileKind: Sendable, Equatable {
    case missing, regular, directory, symlink, fifo, socket, device, other

    package init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symlink
        case S_IFIFO: self = .fifo
        case S_IFSOCK: self = .socket
        case S_IFCHR, S_IFBLK: self = .device
        default: self = .other
        }
    }

    /// lstat(2): a link is reported as a link.
    package static func at(_ path: FileName) -> FileKind {
        var info = stat()
        return POSIX.lstat(path, &info) == 0 ? FileKind(mode: info.st_mode) : .missing
    }

    /// What `path` is once its links are followed; a link that leads nowhere is `.symlink`.
    package static func following(_ path: FileName) -> FileKind {
        var info = stat()
        return POSIX.stat(path, &info) == 0 ? FileKind(mode: info.st_mode) : at(path)
    }

    package var phrase: String {
        switch self {
        case .missing: return "missing"
        case .regular: return "a file"
        case .directory: return "a folder"
        case .symlink: return "a symbolic link"
        case .fifo: return "a FIFO (named pipe)"
        case .socket: return "a socket"
        case .device: return "a device"
        case .other: return "not a regular file"
        }
    }
}

/// Which existing file a published file may take the place of. Whatever the policy, only a
/// regular file is ever replaced.
package enum ReplacePolicy: Sendable, Equatable {
    /// Never: an existing name is an error (the default for videos).
    case never
    /// Any regular file (-y).
    case always
    /// A regular file that starts with one of these texts: vmerge's own report or status file from
    /// an earlier run, which it may rewrite; anything else is somebody's data.
    case ifStartsWith([String])
    /// A poster that carries this job key (see `PosterKey`): the same job's poster, left by a run
    /// that stopped before its video was published; anything else is an existing output.
    case ifPosterOfJob(String)
    /// A video that carries this job key (see `VideoKey`): a --rendition of the same job, left by
    /// a run that stopped before the job's own video was published; anything else is an
    /// existing output.
    case ifVideoOfJob(String)
}
