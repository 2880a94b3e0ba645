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

/// An open file descriptor, closed when its owner goes.
public final class FileDescriptor: @unchecked Sendable {
    public let raw: Int32

    public init(_ raw: Int32) { self.raw = raw }

    deinit { close(raw) }

    public var info: stat? {
        var info = stat()
        return fstat(raw, &info) == 0 ? info : nil
    }
}

/// What a name is, the last component not followed.
public enum FileKind: Sendable, Equatable {
    case missing, regular, directory, symlink, fifo, socket, device, other

    public init(mode: mode_t) {
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
    public static func at(_ path: String) -> FileKind {
        var info = stat()
        return lstat(path, &info) == 0 ? FileKind(mode: info.st_mode) : .missing
    }

    public var phrase: String {
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
public enum ReplacePolicy: Sendable, Equatable {
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
}

/// A keyed job's poster carries its job key in a JPEG comment segment right after the start
/// marker, so a later run of the same job can tell a poster it left behind from anybody's file.
public enum PosterKey {
    static let prefix = "vmerge-job "

    /// `jpeg` with `key` in a comment segment after its start marker.
    public static func tag(_ jpeg: [UInt8], key: String) -> [UInt8] {
        guard jpeg.count >= 2, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        let text = Array((prefix + key).utf8.prefix(65000))
        let length = text.count + 2
        return [0xFF, 0xD8, 0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + text + jpeg[2...]
    }

    /// The key a tagged JPEG's first bytes carry, or nil.
    public static func key(inHead head: [UInt8]) -> String? {
        guard head.count > 6, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF, head[3] == 0xFE else { return nil }
        let length = Int(head[4]) << 8 | Int(head[5])
        guard length > 2, head.count >= 4 + length else { return nil }
        let text = String(decoding: head[6..<(4 + length)], as: UTF8.self)
        guard text.hasPrefix(prefix) else { return nil }
        return String(text.dropFirst(prefix.count))
    }

    /// The key the poster at `name` in `folder` carries (never through a link, never blocking).
    public static func key(of name: String, in folder: Int32 = AT_FDCWD) -> String? {
        let fd = vm_openat(folder, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0)
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
public struct InputConfinement: Sendable, Equatable {
    /// The job folder's path: what input paths are written against, and what messages say.
    public var root: String
    public var allowed: [String]
    /// The job folder itself, held open: every read below it starts here, so renaming folders
    /// above it (or planting a link where it was) cannot redirect the job.
    public var rootFolder: FileDescriptor?

    public init(root: String, allowed: [String] = [], rootFolder: FileDescriptor? = nil) {
        self.root = root
        self.allowed = allowed
        self.rootFolder = rootFolder
    }

    public static func == (a: InputConfinement, b: InputConfinement) -> Bool {
        a.root == b.root && a.allowed == b.allowed && a.rootFolder === b.rootFolder
    }

    /// Opens the folder an input lies in (walked without links), and the input's name in it.
    func folder(of path: String) throws -> (folder: FileDescriptor, name: String?) {
        let (base, rest) = try locate(path).get()
        var folder: FileDescriptor
        if base == root, let rootFolder {
            folder = rootFolder
        } else {
            folder = FileDescriptor(vm_openat(AT_FDCWD, base, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0))
            guard folder.raw >= 0 else { throw VMergeError.invalidInput(file: path, reason: SafeFile.errorText()) }
        }
        for name in rest.dropLast() {
            let fd = vm_openat(folder.raw, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
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
    public func locate(_ path: String) -> Result<(base: String, rest: [String]), VMergeError> {
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

public enum SafeFile {
    /// The folder and the name of `path` ("." for a bare name).
    public static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    public static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)).lowercased() }

    // MARK: reading

    /// Opens an existing file for reading: without blocking (O_NONBLOCK, so a FIFO cannot hang
    /// the open), only if it is a regular file, and with `followLinks` false not through a final
    /// symlink. Errors are the input's: "<path>: is a FIFO (named pipe), not a file".
    public static func openForReading(_ path: String, followLinks: Bool = true) throws -> FileDescriptor {
        var flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC
        if !followLinks { flags |= O_NOFOLLOW }
        let fd = vm_openat(AT_FDCWD, path, flags, 0)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP && !followLinks {
                throw VMergeError.invalidInput(file: path, reason: "is a symbolic link, not a file")
            }
            throw VMergeError.invalidInput(file: path, reason: errorText(code))
        }
        return try regular(FileDescriptor(fd), path: path)
    }

    /// Checks an open file is a regular file, then makes its reads blocking again.
    static func regular(_ file: FileDescriptor, path: String) throws -> FileDescriptor {
        guard let info = file.info else { throw VMergeError.invalidInput(file: path, reason: errorText()) }
        let kind = FileKind(mode: info.st_mode)
        guard kind == .regular else { throw VMergeError.invalidInput(file: path, reason: "is \(kind.phrase), not a file") }
        let flags = fcntl(file.raw, F_GETFL)
        if flags >= 0 { _ = fcntl(file.raw, F_SETFL, flags & ~O_NONBLOCK) }
        return file
    }

    /// Opens an input of a confined job: every folder below the job folder (or an allowed one)
    /// is opened with O_NOFOLLOW relative to the one above, so no link, wherever it is planted
    /// and whenever, leads out.
    public static func openForReading(_ path: String, confinedTo confinement: InputConfinement?) throws
        -> FileDescriptor
    {
        guard let confinement else { return try openForReading(path) }
        let (folder, last) = try confinement.folder(of: path)
        guard let name = last else { throw VMergeError.invalidInput(file: path, reason: "is a folder, not a file") }
        let fd = vm_openat(folder.raw, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
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
    public static func kind(of path: String, confinedTo confinement: InputConfinement) throws -> FileKind {
        let (folder, last) = try confinement.folder(of: path)
        guard let name = last else { return .directory }
        return kind(of: name, in: folder)
    }

    /// The entries of a confined folder (reached without links), as names.
    public static func names(of path: String, confinedTo confinement: InputConfinement) throws -> (
        folder: FileDescriptor, names: [String], undecodable: [[UInt8]]
    ) {
        let (parent, last) = try confinement.folder(of: path)
        let folder = try last.map { name -> FileDescriptor in
            guard let folder = openFolder(name, in: parent) else {
                throw VMergeError.invalidInput(file: path, reason: "cannot list this folder: \(errorText())")
            }
            return folder
        } ?? parent
        guard let entries = listing(of: folder) else {
            throw VMergeError.invalidInput(file: path, reason: "cannot list this folder: \(errorText())")
        }
        return (folder, entries.names, entries.undecodable)
    }

    /// All of a file, refused past `limit` bytes (a job list, a job.json, an input list: a
    /// hostile one must not eat the memory).
    public static func read(_ path: String, limit: Int, followLinks: Bool = true) throws -> Data {
        try read(openForReading(path, followLinks: followLinks), name: path, limit: limit)
    }

    public static func read(_ file: FileDescriptor, name: String, limit: Int) throws -> Data {
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
    public static func checkTarget(_ path: String, replace: ReplacePolicy) throws {
        if path.isEmpty { throw VMergeError.io(file: "''", message: "an empty name is not a file name") }
        if path.hasSuffix("/") { throw VMergeError.io(file: path, message: "names a folder, not a file") }
        let (folder, name) = split(path)
        if name == "." || name == ".." { throw VMergeError.io(file: path, message: "names a folder, not a file") }
        var info = stat()
        guard stat(folder, &info) == 0, FileKind(mode: info.st_mode) == .directory else {
            throw VMergeError.io(file: path, message: "folder \(folder) does not exist")
        }
        guard access(folder, W_OK) == 0 else {
            throw VMergeError.io(file: path, message: "folder \(folder) is not writable")
        }
        try checkExisting(folder: AT_FDCWD, name: path, path: path, replace: replace)
    }

    /// The error for publishing over what `name` (in `folder`) holds now, or nothing.
    static func checkExisting(folder: Int32, name: String, path: String, replace: ReplacePolicy) throws {
        var info = stat()
        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
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
                if PosterKey.key(of: name, in: folder) == key { return }
                throw VMergeError.outputExists(file: path)
            }
        case .symlink:
            throw VMergeError.io(file: path, message: "is a symbolic link: vmerge never writes through or replaces one")
        case .directory:
            throw VMergeError.io(file: path, message: "is a folder")
        default:
            throw VMergeError.io(file: path, message: "is \(kind.phrase): vmerge replaces only regular files")
        }
    }

    private static func startsWith(folder: Int32, name: String, _ signature: String) -> Bool {
        let fd = vm_openat(folder, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0)
        guard fd >= 0 else { return false }
        let file = FileDescriptor(fd)
        let wanted = Array(signature.utf8)
        var buffer = [UInt8](repeating: 0, count: wanted.count)
        let count = buffer.withUnsafeMutableBytes { Foundation.read(file.raw, $0.baseAddress, $0.count) }
        return count == wanted.count && buffer == wanted
    }

    /// Writes `text` to `path` whole or not at all (a temporary file, then a rename), by the rules
    /// above.
    public static func write(
        _ text: String, to path: String, replace: ReplacePolicy, tag: String? = nil, in folder: FileDescriptor? = nil
    ) throws {
        let temporary =
            try folder.map { try TemporaryFile(in: $0, target: path, tag: tag) }
            ?? TemporaryFile(beside: path, tag: tag)
        try temporary.write(Array(text.utf8))
        try temporary.publish(replace: replace)
    }

    // MARK: folders

    /// The entries of an open folder (not "." and ".."), read once: the names, and apart the ones
    /// that are not valid UTF-8 (no String can name those again), as their bytes. nil if the
    /// folder cannot be listed.
    public static func listing(of folder: FileDescriptor) -> (names: [String], undecodable: [[UInt8]])? {
        guard let raw = rawNames(in: folder) else { return nil }
        var names: [String] = []
        var undecodable: [[UInt8]] = []
        for bytes in raw {
            let name = String(decoding: bytes, as: UTF8.self)
            if Array(name.utf8) == bytes { names.append(name) } else { undecodable.append(bytes) }
        }
        return (names, undecodable)
    }

    /// The names in an open folder that a String can hold (see `listing`), or nil.
    public static func names(in folder: FileDescriptor) -> [String]? { listing(of: folder)?.names }

    /// A name's bytes for messages: invalid bytes as \xNN.
    public static func printable(_ raw: [UInt8]) -> String {
        var text = ""
        var index = 0
        while index < raw.count {
            // The longest valid UTF-8 sequence starting here, else one escaped byte.
            var decoded: String?
            for length in (1...min(4, raw.count - index)).reversed() {
                let slice = Array(raw[index..<index + length])
                let string = String(decoding: slice, as: UTF8.self)
                if Array(string.utf8) == slice, !string.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                    decoded = string
                    index += length
                    break
                }
            }
            if let decoded {
                text += decoded
            } else {
                text += String(format: "\\x%02X", raw[index])
                index += 1
            }
        }
        return text
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
            let raw = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: UInt8.self, capacity: Int(NAME_MAX) + 1) { pointer in
                    Array(UnsafeBufferPointer(start: pointer, count: strlen(UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))))
                }
            }
            if raw != [0x2E] && raw != [0x2E, 0x2E] { names.append(raw) }
        }
        return names
    }

    /// Opens the folder `name` in `parent`, never through a link.
    public static func openFolder(_ name: String, in parent: FileDescriptor) -> FileDescriptor? {
        let fd = vm_openat(parent.raw, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        return fd >= 0 ? FileDescriptor(fd) : nil
    }

    /// What `name` in `folder` is, the name not followed.
    public static func kind(of name: String, in folder: FileDescriptor) -> FileKind {
        var info = stat()
        return fstatat(folder.raw, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? FileKind(mode: info.st_mode) : .missing
    }

    /// Removes the file at `path` (components below `folder`, walked without links), then the
    /// folders on the way that it leaves empty. Never follows a link; never removes a folder's
    /// other contents.
    /// With `id`, only if the name still holds that file (the last identity check before deleting
    /// a source).
    /// Returns whether the file was removed.
    @discardableResult
    public static func removeBeneath(_ path: String, in folder: FileDescriptor, matching id: FileID? = nil) -> Bool {
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
            guard fstatat(parent.raw, last, &info, AT_SYMLINK_NOFOLLOW) == 0, FileKind(mode: info.st_mode) == .regular,
                FileID(info) == id
            else { return false }
        }
        guard unlinkat(parent.raw, last, 0) == 0 else { return false }
        for (index, part) in parts.dropLast().enumerated().reversed() {
            if unlinkat(chain[index].raw, part, AT_REMOVEDIR) != 0 { break }  // not empty: kept
        }
        return true
    }

    /// Removes `name` in `parent` and, if it is a folder, everything in it, never following a link
    /// (a link is removed, not what it points to, even if planted while the removal runs).
    /// Returns false if anything could not be removed.
    @discardableResult
    public static func removeTree(_ name: String, in parent: FileDescriptor, depth: Int = 0) -> Bool {
        guard kind(of: name, in: parent) == .directory else { return unlinkat(parent.raw, name, 0) == 0 || errno == ENOENT }
        guard depth < 64, let folder = openFolder(name, in: parent) else {
            return unlinkat(parent.raw, name, 0) == 0
        }
        var removed = true
        for entry in names(in: folder) ?? [] where !removeTree(entry, in: folder, depth: depth + 1) { removed = false }
        return unlinkat(parent.raw, name, AT_REMOVEDIR) == 0 && removed
    }
}

/// A file being written under a fresh hidden name beside its target, published only when
/// complete; removed if never published (on failure, or when its owner goes).
public final class TemporaryFile: @unchecked Sendable {
    public let target: String
    public let folderPath: String
    public let targetName: String
    /// Its name in `folderPath`: ".<target name>.vmerge-<tag>-<random>.tmp".
    public let name: String
    public let descriptor: FileDescriptor
    private let folder: FileDescriptor
    private var finished = false

    public var path: String { folderPath + "/" + name }

    /// This process's tag ("<host>-<pid>"): a later run on this machine can tell a dead
    /// process's temporaries from a live one's (`sweep`).
    public static var processTag: String { "\(shortHostName)-\(getpid())" }

    /// - Parameter tag: part of the name, so a watch worker's leftovers can be found by its
    ///   claim; default `processTag`.
    public convenience init(beside target: String, tag: String? = nil) throws {
        let (folderPath, _) = SafeFile.split(target)
        let folder = FileDescriptor(vm_openat(AT_FDCWD, folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0))
        guard folder.raw >= 0 else {
            throw VMergeError.io(file: target, message: "cannot open its folder: \(SafeFile.errorText())")
        }
        try self.init(in: folder, target: target, tag: tag)
    }

    /// A temporary file in an open folder (a watch worker's own folders, held open so nobody
    /// can swap them for a link); `target` is the path the file will have, for messages.
    public convenience init(in folder: FileDescriptor, target: String, tag: String? = nil) throws {
        try self.init(in: folder, target: target, tag: tag) { String(UInt64.random(in: 0...UInt64.max), radix: 36) }
    }

    /// `suffix` draws the random part of the name (tests make it predictable, to plant links).
    init(in folder: FileDescriptor, target: String, tag: String?, suffix: () -> String) throws {
        self.target = target
        self.folder = folder
        (folderPath, targetName) = SafeFile.split(target)
        // Long names are cut so the temporary name fits NAME_MAX; the tag is what matters.
        let stem = String(decoding: Array(targetName.utf8.prefix(96)), as: UTF8.self)
        let tag = tag ?? TemporaryFile.processTag
        for _ in 0..<16 {
            let candidate = ".\(stem).vmerge-\(tag)-\(suffix()).tmp"
            let fd = vm_openat(
                folder.raw, candidate, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            if fd >= 0 {
                name = candidate
                descriptor = FileDescriptor(fd)
                // Held while this process lives: a sweep never takes a live temporary for a leftover.
                _ = vm_try_lock(fd)
                return
            }
            // Taken (a planted name included): draw another.
            guard errno == EEXIST else {
                throw VMergeError.io(
                    file: target, message: "cannot create a temporary file in \(folderPath): \(SafeFile.errorText())")
            }
        }
        throw VMergeError.io(file: target, message: "cannot create a temporary file in \(folderPath)")
    }

    deinit { discard() }

    public func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Foundation.write(descriptor.raw, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw VMergeError.io(file: target, message: "cannot write: \(SafeFile.errorText())")
            }
            offset += count
        }
    }

    /// Makes the data durable before it gets its name, so a crash never leaves an empty file
    /// under the published name.
    public func sync() throws {
        guard fsync(descriptor.raw) == 0 else {
            throw VMergeError.io(file: target, message: "cannot write: \(SafeFile.errorText())")
        }
    }

    public var size: Int64 { Int64(descriptor.info?.st_size ?? 0) }

    /// Whether the temporary name still holds this file (nobody swapped it).
    private var isStillOurs: Bool {
        var named = stat()
        guard let held = descriptor.info, fstatat(folder.raw, name, &named, AT_SYMLINK_NOFOLLOW) == 0 else {
            return false
        }
        return named.st_dev == held.st_dev && named.st_ino == held.st_ino
    }

    /// Gives the file its name. Without a policy that allows it, never replaces anything, even a
    /// file that appeared a moment ago (throws `outputExists`).
    public func publish(replace: ReplacePolicy) throws {
        try publish(as: targetName, replace: replace)
    }

    /// Publishes under another name in the same folder (a watch output whose name was taken
    /// meanwhile goes to the next free one, without encoding it again).
    public func publish(as published: String, replace: ReplacePolicy) throws {
        let path = folderPath + "/" + published
        guard isStillOurs else {
            throw VMergeError.io(file: path, message: "its temporary file was replaced meanwhile; not published")
        }
        var info = stat()
        if fstatat(folder.raw, published, &info, AT_SYMLINK_NOFOLLOW) == 0 {
            try SafeFile.checkExisting(folder: folder.raw, name: published, path: path, replace: replace)
            guard renameat(folder.raw, name, folder.raw, published) == 0 else {
                throw failure("cannot move it into place", path)
            }
        } else {
            try publishWithoutReplacing(published, path)
        }
        finished = true
    }

    /// The name it was published under by `publishUndoably`, and the file it replaced, kept aside.
    private var undoable: (published: String, backup: String?)?

    /// Publishes like `publish(as:replace:)`, keeping a file it replaces under a hidden name of
    /// its own (a second hard link) until `keepPublished()`, so `undoPublish()` can put the name
    /// back as it was: the members of a publish set published before the video.
    public func publishUndoably(as published: String, replace: ReplacePolicy) throws {
        var backup: String?
        var info = stat()
        if fstatat(folder.raw, published, &info, AT_SYMLINK_NOFOLLOW) == 0 {
            try SafeFile.checkExisting(folder: folder.raw, name: published, path: folderPath + "/" + published, replace: replace)
            let aside = String(name.dropLast(".tmp".count)) + ".old.tmp"
            // Where the file system has no hard links the old file cannot be kept: replaced as before.
            if linkat(folder.raw, published, folder.raw, aside, 0) == 0 { backup = aside }
        }
        do {
            try publish(as: published, replace: replace)
        } catch {
            if let backup { unlinkat(folder.raw, backup, 0) }
            throw error
        }
        undoable = (published, backup)
    }

    /// Takes back a `publishUndoably`: the file it replaced is put back (one rename), or the name
    /// is freed; only while the name still holds this file.
    public func undoPublish() {
        guard let (published, backup) = undoable else { return }
        undoable = nil
        var named = stat()
        guard let held = descriptor.info, fstatat(folder.raw, published, &named, AT_SYMLINK_NOFOLLOW) == 0,
            named.st_dev == held.st_dev, named.st_ino == held.st_ino
        else {
            if let backup { unlinkat(folder.raw, backup, 0) }
            return
        }
        if let backup {
            renameat(folder.raw, backup, folder.raw, published)
        } else {
            unlinkat(folder.raw, published, 0)
        }
    }

    /// Ends a `publishUndoably`: the replaced file kept aside goes.
    public func keepPublished() {
        if let backup = undoable?.backup { unlinkat(folder.raw, backup, 0) }
        undoable = nil
    }

    private func publishWithoutReplacing(_ published: String, _ path: String) throws {
        if vm_rename_noreplace(folder.raw, name, folder.raw, published) == 0 { return }
        if errno == EEXIST { throw VMergeError.outputExists(file: path) }
        guard [ENOSYS, EINVAL, ENOTSUP, EOPNOTSUPP].contains(errno) else {
            throw failure("cannot move it into place", path)
        }
        // No atomic no-replace rename here: a hard link fails just as well if the name is taken.
        if linkat(folder.raw, name, folder.raw, published, 0) == 0 {
            unlinkat(folder.raw, name, 0)
            return
        }
        if errno == EEXIST { throw VMergeError.outputExists(file: path) }
        // File systems without hard links either (FAT, some FUSE): check, then rename.
        var info = stat()
        if fstatat(folder.raw, published, &info, AT_SYMLINK_NOFOLLOW) == 0 { throw VMergeError.outputExists(file: path) }
        guard renameat(folder.raw, name, folder.raw, published) == 0 else {
            throw failure("cannot move it into place", path)
        }
    }

    private func failure(_ what: String, _ path: String) -> VMergeError {
        .io(file: path, message: "\(what): \(SafeFile.errorText())")
    }

    /// Removes the temporary file (only if its name still holds it).
    public func discard() {
        guard !finished else { return }
        finished = true
        if isStillOurs { unlinkat(folder.raw, name, 0) }
    }

    /// Removes temporary files in `folder` that runs left when they were killed: regular files
    /// ".<name>.vmerge-….tmp" (with `target`, only those of that name) whose lock nobody holds.
    /// Every temporary is locked by its writer for as long as it lives, so a live one, of this
    /// machine or of another sharing the folder, is never taken; on a file system without locks
    /// nothing is removed. Returns how many were removed.
    @discardableResult
    public static func sweep(folder: String, target: String? = nil) -> Int {
        let stem = target.map { "." + String(decoding: Array($0.utf8.prefix(96)), as: UTF8.self) + ".vmerge-" }
        let fd = vm_openat(AT_FDCWD, folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else { return 0 }
        let directory = FileDescriptor(fd)
        var removed = 0
        for entry in SafeFile.names(in: directory) ?? [] {
            guard entry.hasPrefix("."), entry.hasSuffix(".tmp"), entry.contains(".vmerge-") else { continue }
            if let stem, !entry.hasPrefix(stem) { continue }
            let file = FileDescriptor(
                vm_openat(directory.raw, entry, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0))
            guard file.raw >= 0, let held = file.info, FileKind(mode: held.st_mode) == .regular,
                vm_try_lock(file.raw) == 0
            else { continue }
            var named = stat()
            guard fstatat(directory.raw, entry, &named, AT_SYMLINK_NOFOLLOW) == 0, named.st_ino == held.st_ino,
                named.st_dev == held.st_dev
            else { continue }
            if unlinkat(directory.raw, entry, 0) == 0 { removed += 1 }
        }
        return removed
    }
}

/// What a path refers to, for telling whether two names are one file: the device and inode
/// when it exists, else the real path of its folder and its name (so "out.mp4", "./out.mp4"
/// and "$PWD/out.mp4" are one place before the file exists).
public enum PathIdentity: Hashable, Sendable {
    case file(device: UInt64, inode: UInt64)
    case name(String)

    public static func of(_ path: String) -> PathIdentity {
        var info = stat()
        if stat(path, &info) == 0 { return .file(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino)) }
        let (folder, name) = SafeFile.split(path)
        if let folder = resolvedPath(folder) { return .name(folder + "/" + name) }
        return .name(absolutePath(path))
    }
}
