import CVMergePOSIX
import Foundation

/// A keyed job's poster carries its job key in a JPEG comment segment right after the start
/// marker, so a later run of the same job can tell a poster it left behind from anybody's file.
package enum PosterKey {
    static let prefix = "vmerge-job "

    /// `jpeg` with `key` in a comment segment after its start marker.
    package static func tag(_ jpeg: [UInt8], key: String) -> [UInt8] {
        guard jpeg.count >= 2, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        let text = Array((prefix + key).utf8.prefix(65000))
        let length = text.count + 2
        return [0xFF, 0xD8, 0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + text + jpeg[2...]
    }

    /// The key a tagged JPEG's first bytes carry, or nil.
    package static func key(inHead head: [UInt8]) -> String? {
        guard head.count > 6, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF, head[3] == 0xFE else { return nil }
        let length = Int(head[4]) << 8 | Int(head[5])
        guard length > 2, head.count >= 4 + length else { return nil }
        let text = String(decoding: head[6..<(4 + length)], as: UTF8.self)
        guard text.hasPrefix(prefix) else { return nil }
        return String(text.dropFirst(prefix.count))
    }

    /// The key the poster at `name` in `folder` carries (never through a link, never blocking).
    package static func key(of name: String, in folder: Int32 = AT_FDCWD) -> String? {
        let fd = POSIX.openat(folder, FileName(name), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        let file = FileDescriptor(fd)
        guard let info = file.info, FileKind(mode: info.st_mode) == .regular else { return nil }
        var head = [UInt8](repeating: 0, count: 1024)
        let count = head.withUnsafeMutableBytes { Foundation.read(file.raw, $0.baseAddress, $0.count) }
        return count > 0 ? key(inHead: Array(head.prefix(count))) : nil
    }
}

/// Where a job may read its inputs: inside `root` (its folder) or one of `allowed`, reached
/// without following a link out of them.
package struct InputConfinement: Sendable, Equatable {
    /// The job folder's path: what input paths are written against, and what messages say.
    package var root: String
    package var allowed: [String]
    /// The job folder itself, held open: every read below it starts here, so renaming folders
    /// above it (or planting a link where it was) cannot redirect the job.
    package var rootFolder: FileDescriptor?

    package init(root: String, allowed: [String] = [], rootFolder: FileDescriptor? = nil) {
        self.root = root
        self.allowed = allowed
        self.rootFolder = rootFolder
    }

    package static func == (a: InputConfinement, b: InputConfinement) -> Bool {
        a.root == b.root && a.allowed == b.allowed && a.rootFolder === b.rootFolder
    }

    /// Opens the folder an input lies in (walked without links), and the input's name in it.
    func folder(of path: String) throws -> (folder: FileDescriptor, name: String?) {
        let (base, rest) = try locate(path).get()
        var folder: FileDescriptor
        if base == root, let rootFolder {
            folder = rootFolder
        } else {
            folder = FileDescriptor(POSIX.openat(AT_FDCWD, FileName(base), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0))
            guard folder.raw >= 0 else { throw VMergeError.invalidInput(file: path, reason: SafeFile.errorText()) }
        }
        for name in rest.dropLast() {
            let fd = POSIX.openat(folder.raw, FileName(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
            guard fd >= 0 else {
                let code = errno
                if SafeFile.kind(of: name, in: folder) == .symlink {
                    throw VMergeError.invalidInput(
                        file: path, reason: "lies under a symbolic link (\(name)); links are not followed in a job folder")
                }
                throw VMergeError.invalidInput(file: path, reason: SafeFile.errorText(code))
            }
            folder = FileDescriptor(fd)
        }
        return (folder, rest.last)
    }

    /// The folder `path` lies in and the components below it, or why it may not be read.
    package func locate(_ path: String) -> Result<(base: String, rest: [String]), VMergeError> {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if parts.contains("..") {
            return .failure(.invalidInput(file: path, reason: "climbs out of its folder with '..'"))
        }
        let components = parts.filter { $0 != "." }
        for base in [root] + allowed {
            let prefix = base.split(separator: "/").map(String.init).filter { $0 != "." }
            if components.count >= prefix.count && Array(components.prefix(prefix.count)) == prefix {
                return .success((base, Array(components.dropFirst(prefix.count))))
            }
        }
        return .failure(
            .invalidInput(
                file: path, reason: "is outside the job folder (a watch job reads only its own files; see --allow-inputs)"
            ))
    }
}
