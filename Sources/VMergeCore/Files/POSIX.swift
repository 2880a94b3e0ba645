import CVMergePOSIX
import Foundation

/// The one door from vmerge's names to the system: every call that takes a path or a name in a
/// folder goes through here, so the name reaches the kernel as the exact bytes it came as
/// (`FileName`), never as a String's repaired UTF-8 (which could name another file). Same
/// arguments and results as the C functions; a name holding NUL (which no path can) fails with
/// EINVAL instead of being cut short. `PathDoorTests` fails the build's tests on any call of these
/// functions with a name that does not come through here.
package enum POSIX {

    private static func named<R>(_ name: String, failure: R, _ body: (UnsafePointer<CChar>) -> R) -> R {
        if name.utf8.contains(0) {
            errno = EINVAL
            return failure
        }
        return FileName.withCString(name, body)
    }

    private static func named<R>(
        _ first: String, _ second: String, failure: R, _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> R
    ) -> R {
        named(first, failure: failure) { a in named(second, failure: failure) { b in body(a, b) } }
    }

    /// Names the calling thread, as `top -H` and profilers show it (threads it starts take it too).
    package static func nameThread(_ name: String) { vm_name_thread(name) }

    @discardableResult
    package static func stat(_ path: String, _ info: UnsafeMutablePointer<stat>) -> Int32 {
        fstatat(AT_FDCWD, path, info, 0)
    }

    @discardableResult
    package static func lstat(_ path: String, _ info: UnsafeMutablePointer<stat>) -> Int32 {
        fstatat(AT_FDCWD, path, info, AT_SYMLINK_NOFOLLOW)
    }

    @discardableResult
    package static func fstatat(_ folder: Int32, _ name: String, _ info: UnsafeMutablePointer<stat>, _ flags: Int32)
        -> Int32
    {
        named(name, failure: -1) { Foundation.fstatat(folder, $0, info, flags) }
    }

    @discardableResult
    package static func access(_ path: String, _ mode: Int32) -> Int32 {
        named(path, failure: -1) { Foundation.access($0, mode) }
    }

    @discardableResult
    package static func statvfs(_ path: String, _ info: UnsafeMutablePointer<statvfs>) -> Int32 {
        named(path, failure: -1) { systemStatvfs($0, info) }
    }

    @discardableResult
    package static func openat(_ folder: Int32, _ name: String, _ flags: Int32, _ mode: UInt32) -> Int32 {
        named(name, failure: -1) { vm_openat(folder, $0, flags, mode) }
    }

    @discardableResult
    package static func open(_ path: String, _ flags: Int32, _ mode: UInt32 = 0) -> Int32 {
        openat(AT_FDCWD, path, flags, mode)
    }

    @discardableResult
    package static func mkdirat(_ folder: Int32, _ name: String, _ mode: mode_t) -> Int32 {
        named(name, failure: -1) { Foundation.mkdirat(folder, $0, mode) }
    }

    @discardableResult
    package static func unlinkat(_ folder: Int32, _ name: String, _ flags: Int32) -> Int32 {
        named(name, failure: -1) { Foundation.unlinkat(folder, $0, flags) }
    }

    @discardableResult
    package static func unlink(_ path: String) -> Int32 { unlinkat(AT_FDCWD, path, 0) }

    @discardableResult
    package static func renameat(_ fromFolder: Int32, _ from: String, _ toFolder: Int32, _ to: String) -> Int32 {
        named(from, to, failure: -1) { Foundation.renameat(fromFolder, $0, toFolder, $1) }
    }

    /// renameat that never replaces (see vm_rename_noreplace).
    @discardableResult
    package static func renameNoReplace(_ fromFolder: Int32, _ from: String, _ toFolder: Int32, _ to: String) -> Int32 {
        named(from, to, failure: -1) { vm_rename_noreplace(fromFolder, $0, toFolder, $1) }
    }

    @discardableResult
    package static func linkat(_ fromFolder: Int32, _ from: String, _ toFolder: Int32, _ to: String, _ flags: Int32)
        -> Int32
    {
        named(from, to, failure: -1) { Foundation.linkat(fromFolder, $0, toFolder, $1, flags) }
    }

    /// realpath(3) as a name, or nil.
    package static func realpath(_ path: String) -> String? {
        named(path, failure: nil) { name -> String? in
            guard let resolved = Foundation.realpath(name, nil) else { return nil }
            defer { free(resolved) }
            return FileName.decode(cString: resolved)
        }
    }

    /// Creates `path` and the folders above it that are missing (mkdir -p), 0o777 less the umask.
    /// Returns whether it is a folder now.
    @discardableResult
    package static func makeFolders(_ path: String) -> Bool {
        var info = Foundation.stat()
        if stat(path, &info) == 0 { return FileKind(mode: info.st_mode) == .directory }
        let (parent, _) = SafeFile.split(path)
        if parent != path && parent != "." && parent != "/" { makeFolders(parent) }
        return mkdirat(AT_FDCWD, path, 0o777) == 0 || (errno == EEXIST && stat(path, &info) == 0
            && FileKind(mode: info.st_mode) == .directory)
    }

    /// The current directory as a name (getcwd(3)), or "." if it cannot be read.
    package static func currentDirectory() -> String {
        guard let path = getcwd(nil, 0) else { return "." }
        defer { free(path) }
        return FileName.decode(cString: path)
    }
}

/// statvfs(3), out of `POSIX`, where the name would be its own.
private func systemStatvfs(_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<statvfs>) -> Int32 {
    statvfs(path, info)
}
