import Foundation

/// Reads a file at offsets (pread), never past the size it had when opened; or a remote source
/// through its job's reader.
package struct FileBytes {
    package let size: Int64
    /// Reads into the buffer at the offset: the count read, 0 at the end or on a failure.
    private let readAt: (UnsafeMutableRawBufferPointer, Int64) -> Int

    package init(_ file: FileDescriptor) {
        size = Int64(max(0, file.info?.st_size ?? 0))
        readAt = { buffer, offset in max(0, pread(file.raw, buffer.baseAddress, buffer.count, off_t(offset))) }
    }

    /// The bytes of an object in a bucket or an https resource, as the job's reader holds them
    /// (a failed read reads as the end: each walk says what a short read means).
    package init(_ source: any RandomAccessSource) {
        size = source.size
        readAt = { buffer, offset in (try? source.read(into: buffer, at: offset)) ?? 0 }
    }

    /// Up to `count` bytes at `offset` (fewer at the end of the file).
    package func read(_ offset: Int64, _ count: Int) -> [UInt8] {
        guard offset >= 0, offset < size, count > 0 else { return [] }
        let wanted = Int(min(Int64(count), size - offset))
        var buffer = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            let got = buffer.withUnsafeMutableBytes {
                readAt(UnsafeMutableRawBufferPointer(rebasing: $0[done...]), offset + Int64(done))
            }
            if got <= 0 { break }
            done += got
        }
        return Array(buffer.prefix(done))
    }

    /// Whether every byte of `range` is zero (padding that holds nothing), read in 1 MiB steps.
    package func isZero(_ range: Range<Int64>) -> Bool {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let chunk = read(offset, Int(min(1 << 20, range.upperBound - offset)))
            guard !chunk.isEmpty, chunk.allSatisfy({ $0 == 0 }) else { return false }
            offset += Int64(chunk.count)
        }
        return true
    }

    /// An MP4/QuickTime box header at `offset`: its type, its size (a 64-bit size read, a size of
    /// 0 reaching to `end`) and the header's own length; nil where no whole header is. The size
    /// is not checked against anything: each reader says what a size past its bounds means.
    package func boxHeader(at offset: Int64, endingBy end: Int64) -> (type: [UInt8], size: UInt64, headerSize: Int64)? {
        let header = read(offset, 16)
        guard header.count >= 8, end - offset >= 8 else { return nil }
        var size = FileBytes.number(header, 0, 4)
        var headerSize: Int64 = 8
        if size == 1 {
            guard header.count >= 16 else { return nil }
            size = FileBytes.number(header, 8, 8)
            headerSize = 16
        } else if size == 0 {
            size = UInt64(end - offset)
        }
        return (Array(header[4..<8]), size, headerSize)
    }

    /// A big-endian unsigned number of `count` bytes (up to 8) from `bytes` at `index`.
    package static func number(_ bytes: [UInt8], _ index: Int, _ count: Int) -> UInt64 {
        guard index >= 0, index + count <= bytes.count else { return 0 }
        return bytes[index..<(index + count)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
