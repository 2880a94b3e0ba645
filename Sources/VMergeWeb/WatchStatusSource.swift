import Foundation
import VMergeCore
import VMergeJobs

/// One watcher as the dashboard sees it: its status file's path and what it says, or why it
/// cannot be read (missing, unreadable, too large, not JSON).
package struct WatchFolderStatus: Sendable, Equatable {
    package enum Reading: Sendable, Equatable {
        case status(WatchStatus)
        case unavailable(String)
    }

    package var source: String
    package var reading: Reading

    package init(source: String, reading: Reading) {
        self.source = source
        self.reading = reading
    }
}

/// The watchers `vmerge dashboard --watch` was given: each path is a status file, or a folder
/// whose `*.json` regular files that begin with the status signature are read (several
/// watchers writing their status files into one folder). Read afresh for each request; a file
/// is opened without following a link and read up to `limit` bytes, so a planted link or a huge
/// file shows as unavailable, never as another file's content or a stalled page.
package struct WatchStatusSource: Sendable {
    /// A status file is a few KiB; this bounds a hostile one.
    package static let limit = 256 * 1024
    /// `*.json` files looked at in one folder (in name order), so a folder full of them, or of
    /// other files, cannot stall the page.
    package static let filesPerFolder = 100

    package let paths: [String]

    package init(paths: [String]) { self.paths = paths }

    package func read() -> [WatchFolderStatus] {
        var seen = Set<String>()
        return paths.flatMap { path -> [WatchFolderStatus] in
            var info = stat()
            guard POSIX.stat(FileName(path), &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                return [WatchFolderStatus(source: path, reading: WatchStatusSource.reading(file: path))]
            }
            return WatchStatusSource.folder(path)
        }.filter { seen.insert($0.source).inserted }  // a file named twice (itself, and in its folder) once
    }

    /// A status file the operator named: anything wrong with it is shown.
    static func reading(file path: String) -> WatchFolderStatus.Reading {
        do {
            return parsed(
                try SafeFile.read(SafeFile.openForReading(path, followLinks: false), name: path, limit: limit))
        } catch {
            return .unavailable(reason(error))
        }
    }

    /// The status files in a folder; other files there (not `*.json`, not regular, not beginning
    /// with the signature) are not watchers' and are left out.
    static func folder(_ path: String) -> [WatchFolderStatus] {
        let folder = FileDescriptor(POSIX.open(FileName(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard folder.raw >= 0, let names = SafeFile.names(in: folder) else {
            return [
                WatchFolderStatus(
                    source: path, reading: .unavailable("cannot list the folder: \(SafeFile.errorText())"))
            ]
        }
        let signature = Data(WatchStatus.signature.utf8)
        var found: [WatchFolderStatus] = []
        // Every `*.json` name looked at counts toward the cap, status or not: a folder holding
        // thousands of other files costs a page at most `filesPerFolder` opens.
        let candidates = names.sorted().filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.prefix(filesPerFolder)
        for name in candidates where SafeFile.kind(of: name, in: folder) == .regular {
            let shown = FileName.joined(path, name)
            do {
                let file = try SafeFile.openForReading(name, in: folder)
                // The signature first: a file that is not a status is left after its first bytes.
                guard readPrefix(file, count: signature.count) == signature,
                    lseek(file.raw, 0, SEEK_SET) == 0
                else { continue }
                found.append(
                    WatchFolderStatus(
                        source: shown, reading: parsed(try SafeFile.read(file, name: shown, limit: limit))))
            } catch {
                found.append(WatchFolderStatus(source: shown, reading: .unavailable(reason(error))))
            }
        }
        return found
    }

    /// Up to `count` bytes from the start of `file`.
    private static func readPrefix(_ file: FileDescriptor, count: Int) -> Data {
        var buffer = [UInt8](repeating: 0, count: count)
        let read = buffer.withUnsafeMutableBytes { Foundation.read(file.raw, $0.baseAddress, count) }
        return Data(buffer.prefix(max(0, read)))
    }

    static func parsed(_ data: Data) -> WatchFolderStatus.Reading {
        do throws(WatchStatus.Unreadable) {
            return .status(try WatchStatus(reading: data))
        } catch {
            return .unavailable(error.reason)
        }
    }

    /// What is wrong, without the path (the page shows it beside).
    private static func reason(_ error: any Error) -> String {
        VMergeError.reason(of: error)
    }
}
