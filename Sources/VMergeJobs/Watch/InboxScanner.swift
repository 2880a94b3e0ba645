import Foundation
import VMergeCore

/// One job in the inbox.
struct InboxJob: Equatable {
    enum Kind: Equatable { case folder, file }
    var name: String
    var kind: Kind
}

/// What the scanner is told about one inbox entry (gathered from the folder, so the settling
/// rules can be tested without a file system or a real clock).
struct InboxEntry: Equatable {
    var name: String
    var kind: FileKind
    var size: Int64 = 0
    /// Modification time, nanoseconds since 1970.
    var mtime: Int64 = 0
    /// A folder holding the marker or a job.json.
    var isReadyFolder = false
}

/// Scan and settle: decides which inbox entries are jobs now. A folder is a job once it holds
/// the marker (or a job.json); a loose video file once its size and modification time have held
/// still for `settle` seconds, watched on a monotonic clock (with `once`, judged by its own
/// modification time, there being no time to watch).
struct InboxScanner {
    var settle: Double
    var once: Bool
    /// Monotonic seconds.
    var now: () -> Double
    /// Seconds since 1970 (for `once`).
    var wallClock: () -> Double = { Date().timeIntervalSince1970 }
    /// Loose files seen, with the size and time they had and since when.
    private(set) var seen: [String: (size: Int64, mtime: Int64, since: Double)] = [:]

    init(settle: Double, once: Bool, now: @escaping () -> Double) {
        self.settle = settle
        self.once = once
        self.now = now
    }

    /// Hidden files (vmerge's own folders and temporaries included) and the usual partial-
    /// download names are never jobs.
    static func isIgnored(_ name: String) -> Bool {
        if name.hasPrefix(".") || name.hasSuffix("~") { return true }
        let suffixes = [".tmp", ".part", ".partial", ".crdownload", ".download", ".filepart", ".swp"]
        return suffixes.contains { name.lowercased().hasSuffix($0) }
    }

    static func isVideo(_ name: String) -> Bool {
        InputList.videoExtensions.contains(FileName(name).pathExtension.lowercased())
    }

    /// Jobs ready now, in natural name order, and the seconds until the next loose file may
    /// settle.
    mutating func scan(_ entries: [InboxEntry]) -> (ready: [InboxJob], nextSettle: Double?) {
        var ready: [InboxJob] = []
        var nextSettle: Double?
        let now = now()
        var stillThere: Set<String> = []
        for entry in InputList.naturallySorted(entries, by: \.name)
        where !InboxScanner.isIgnored(entry.name) {
            switch entry.kind {
            case .directory:
                if entry.isReadyFolder { ready.append(InboxJob(name: entry.name, kind: .folder)) }
            case .regular:
                guard InboxScanner.isVideo(entry.name) else { continue }
                stillThere.insert(entry.name)
                if once {
                    if wallClock() - Double(entry.mtime) / 1e9 >= settle {
                        ready.append(InboxJob(name: entry.name, kind: .file))
                    }
                    continue
                }
                if let previous = seen[entry.name], previous.size == entry.size, previous.mtime == entry.mtime {
                    let still = now - previous.since
                    if still >= settle {
                        ready.append(InboxJob(name: entry.name, kind: .file))
                    } else {
                        nextSettle = min(nextSettle ?? .infinity, settle - still)
                    }
                } else {
                    seen[entry.name] = (entry.size, entry.mtime, now)
                    nextSettle = min(nextSettle ?? .infinity, settle)
                }
            default: continue
            }
        }
        seen = seen.filter { stillThere.contains($0.key) }
        return (ready, nextSettle)
    }

    /// Whether a loose file is still as it was when it settled (the ready list may be a whole
    /// job old by the time its turn comes).
    func isStillSettled(_ entry: InboxEntry) -> Bool {
        guard entry.kind == .regular else { return false }
        if once { return wallClock() - Double(entry.mtime) / 1e9 >= settle }
        guard let previous = seen[entry.name] else { return false }
        return previous.size == entry.size && previous.mtime == entry.mtime && now() - previous.since >= settle
    }
}
