import CVMergePOSIX
import Foundation

// The one way vmerge reads and writes files it did not create itself. Folders it works in may be
// writable by others (an inbox, a shared output folder), so every name is treated as hostile:
// - an existing file is opened without blocking (a FIFO would hang the open) and used only if it
//   is a regular file; inputs of a confined job are reached without following any link;
// - a new file is written under a fresh temporary name created with O_EXCL|O_NOFOLLOW (a planted
//   link makes the create fail instead of redirecting the write), then published by a rename that
//   does not replace (renameat2 RENAME_NOREPLACE, link + unlink where that is missing), or, when
//   replacing is allowed, by a rename over a regular file only;
// - a symlink, FIFO, device, socket or folder is never replaced, followed or written through.

package enum SafeFile {
    /// The folder and the name of `path` ("." for a bare name).
    package static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    package static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)).lowercased() }

    // MARK: reading

    /// Opens an existing file for reading: without blocking (O_NONBLOCK, so a FIFO cannot hang
    /// the open), only if it is a regular file, and with `followLinks` false not through a final
    /// symlink. Errors are the input's: "<path>: is a FIFO (named pipe), not a file".
    package static func openForReading(_ path: String, followLinks: Bool = true) throws -> FileDescriptor {
        var flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC
        if !followLinks { flags |= O_NOFOLLOW }
        let fd = POSIX.openat(AT_FDCWD, FileName(path), flags, 0)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP && !followLinks {
                throw VMergeError.invalidInput(file: path, reason: "is a symbolic link, not a file")
            }
            throw VMergeError.invalidInput(file: path, reason: errorText(code))
        }
        return try regular(FileDescriptor(fd), path: path)
    }

    /// Opens an existing file for reading as `openForReading` does, following no link anywhere
    /// in `path`: each folder is opened with O_NOFOLLOW|O_DIRECTORY from the one held above it
    /// (from "/" for an absolute path, the working folder otherwise), then the file with
    /// O_NOFOLLOW from the last. O_NOFOLLOW alone guards only the last name: a link planted as a
    /// parent folder would lead anywhere. ".." is refused (it would climb from a folder the
    /// path's own text does not name).
    package static func openForReadingWithoutLinks(_ path: String) throws -> FileDescriptor {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init).filter { $0 != "." }
        if parts.contains("..") {
            throw VMergeError.invalidInput(file: path, reason: "climbs out of a folder with '..'")
        }
        guard let name = parts.last else {
            throw VMergeError.invalidInput(file: path, reason: "is a folder, not a file")
        }
        var folder = FileDescriptor(POSIX.open(path.hasPrefix("/") ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard folder.raw >= 0 else { throw VMergeError.invalidInput(file: path, reason: errorText()) }
        for part in parts.dropLast() {
            guard let next = openFolder(part, in: folder) else {
                let code = errno
                if kind(of: part, in: folder) == .symlink {
                    throw VMergeError.invalidInput(
                        file: path, reason: "lies under a symbolic link (\(part)), which is not followed")
                }
                throw VMergeError.invalidInput(file: path, reason: errorText(code))
            }
            folder = next
        }
        return try openForReading(name, in: folder, path: path)
    }

    /// Checks an open file is a regular file (or with `pipes` a FIFO too), then makes its reads
    /// blocking again.
    static func regular(_ file: FileDescriptor, path: String, pipes: Bool = false) throws -> FileDescriptor {
        guard let info = file.info else { throw VMergeError.invalidInput(file: path, reason: errorText()) }
        let kind = FileKind(mode: info.st_mode)
        guard kind == .regular || (pipes && kind == .fifo) else {
            throw VMergeError.invalidInput(file: path, reason: "is \(kind.phrase), not a file")
        }
        let flags = fcntl(file.raw, F_GETFL)
        if flags >= 0 { _ = fcntl(file.raw, F_SETFL, flags & ~O_NONBLOCK) }
        return file
    }

    /// Opens an input of a confined job: every folder below the job folder (or an allowed one)
    /// is opened with O_NOFOLLOW relative to the one above, so no link, wherever it is planted
    /// and whenever, leads out.
    package static func openForReading(_ path: String, confinedTo confinement: InputConfinement?) throws
        -> FileDescriptor
    {
        guard let confinement else { return try openForReading(path) }
        let (folder, last) = try confinement.folder(of: path)
        guard let name = last else { throw VMergeError.invalidInput(file: path, reason: "is a folder, not a file") }
        let fd = POSIX.openat(folder.raw, FileName(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
        guard fd >= 0 else {
            let code = errno
            if kind(of: name, in: folder) == .symlink {
                throw VMergeError.invalidInput(
                    file: path, reason: "is a symbolic link (a job's inputs must be files in its folder)")
            }
            throw VMergeError.invalidInput(file: path, reason: errorText(code))
        }
        return try regular(FileDescriptor(fd), path: path)
    }

    /// What a confined input path is (a file, a folder, a link...), reached without links.
    package static func kind(of path: String, confinedTo confinement: InputConfinement) throws -> FileKind {
        let (folder, last) = try confinement.folder(of: path)
        guard let name = last else { return .directory }
        return kind(of: name, in: folder)
    }

    /// The entries of a confined folder (reached without links), as names.
    package static func names(of path: String, confinedTo confinement: InputConfinement) throws -> (
        folder: FileDescriptor, names: [String]
    ) {
        let (parent, last) = try confinement.folder(of: path)
        let folder = try last.map { name -> FileDescriptor in
            guard let folder = openFolder(name, in: parent) else {
                throw VMergeError.invalidInput(file: path, reason: "cannot list this folder: \(errorText())")
            }
            return folder
        } ?? parent
        guard let names = names(in: folder) else {
            throw VMergeError.invalidInput(file: path, reason: "cannot list this folder: \(errorText())")
        }
        return (folder, names)
    }

    /// All of a file, refused past `limit` bytes (a job list, a job.json, an input list: a
    /// hostile one must not eat the memory).
    package static func read(_ path: String, limit: Int, followLinks: Bool = true) throws -> Data {
        try read(openForReading(path, followLinks: followLinks), name: path, limit: limit)
    }

    /// All of a list of names (--inputs-from), from a file or a pipe: a shell's process
    /// substitution (`--inputs-from <(find ...)`, /dev/fd/63) and a named pipe are lists as
    /// much as a file is. A named pipe is opened again to wait for its writer, as `cat` would
    /// (a signal stops the wait); a list past `limit` bytes is refused as a file's is.
    package static func readList(_ path: String, limit: Int) throws -> Data {
        let fd = POSIX.openat(AT_FDCWD, FileName(path), O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0)
        guard fd >= 0 else { throw VMergeError.invalidInput(file: path, reason: errorText()) }
        let file = try regular(FileDescriptor(fd), path: path, pipes: true)
        guard FileKind(mode: file.info?.st_mode ?? 0) == .fifo else { return try read(file, name: path, limit: limit) }
        let waiting = POSIX.openat(AT_FDCWD, FileName(path), O_RDONLY | O_CLOEXEC, 0)
        guard waiting >= 0 else { throw VMergeError.invalidInput(file: path, reason: errorText()) }
        return try read(FileDescriptor(waiting), name: path, limit: limit)
    }

    package static func read(_ file: FileDescriptor, name: String, limit: Int) throws -> Data {
        if let size = file.info?.st_size, size > limit { throw tooLarge(name, limit) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(file.raw, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
                if data.count > limit { throw tooLarge(name, limit) }
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                throw VMergeError.invalidInput(file: name, reason: "cannot read: \(errorText())")
            }
        }
    }

    static func tooLarge(_ name: String, _ limit: Int) -> VMergeError {
        .invalidInput(file: name, reason: "is larger than \(ByteSize.format(Int64(limit))); refusing to read it")
    }

    // MARK: writing

    /// Checks, before any work, that a file can be published at `path`: its folder exists and is
    /// writable, and the name is free or holds a regular file `replace` allows replacing.
    package static func checkTarget(_ path: String, replace: ReplacePolicy) throws {
        if path.isEmpty { throw VMergeError.io(file: "''", message: "an empty name is not a file name") }
        if path.hasSuffix("/") { throw VMergeError.badOutputName(file: path, reason: "names a folder, not a file") }
        let (folder, name) = split(path)
        if name == "." || name == ".." { throw VMergeError.badOutputName(file: path, reason: "names a folder, not a file") }
        var info = stat()
        guard POSIX.stat(FileName(folder), &info) == 0, FileKind(mode: info.st_mode) == .directory else {
            throw VMergeError.io(file: path, message: "folder \(folder) does not exist")
        }
        guard POSIX.access(FileName(folder), W_OK) == 0 else {
            throw VMergeError.io(file: path, message: "folder \(folder) is not writable")
        }
        try checkExisting(folder: AT_FDCWD, name: path, path: path, replace: replace)
    }

    /// The error for publishing over what `name` (in `folder`) holds now, or nothing.
    static func checkExisting(folder: Int32, name: String, path: String, replace: ReplacePolicy) throws {
        var info = stat()
        guard POSIX.fstatat(folder, FileName(name), &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return }
            if errno == ENAMETOOLONG {
                throw VMergeError.io(file: path, message: "name is too long for its file system")
            }
            throw VMergeError.io(file: path, message: errorText())
        }
        let kind = FileKind(mode: info.st_mode)
        switch kind {
        case .regular:
            switch replace {
            case .always: return
            case .never: throw VMergeError.outputExists(file: path)
            case let .ifStartsWith(signatures):
                if signatures.contains(where: { startsWith(folder: folder, name: name, $0) }) { return }
                throw VMergeError.io(file: path, message: "exists and was not written by vmerge (use -y to replace it)")
            case let .ifPosterOfJob(key):
                if isOurs(name, in: folder), PosterKey.key(of: name, in: folder) == key { return }
                throw VMergeError.outputExists(file: path)
            case let .ifVideoOfJob(key):
                if isOurs(name, in: folder), VideoKey.key(of: name, in: folder) == key { return }
                throw VMergeError.outputExists(file: path)
            }
        case .symlink:
            throw VMergeError.badOutputName(file: path, reason: "is a symbolic link: vmerge never writes through or replaces one")
        case .directory:
            throw VMergeError.badOutputName(file: path, reason: "is a folder")
        default:
            throw VMergeError.badOutputName(file: path, reason: "is \(kind.phrase): vmerge replaces only regular files")
        }
    }

    /// Whether `name` (in `folder`) is a regular file, not a link, owned by the user running
    /// vmerge (as root: root's). Only such a file can be one vmerge wrote for this user: a job key
    /// or tag in a file is text anyone who may write the folder can copy.
    package static func isOurs(_ name: String, in folder: Int32 = AT_FDCWD) -> Bool {
        var info = stat()
        return POSIX.fstatat(folder, FileName(name), &info, AT_SYMLINK_NOFOLLOW) == 0 && FileKind(mode: info.st_mode) == .regular
            && info.st_uid == geteuid()
    }

    private static func startsWith(folder: Int32, name: String, _ signature: String) -> Bool {
        let fd = POSIX.openat(folder, FileName(name), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0)
        guard fd >= 0 else { return false }
        let file = FileDescriptor(fd)
        let wanted = Array(signature.utf8)
        var buffer = [UInt8](repeating: 0, count: wanted.count)
        let count = buffer.withUnsafeMutableBytes { Foundation.read(file.raw, $0.baseAddress, $0.count) }
        return count == wanted.count && buffer == wanted
    }

    /// Writes `text` to `path` whole or not at all (a temporary file, then a rename), by the rules
    /// above.
    package static func write(
        _ text: String, to path: String, replace: ReplacePolicy, tag: String? = nil, in folder: FileDescriptor? = nil
    ) throws {
        let temporary =
            try folder.map { try TemporaryFile(in: $0, target: path, tag: tag) }
            ?? TemporaryFile(beside: path, tag: tag)
        try temporary.write(Array(text.utf8))
        try temporary.publish(replace: replace)
    }

    // MARK: folders

    /// The entries of an open folder (not "." and ".."), read once, as names (`FileName`: every
    /// byte kept), or nil if the folder cannot be listed.
    package static func names(in folder: FileDescriptor) -> [String]? { rawNames(in: folder)?.map(FileName.decode) }

    /// The entries of the folder at `path`, or nil.
    package static func names(ofFolderAt path: String) -> [String]? {
        let folder = FileDescriptor(POSIX.open(FileName(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        return folder.raw >= 0 ? names(in: folder) : nil
    }

    private static func rawNames(in folder: FileDescriptor) -> [[UInt8]]? {
        let copy = dup(folder.raw)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return nil
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            // The name where it lies in the entry, read up to its NUL: copying `d_name` as a whole
            // reads NAME_MAX + 1 bytes, past the end of a short last entry in readdir's buffer.
            let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 0
            let name = (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self)
            let raw = Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
            if raw != [0x2E] && raw != [0x2E, 0x2E] { names.append(raw) }
        }
        return names
    }

    /// Opens the folder `name` in `parent`, never through a link.
    package static func openFolder(_ name: String, in parent: FileDescriptor) -> FileDescriptor? {
        let fd = POSIX.openat(parent.raw, FileName(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        return fd >= 0 ? FileDescriptor(fd) : nil
    }

    /// Opens the file `name` in `folder` for reading, as `openForReading` does (a regular file,
    /// never through a link, a FIFO never waited on); messages name it `path` (default: `name`).
    package static func openForReading(_ name: String, in folder: FileDescriptor, path: String? = nil) throws
        -> FileDescriptor
    {
        let shown = path ?? name
        let fd = POSIX.openat(folder.raw, FileName(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP { throw VMergeError.invalidInput(file: shown, reason: "is a symbolic link, not a file") }
            throw VMergeError.invalidInput(file: shown, reason: errorText(code))
        }
        return try regular(FileDescriptor(fd), path: shown)
    }

    /// What `name` in `folder` is, the name not followed.
    package static func kind(of name: String, in folder: FileDescriptor) -> FileKind {
        var info = stat()
        return POSIX.fstatat(folder.raw, FileName(name), &info, AT_SYMLINK_NOFOLLOW) == 0 ? FileKind(mode: info.st_mode) : .missing
    }

    /// Removes the file at `path` (components below `folder`, walked without links), then the
    /// folders on the way that it leaves empty. Never follows a link; never removes a folder's
    /// other contents.
    /// With `id`, only if the name still holds that file (the last identity check before deleting
    /// a source).
    /// Returns whether the file was removed.
    @discardableResult
    package static func removeBeneath(_ path: String, in folder: FileDescriptor, matching id: FileID? = nil) -> Bool {
        let parts = path.split(separator: "/").map(String.init).filter { $0 != "." }
        guard let last = parts.last, !parts.contains("..") else { return false }
        var chain = [folder]
        for part in parts.dropLast() {
            guard let next = chain.last.flatMap({ openFolder(part, in: $0) }) else { return false }
            chain.append(next)
        }
        guard let parent = chain.last, kind(of: last, in: parent) != .directory else { return false }
        if let id {
            var info = stat()
            guard POSIX.fstatat(parent.raw, FileName(last), &info, AT_SYMLINK_NOFOLLOW) == 0, FileKind(mode: info.st_mode) == .regular,
                FileID(info) == id
            else { return false }
        }
        guard POSIX.unlinkat(parent.raw, FileName(last), 0) == 0 else { return false }
        for (index, part) in parts.dropLast().enumerated().reversed() {
            if POSIX.unlinkat(chain[index].raw, FileName(part), AT_REMOVEDIR) != 0 { break }  // not empty: kept
        }
        return true
    }

    /// Removes `name` in `parent` and, if it is a folder, everything in it, never following a link
    /// (a link is removed, not what it points to, even if planted while the removal runs).
    /// Returns false if anything could not be removed.
    @discardableResult
    package static func removeTree(_ name: String, in parent: FileDescriptor, depth: Int = 0) -> Bool {
        guard kind(of: name, in: parent) == .directory else { return POSIX.unlinkat(parent.raw, FileName(name), 0) == 0 || errno == ENOENT }
        guard depth < 64, let folder = openFolder(name, in: parent) else {
            return POSIX.unlinkat(parent.raw, FileName(name), 0) == 0
        }
        var removed = true
        for entry in names(in: folder) ?? [] where !removeTree(entry, in: folder, depth: depth + 1) { removed = false }
        return POSIX.unlinkat(parent.raw, FileName(name), AT_REMOVEDIR) == 0 && removed
    }
}
