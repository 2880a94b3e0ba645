import Foundation

/// A file's modification time in nanoseconds (the field has a different name on Darwin).
public func modificationNanos(_ info: stat) -> Int64 {
    #if canImport(Darwin)
        return Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
    #else
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    #endif
}

/// This machine's short name, for claim and temporary-file names (batch, watch).
public let shortHostName = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
