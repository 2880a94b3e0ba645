import CVMergePOSIX
import Foundation

/// A file being written under a fresh hidden name beside its target, published only when
/// complete; removed if never published (on failure, or when its owner goes).
package final class TemporaryFile: @unchecked Sendable {
    package let target: String
    package let folderPath: String
    package let targetName: String
    /// Its name in `folderPath`: ".<target name>.vmerge-<tag>-<random>.tmp".
    package let name: String
    package let descriptor: FileDescriptor
    private let folder: FileDescriptor
    private var finished = false

    package var path: String { folderPath + "/" + name }

    /// This process's tag ("<host>-<pid>"): a later run on this machine can tell a dead
    /// process's temporaries from a live one's (`sweep`).
    package static var processTag: String { "\(shortHostName)-\(getpid())" }

    /// - Parameter tag: part of the name, so a watch worker's leftovers can be found by its
    ///   claim; default `processTag`.
    package convenience init(beside target: String, tag: String? = nil) throws {
        try self.init(in: OutputFolder(of: target).descriptor, target: target, tag: tag)
    }

    /// A temporary file in an open folder (a watch worker's own folders, held open so nobody
    /// can swap them for a link); `target` is the path the file will have, for messages. `mode`:
    /// what it is created with (before the umask): 0600 for a file that must never be readable
    /// by others, not even for a moment.
    package convenience init(
        in folder: FileDescriptor, target: String, tag: String? = nil, mode: mode_t = 0o666
    ) throws {
        try self.init(in: folder, target: target, tag: tag, mode: mode) {
            String(UInt64.random(in: 0...UInt64.max), radix: 36)
        }
    }

    /// `suffix` draws the random part of the name (tests make it predictable, to plant links).
    init(in folder: FileDescriptor, target: String, tag: String?, mode: mode_t = 0o666, suffix: () -> String) throws {
        self.target = target
        self.folder = folder
        (folderPath, targetName) = SafeFile.split(target)
        // Long names are cut so the temporary name fits NAME_MAX; the tag is what matters.
        let stem = FileName.prefix(targetName, bytes: 96)
        let tag = tag ?? TemporaryFile.processTag
        for _ in 0..<16 {
            let candidate = ".\(stem).vmerge-\(tag)-\(suffix()).tmp"
            let fd = POSIX.openat(
                folder.raw, FileName(candidate), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, UInt32(mode))
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

    package func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                Foundation.write(descriptor.raw, $0.baseAddress! + offset, $0.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw VMergeError.io(file: target, message: "cannot write: \(SafeFile.errorText())")
            }
            offset += count
        }
    }

    /// Makes the data durable before it gets its name, so a crash never leaves an empty file
    /// under the published name.
    package func sync() throws {
        guard fsync(descriptor.raw) == 0 else {
            throw VMergeError.io(file: target, message: "cannot write: \(SafeFile.errorText())")
        }
    }

    package var size: Int64 { Int64(descriptor.info?.st_size ?? 0) }

    /// Whether the temporary name still holds this file (nobody swapped it).
    private var isStillOurs: Bool {
        var named = stat()
        guard let held = descriptor.info, POSIX.fstatat(folder.raw, FileName(name), &named, AT_SYMLINK_NOFOLLOW) == 0
        else {
            return false
        }
        return named.st_dev == held.st_dev && named.st_ino == held.st_ino
    }

    /// Gives the file its name. Without a policy that allows it, never replaces anything, even a
    /// file that appeared a moment ago (throws `outputExists`).
    package func publish(replace: ReplacePolicy) throws {
        try publish(as: targetName, replace: replace)
    }

    /// Publishes under another name in the same folder (a watch output whose name was taken
    /// meanwhile goes to the next free one, without encoding it again).
    package func publish(as published: String, replace: ReplacePolicy) throws {
        let path = folderPath + "/" + published
        guard isStillOurs else {
            throw VMergeError.io(file: path, message: "its temporary file was replaced meanwhile; not published")
        }
        var info = stat()
        if POSIX.fstatat(folder.raw, FileName(published), &info, AT_SYMLINK_NOFOLLOW) == 0 {
            try SafeFile.checkExisting(folder: folder.raw, name: published, path: path, replace: replace)
            guard POSIX.renameat(folder.raw, FileName(name), folder.raw, FileName(published)) == 0 else {
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
    package func publishUndoably(as published: String, replace: ReplacePolicy) throws {
        var backup: String?
        var info = stat()
        if POSIX.fstatat(folder.raw, FileName(published), &info, AT_SYMLINK_NOFOLLOW) == 0 {
            try SafeFile.checkExisting(
                folder: folder.raw, name: published, path: folderPath + "/" + published, replace: replace)
            let aside = String(name.dropLast(".tmp".count)) + ".old.tmp"
            // Where the file system has no hard links the old file cannot be kept: replaced as before.
            if POSIX.linkat(folder.raw, FileName(published), folder.raw, FileName(aside), 0) == 0 { backup = aside }
        }
        do {
            try publish(as: published, replace: replace)
        } catch {
            if let backup { POSIX.unlinkat(folder.raw, FileName(backup), 0) }
            throw error
        }
        undoable = (published, backup)
    }

    /// Takes back a `publishUndoably`: the file it replaced is put back (one rename), or the name
    /// is freed; only while the name still holds this file.
    package func undoPublish() {
        guard let (published, backup) = undoable else { return }
        undoable = nil
        var named = stat()
        guard let held = descriptor.info,
            POSIX.fstatat(folder.raw, FileName(published), &named, AT_SYMLINK_NOFOLLOW) == 0,
            named.st_dev == held.st_dev, named.st_ino == held.st_ino
        else {
            if let backup { POSIX.unlinkat(folder.raw, FileName(backup), 0) }
            return
        }
        if let backup {
            POSIX.renameat(folder.raw, FileName(backup), folder.raw, FileName(published))
        } else {
            POSIX.unlinkat(folder.raw, FileName(published), 0)
        }
    }

    /// Ends a `publishUndoably`: the replaced file kept aside goes.
    package func keepPublished() {
        if let backup = undoable?.backup { POSIX.unlinkat(folder.raw, FileName(backup), 0) }
        undoable = nil
    }

    private func publishWithoutReplacing(_ published: String, _ path: String) throws {
        if POSIX.renameNoReplace(folder.raw, FileName(name), folder.raw, FileName(published)) == 0 { return }
        if errno == EEXIST { throw VMergeError.outputExists(file: path) }
        guard [ENOSYS, EINVAL, ENOTSUP, EOPNOTSUPP].contains(errno) else {
            throw failure("cannot move it into place", path)
        }
        // No atomic no-replace rename here: a hard link fails just as well if the name is taken.
        if POSIX.linkat(folder.raw, FileName(name), folder.raw, FileName(published), 0) == 0 {
            POSIX.unlinkat(folder.raw, FileName(name), 0)
            return
        }
        if errno == EEXIST { throw VMergeError.outputExists(file: path) }
        // File systems without hard links either (FAT, some FUSE): check, then rename.
        var info = stat()
        if POSIX.fstatat(folder.raw, FileName(published), &info, AT_SYMLINK_NOFOLLOW) == 0 {
            throw VMergeError.outputExists(file: path)
        }
        guard POSIX.renameat(folder.raw, FileName(name), folder.raw, FileName(published)) == 0 else {
            throw failure("cannot move it into place", path)
        }
    }

    private func failure(_ what: String, _ path: String) -> VMergeError {
        .io(file: path, message: "\(what): \(SafeFile.errorText())")
    }

    /// Removes the temporary file (only if its name still holds it).
    package func discard() {
        guard !finished else { return }
        finished = true
        if isStillOurs { POSIX.unlinkat(folder.raw, FileName(name), 0) }
    }

    /// Removes temporary files in `folder` that runs left when they were killed: regular files
    /// ".<name>.vmerge-….tmp" (with `target`, only those of that name) whose lock nobody holds.
    /// Every temporary is locked by its writer for as long as it lives, so a live one, of this
    /// machine or of another sharing the folder, is never taken; on a file system without locks
    /// nothing is removed. Returns how many were removed.
    @discardableResult
    package static func sweep(folder: String, target: String? = nil) -> Int {
        let stem = target.map { "." + FileName.prefix($0, bytes: 96) + ".vmerge-" }
        let fd = POSIX.openat(AT_FDCWD, FileName(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else { return 0 }
        let directory = FileDescriptor(fd)
        var removed = 0
        for entry in SafeFile.names(in: directory) ?? [] {
            guard entry.hasPrefix("."), entry.hasSuffix(".tmp"), entry.contains(".vmerge-") else { continue }
            if let stem, !entry.hasPrefix(stem) { continue }
            let file = FileDescriptor(
                POSIX.openat(directory.raw, FileName(entry), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0))
            guard file.raw >= 0, let held = file.info, FileKind(mode: held.st_mode) == .regular,
                vm_try_lock(file.raw) == 0
            else { continue }
            var named = stat()
            guard POSIX.fstatat(directory.raw, FileName(entry), &named, AT_SYMLINK_NOFOLLOW) == 0,
                named.st_ino == held.st_ino,
                named.st_dev == held.st_dev
            else { continue }
            if POSIX.unlinkat(directory.raw, FileName(entry), 0) == 0 { removed += 1 }
        }
        return removed
    }
}

/// What a path refers to, for telling whether two names are one file: the device and inode
/// when it exists, else the real path of its folder and its name (so "out.mp4", "./out.mp4"
/// and "$PWD/out.mp4" are one place before the file exists).
package enum PathIdentity: Hashable, Sendable {
    case file(device: UInt64, inode: UInt64)
    case name(String)

    package static func of(_ path: FileName) -> PathIdentity {
        var info = stat()
        if POSIX.stat(path, &info) == 0 {
            return .file(
                device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
        }
        let (folder, name) = SafeFile.split(path.escaped)
        if let folder = resolvedPath(folder) { return .name(folder + "/" + name) }
        return .name(absolutePath(path.escaped))
    }
}
