import Foundation

/// Reads the top-level box names of an MP4/QuickTime file, to check the layout vmerge wrote
/// rather than assume it.
package enum MP4Layout {
    package static func topLevelBoxes(_ path: String) -> [String] {
        (try? SafeFile.openForReading(path)).map(topLevelBoxes) ?? []
    }

    package static func topLevelBoxes(_ file: FileDescriptor) -> [String] {
        let bytes = FileBytes(file)
        var offset: Int64 = 0
        var names: [String] = []
        // A box cut off by the end of the file is still named (a recording stopped mid-mdat).
        while names.count < 64, let header = bytes.boxHeader(at: offset, endingBy: bytes.size) {
            names.append(String(decoding: header.type, as: UTF8.self))
            guard header.size >= UInt64(header.headerSize), header.size <= UInt64(bytes.size - offset) else { break }
            offset += Int64(header.size)
        }
        return names
    }

    /// Whether the file is whole: its top-level boxes end exactly where the file ends (a file cut
    /// short, say by a full disk or a copy that stopped, is not, even with its index intact).
    package static func isWhole(_ path: String) -> Bool {
        guard let file = try? SafeFile.openForReading(path, followLinks: false) else { return false }
        let bytes = FileBytes(file)
        var offset: Int64 = 0
        while offset < bytes.size {
            guard let header = bytes.boxHeader(at: offset, endingBy: bytes.size),
                header.size >= UInt64(header.headerSize), header.size <= UInt64(bytes.size - offset)
            else { return false }
            offset += Int64(header.size)
        }
        return bytes.size > 0
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
