import Foundation

/// The footage invariants' oracle for an output, independent of vmerge's code: read with
/// ffprobe and by walking the file's top-level boxes.
public enum FootageOracle {
    /// A regular MP4 whose top-level boxes are whole and whose index (moov) comes before the media.
    public static func isIndexFirstMP4(_ path: String) -> Bool {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return false }
        let bytes = [UInt8](data)
        var offset = 0
        var order: [String] = []
        while offset + 8 <= bytes.count {
            var size = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if size == 1, offset + 16 <= bytes.count {
                size = bytes[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | Int($1) }
            }
            guard size >= 8, offset + size <= bytes.count else { return false }
            order.append(type)
            offset += size
        }
        guard offset == bytes.count, let moov = order.firstIndex(of: "moov"), let mdat = order.firstIndex(of: "mdat")
        else { return false }
        return moov < mdat
    }

    /// An index-first MP4 with a picture and a sound stream, at least `seconds` long (within 0.1 s).
    public static func isCompleteOutput(_ path: String, seconds: Double) -> Bool {
        guard isIndexFirstMP4(path) else { return false }
        guard
            let probe = try? runProgram(
                URL(fileURLWithPath: "/usr/bin/env"),
                [
                    "ffprobe", "-v", "error", "-show_entries", "stream=codec_type:format=duration", "-of", "csv=p=0",
                    path,
                ],
                in: URL(fileURLWithPath: "/")),
            probe.status == 0
        else { return false }
        let lines = probe.stdout.split(separator: "\n").map(String.init)
        guard lines.contains("video"), lines.contains("audio"), let duration = lines.compactMap(Double.init).last else {
            return false
        }
        return duration >= seconds - 0.1
    }
}

extension FootageOracle {
    /// One use of a file in a job, as the oracle models it: the file's seconds of picture, whether
    /// it is a still picture, and the part used.
    public struct Use {
        public var file: String
        public var seconds: Double
        public var isPhoto: Bool
        public var trim: (start: Double, end: Double)?

        public init(file: String, seconds: Double, isPhoto: Bool, trim: (start: Double, end: Double)?) {
            (self.file, self.seconds, self.isPhoto, self.trim) = (file, seconds, isPhoto, trim)
        }

        /// The seconds this use adds to the output, before --max-duration.
        var length: Double { trim.map { min($0.end, seconds) - $0.start } ?? seconds }
        /// Whether the merge keeps it (2 s at least, and a recording).
        var isKept: Bool { length >= 2.0 && !isPhoto }
    }

    /// Whether every use of `file` among `uses` is merged whole: kept, not trimmed, not cut by
    /// --max-duration.
    public static func usesWhole(_ file: String, _ uses: [Use], maxDuration: Double?) -> Bool {
        var position = 0.0
        var whole = false
        for use in uses {
            let cut = maxDuration.map { position + use.length > $0 + 0.05 } ?? false
            let trimmed = use.trim.map { $0.start > 0 || $0.end < use.seconds } ?? false
            if use.file == file {
                if !use.isKept || trimmed || cut { return false }
                whole = true
            }
            if use.isKept { position += use.length }
        }
        return whole
    }

    /// The seconds a complete output of `uses` lasts: what is kept, at most --max-duration.
    public static func expectedSeconds(_ uses: [Use], maxDuration: Double?) -> Double {
        let total = uses.filter(\.isKept).reduce(0.0) { $0 + $1.length }
        return min(total, maxDuration ?? total)
    }
}
