import Foundation

/// Reads the top-level box names of an MP4/QuickTime file, to check the layout vmerge wrote
/// rather than assume it.
public enum MP4Layout {
    public static func topLevelBoxes(_ path: String) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        var offset: UInt64 = 0
        var names: [String] = []
        while offset + 8 <= size, names.count < 64 {
            try? handle.seek(toOffset: offset)
            guard let header = try? handle.read(upToCount: 16), header.count >= 8 else { break }
            let bytes = [UInt8](header)
            var boxSize = bytes[0..<4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if boxSize == 1, bytes.count >= 16 {
                boxSize = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            } else if boxSize == 0 {
                boxSize = size - offset
            }
            names.append(String(decoding: bytes[4..<8], as: UTF8.self))
            guard boxSize >= 8 else { break }
            offset += boxSize
        }
        return names
    }

    /// Whether the index (moov) comes before the media data (mdat): the file can start
    /// playing before it has downloaded.
    public static func isFaststart(_ path: String) -> Bool {
        let boxes = topLevelBoxes(path)
        guard let moov = boxes.firstIndex(of: "moov"), let mdat = boxes.firstIndex(of: "mdat") else { return false }
        return moov < mdat
    }
}
