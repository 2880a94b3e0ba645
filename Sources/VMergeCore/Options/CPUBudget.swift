import Foundation

/// How many cores this process may keep busy: the CPUs its affinity allows, and, in a container,
/// the cgroup's CPU quota (cgroup v2 `cpu.max`, on this cgroup and every one above it), whichever
/// is smaller. FFmpeg sizes a decoder's threads by the affinity alone, so in a container held to 2
/// CPUs on a 64-core host it would start 65 threads that take turns on 2.
package enum CPUBudget {
    /// The cores, at least 1; read once.
    package static let cores: Int = {
        let affinity = ProcessInfo.processInfo.activeProcessorCount
        guard let quota = cgroupQuota() else { return max(1, affinity) }
        return max(1, min(affinity, Int(quota.rounded(.up))))
    }()

    /// The smallest CPU quota (in CPUs) on the way from this process's cgroup up to the root; nil
    /// when there is none (no cgroup v2, or "max" all the way).
    static func cgroupQuota(root: String = "/sys/fs/cgroup", membership: String? = nil) -> Double? {
        let text = membership ?? (try? SafeFile.read("/proc/self/cgroup", limit: 64 * 1024)).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard let text, let path = unifiedPath(text) else { return nil }
        let parts = path.split(separator: "/").map(String.init)
        // "a/b/c", "a/b", "a" and the root: a limit anywhere above holds this cgroup too.
        let folders = (0...parts.count).reversed().map { parts.prefix($0).joined(separator: "/") }
        return folders.compactMap { folder -> Double? in
            let file = FileName.joined(root, folder.isEmpty ? "cpu.max" : folder + "/cpu.max")
            guard let data = try? SafeFile.read(file, limit: 4096) else { return nil }
            return quota(String(decoding: data, as: UTF8.self))
        }.min()
    }

    /// The cgroup v2 path in `/proc/self/cgroup` ("0::/a/b" gives "a/b"; "0::/" gives "").
    static func unifiedPath(_ text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("0::/") {
            return String(line.dropFirst(4)).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        }
        return nil
    }

    /// `cpu.max`'s "QUOTA PERIOD" as CPUs; nil for "max" (no limit) or text that is not one.
    static func quota(_ text: String) -> Double? {
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, let quota = Double(parts[0]), let period = Double(parts[1]), quota > 0, period > 0
        else { return nil }
        return quota / period
    }
}
