import Foundation

/// A file's modification time in nanoseconds (the field has a different name on Darwin); pinned
/// to Int64's range for times before 1678 or after 2262, which `touch -d` can set.
public func modificationNanos(_ info: stat) -> Int64 {
    #if canImport(Darwin)
        let time = info.st_mtimespec
    #else
        let time = info.st_mtim
    #endif
    return modificationNanos(seconds: Int64(time.tv_sec), nanoseconds: Int64(time.tv_nsec))
}

/// seconds * 10^9 + nanoseconds, pinned to Int64's range instead of overflowing.
public func modificationNanos(seconds: Int64, nanoseconds: Int64) -> Int64 {
    seconds.multipliedSaturating(by: 1_000_000_000).addingSaturating(nanoseconds)
}

/// This machine's short name, for claim and temporary-file names (batch, watch).
public let shortHostName = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
