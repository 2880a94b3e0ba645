import Foundation
import VMergeCore

/// The output file's life cycle: written under a hidden temporary name in the same folder,
/// published by an atomic rename (or a no-clobber link) only once complete, removed on failure.
final class OutputTarget {
    let path: String
    let temporaryPath: String
    private(set) var committedSize: Int64 = 0
    private var committed = false

    /// - Parameter tag: names the temporary file (".<name>.vmerge-<tag>.tmp"), so a watch worker
    ///   that died can have its leftovers found by claim; default: pid and a random token.
    init(path: String, tag: String? = nil) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let token = tag ?? "\(getpid())-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        temporaryPath = folder + "/." + url.lastPathComponent + ".vmerge-\(token).tmp"
    }

    deinit { if !committed { discard() } }

    /// Refuses, before any work, an output that exists (without overwrite), that is one of the
    /// inputs (same device and inode), or whose folder is missing or read-only.
    static func check(_ path: String, inputs: [String], overwrite: Bool) throws {
        var outputInfo = stat()
        if stat(path, &outputInfo) == 0 {
            for input in inputs {
                var inputInfo = stat()
                if stat(input, &inputInfo) == 0 && inputInfo.st_dev == outputInfo.st_dev
                    && inputInfo.st_ino == outputInfo.st_ino
                {
                    throw VMergeError.outputIsInput(file: path)
                }
            }
            if (outputInfo.st_mode & S_IFMT) == S_IFDIR { throw VMergeError.io(file: path, message: "is a directory") }
            if !overwrite { throw VMergeError.outputExists(file: path) }
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var folderInfo = stat()
        guard stat(folder, &folderInfo) == 0, (folderInfo.st_mode & S_IFMT) == S_IFDIR else {
            throw VMergeError.io(file: path, message: "output folder \(folder) does not exist")
        }
        guard access(folder, W_OK) == 0 else {
            throw VMergeError.io(file: path, message: "output folder \(folder) is not writable")
        }
    }

    /// Publishes the finished temporary file under the output name.
    func commit(overwrite: Bool) throws {
        var info = stat()
        if stat(temporaryPath, &info) == 0 { committedSize = Int64(info.st_size) }
        if overwrite {
            guard rename(temporaryPath, path) == 0 else { throw posixError("cannot move the output into place") }
        } else if link(temporaryPath, path) == 0 {
            // A hard link fails if the name was taken meanwhile: never clobbers a file.
            unlink(temporaryPath)
        } else if errno == EEXIST {
            throw VMergeError.outputExists(file: path)
        } else {
            // File systems without hard links: check, then rename.
            if access(path, F_OK) == 0 { throw VMergeError.outputExists(file: path) }
            guard rename(temporaryPath, path) == 0 else { throw posixError("cannot move the output into place") }
        }
        committed = true
    }

    func discard() {
        unlink(temporaryPath)
    }

    private func posixError(_ what: String) -> VMergeError {
        VMergeError.io(file: path, message: "\(what): \(String(cString: strerror(errno)).lowercased())")
    }
}
