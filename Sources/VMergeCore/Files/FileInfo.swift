import Foundation

/// A file's modification time in nanoseconds (the field has a different name on Darwin); pinned
/// to Int64's range for times before 1678 or after 2262, which `touch -d` can set.
package func modificationNanos(_ info: stat) -> Int64 {
    #if canImport(Darwin)
        let time = info.st_mtimespec
    #else
        let time = info.st_mtim
    #endif
    return modificationNanos(seconds: Int64(time.tv_sec), nanoseconds: Int64(time.tv_nsec))
}

/// seconds * 10^9 + nanoseconds, pinned to Int64's range instead of overflowing.
package func modificationNanos(seconds: Int64, nanoseconds: Int64) -> Int64 {
    seconds.multipliedSaturating(by: 1_000_000_000).addingSaturating(nanoseconds)
}

/// Which file a name held at one moment, and in what state: device and inode (reused once a
/// file is deleted, so with its size and modification time too), and its inode's change time,
/// which no one can set back: a file rewritten in place with its size and modification time
/// restored (`rsync --inplace -t`, `touch -r`) is another file's content.
package struct FileID: Sendable, Equatable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    package var modified: Int64
    package var changed: Int64

    package init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int64(info.st_size)
        modified = modificationNanos(info)
        #if canImport(Darwin)
            let change = info.st_ctimespec
        #else
            let change = info.st_ctim
        #endif
        changed = modificationNanos(seconds: Int64(change.tv_sec), nanoseconds: Int64(change.tv_nsec))
    }
}

/// This machine's short name, for claim and temporary-file names (batch, watch).
package let shortHostName = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
