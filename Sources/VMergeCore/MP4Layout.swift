import Foundation

/// Reads the top-level box names of an MP4/QuickTime file, to check the layout vmerge wrote
/// rather than assume it.
package enum MP4Layout {
    package static func topLevelBoxes(_ path: String) -> [String] {
        (try? SafeFile.openForReading(path)).map(topLevelBoxes) ?? []
    }

    package static func topLevelBoxes(_ file: FileDescriptor) -> [String] {
        let size = UInt64(max(0, file.info?.st_size ?? 0))
        var offset: UInt64 = 0
        var names: [String] = []
        while offset + 8 <= size, names.count < 64 {
            var bytes = [UInt8](repeating: 0, count: 16)
            let count = bytes.withUnsafeMutableBytes { pread(file.raw, $0.baseAddress, 16, off_t(offset)) }
            guard count >= 8 else { break }
            bytes = Array(bytes.prefix(count))
            var boxSize = bytes[0..<4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if boxSize == 1, bytes.count >= 16 {
                boxSize = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            } else if boxSize == 0 {
                boxSize = size - offset
            }
            names.append(String(decoding: bytes[4..<8], as: UTF8.self))
            guard boxSize >= 8, boxSize <= size - offset else { break }
            offset += boxSize
        }
        return names
    }

    /// Whether the file is whole: its top-level boxes end exactly where the file ends (a file cut
    /// short, say by a full disk or a copy that stopped, is not, even with its index intact).
    package static func isWhole(_ path: String) -> Bool {
        guard let file = try? SafeFile.openForReading(path, followLinks: false) else { return false }
        let size = UInt64(max(0, file.info?.st_size ?? 0))
        var offset: UInt64 = 0
        while offset + 8 <= size {
            var bytes = [UInt8](repeating: 0, count: 16)
            let count = bytes.withUnsafeMutableBytes { pread(file.raw, $0.baseAddress, 16, off_t(offset)) }
            guard count >= 8 else { return false }
            var boxSize = bytes[0..<4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if boxSize == 1 {
                guard count >= 16 else { return false }
                boxSize = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            } else if boxSize == 0 {
                boxSize = size - offset
            }
            guard boxSize >= 8, boxSize <= size - offset else { return false }
            offset += boxSize
        }
        return offset == size && size > 0
    }

    /// Whether the index (moov) comes before the media data (mdat): the file can start
    /// playing before it has downloaded.
    package static func isFaststart(_ path: String) -> Bool {
        (try? SafeFile.openForReading(path)).map(isFaststart) ?? false
    }

    package static func isFaststart(_ file: FileDescriptor) -> Bool {
        let boxes = topLevelBoxes(file)
        guard let moov = boxes.firstIndex(of: "moov"), let mdat = boxes.firstIndex(of: "mdat") else { return false }
        return moov < mdat
    }
}
