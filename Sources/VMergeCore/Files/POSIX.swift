import CVMergePOSIX
import Foundation

/// The one door from vmerge's names to the system: every call that takes a path or a name in a
/// folder goes through here, so the name reaches the kernel as the exact bytes it came as
/// (`FileName`), never as a String's repaired UTF-8 (which could name another file). Same
/// arguments and results as the C functions; a name holding NUL (which no path can) fails with
/// EINVAL instead of being cut short. Every name parameter is a `FileName`, so a String (which may
/// be another file's name once repaired) reaches no system call without saying which name it is;
/// `FileNameTests` also fails on a C path function called anywhere but here.
package enum POSIX {

    /// Calls `body` with the name's bytes as a C string, for a C function of vmerge's own shims
    /// (binding a socket, adding a watch) that takes a name: the one way a name reaches C.
    package static func named<R>(_ name: FileName, failure: R, _ body: (UnsafePointer<CChar>) -> R) -> R {
        if name.bytes.contains(0) {
            errno = EINVAL
            return failure
        }
        var raw = name.bytes.map { CChar(bitPattern: $0) }
        raw.append(0)
        return raw.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    private static func named<R>(
        _ first: FileName, _ second: FileName, failure: R, _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> R
    ) -> R {
        named(first, failure: failure) { a in named(second, failure: failure) { b in body(a, b) } }
    }

    /// Names the calling thread, as `top -H` and profilers show it (threads it starts take it too).
    package static func nameThread(_ name: String) { vm_name_thread(name) }

    @discardableResult
    package static func stat(_ path: FileName, _ info: UnsafeMutablePointer<stat>) -> Int32 {
        POSIX.fstatat(AT_FDCWD, path, info, 0)
    }

    @discardableResult
    package static func lstat(_ path: FileName, _ info: UnsafeMutablePointer<stat>) -> Int32 {
        POSIX.fstatat(AT_FDCWD, path, info, AT_SYMLINK_NOFOLLOW)
    }

    @discardableResult
    package static func fstatat(_ folder: Int32, _ name: FileName, _ info: UnsafeMutablePointer<stat>, _ flags: Int32)
        -> Int32
    {
        named(name, failure: -1) { Foundation.fstatat(folder, $0, info, flags) }
    }

    @discardableResult
    package static func access(_ path: FileName, _ mode: Int32) -> Int32 {
        named(path, failure: -1) { Foundation.access($0, mode) }
    }

    @discardableResult
    package static func statvfs(_ path: FileName, _ info: UnsafeMutablePointer<statvfs>) -> Int32 {
        named(path, failure: -1) { systemStatvfs($0, info) }
    }

    @discardableResult
    package static func openat(_ folder: Int32, _ name: FileName, _ flags: Int32, _ mode: UInt32) -> Int32 {
        named(name, failure: -1) { vm_openat(folder, $0, flags, mode) }
    }

    @discardableResult
    package static func open(_ path: FileName, _ flags: Int32, _ mode: UInt32 = 0) -> Int32 {
        openat(AT_FDCWD, path, flags, mode)
    }

    @discardableResult
    package static func mkdirat(_ folder: Int32, _ name: FileName, _ mode: mode_t) -> Int32 {
        named(name, failure: -1) { Foundation.mkdirat(folder, $0, mode) }
    }

    @discardableResult
    package static func unlinkat(_ folder: Int32, _ name: FileName, _ flags: Int32) -> Int32 {
        named(name, failure: -1) { Foundation.unlinkat(folder, $0, flags) }
    }

    @discardableResult
    package static func unlink(_ path: FileName) -> Int32 { unlinkat(AT_FDCWD, path, 0) }

    @discardableResult
    package static func renameat(_ fromFolder: Int32, _ from: FileName, _ toFolder: Int32, _ to: FileName) -> Int32 {
        named(from, to, failure: -1) { Foundation.renameat(fromFolder, $0, toFolder, $1) }
    }

    /// renameat that never replaces (see vm_rename_noreplace).
    @discardableResult
    package static func renameNoReplace(_ fromFolder: Int32, _ from: FileName, _ toFolder: Int32, _ to: FileName) -> Int32 {
        named(from, to, failure: -1) { vm_rename_noreplace(fromFolder, $0, toFolder, $1) }
    }

    @discardableResult
    package static func linkat(_ fromFolder: Int32, _ from: FileName, _ toFolder: Int32, _ to: FileName, _ flags: Int32)
        -> Int32
    {
        named(from, to, failure: -1) { Foundation.linkat(fromFolder, $0, toFolder, $1, flags) }
    }

    /// realpath(3) as a name, or nil.
    package static func realpath(_ path: FileName) -> FileName? {
        named(path, failure: nil) { name -> FileName? in
            guard let resolved = Foundation.realpath(name, nil) else { return nil }
            defer { free(resolved) }
            return FileName(cString: resolved)
        }
    }

    /// Creates `path` and the folders above it that are missing (mkdir -p), 0o777 less the umask.
    /// Returns whether it is a folder now.
    @discardableResult
    package static func makeFolders(_ path: FileName) -> Bool {
        var info = Foundation.stat()
        if stat(path, &info) == 0 { return FileKind(mode: info.st_mode) == .directory }
        let parent = path.folder
        if parent != path && !parent.bytes.isEmpty && parent.bytes != [UInt8(ascii: "/")] { makeFolders(parent) }
        return mkdirat(AT_FDCWD, path, 0o777) == 0 || (errno == EEXIST && stat(path, &info) == 0
            && FileKind(mode: info.st_mode) == .directory)
    }

    /// The current directory as a name (getcwd(3)), or "." if it cannot be read.
    package static func currentDirectory() -> FileName {
        guard let path = getcwd(nil, 0) else { return FileName(".") }
        defer { free(path) }
        return FileName(cString: path)
    }

    @discardableResult
    package static func chmod(_ path: FileName, _ mode: mode_t) -> Int32 {
        named(path, failure: -1) { Foundation.chmod($0, mode) }
    }
}

/// statvfs(3), out of `POSIX`, where the name would be its own.
private func systemStatvfs(_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<statvfs>) -> Int32 {
    statvfs(path, info)
}
