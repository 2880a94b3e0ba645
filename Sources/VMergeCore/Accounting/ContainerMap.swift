import Foundation

/// Who holds each byte of a container file, as its own small walk of boxes (MP4, QuickTime),
/// elements (Matroska) or packets (MPEG-TS) reads it: the container's structure (headers, the
/// index, padding that holds nothing, short descriptive tags), media data whose bytes only its
/// samples can account for, the payload of a track the output does not carry, or something no
/// output holds. --delete-sources deletes a file only when every byte is structure or lies in a
/// shown sample of a stream the output carries whole (see `ByteAccount` in VMergeAV).
///
/// Descriptive tags (short text or numbers: when, where, with which camera) count as structure:
/// they describe the recording rather than record anything, and the output carries its first
/// clip's. Binary tags (cover art, a maker's data), boxes and elements not known here, data in
/// padding and bytes past the last box are "nothing": they keep the file.
package struct ContainerMap: Sendable {
    package enum Holder: Sendable, Equatable {
        /// Headers, the index, empty padding, descriptive tags.
        case structure
        /// Media data (an MP4 `mdat`'s payload): accounted for only by the samples in it.
        case samples
        /// The payload of a container track the output does not carry (a Matroska track
        /// number, an MPEG-TS PID).
        case track(Int64)
        /// A Matroska block of a track the output does not carry (its track number).
        case block(Int64)
        /// Held by no output: what and where, as a phrase ("after the last box").
        case nothing(String)
    }

    package struct Region: Sendable, Equatable {
        package var range: Range<Int64>
        package var holder: Holder
    }

    package private(set) var regions: [Region] = []

    package init() {}

    /// Adds a region, merging it into the one before when it continues it with the same holder
    /// (a transport stream is a million packets, most of them carried).
    package mutating func add(_ range: Range<Int64>, _ holder: Holder) {
        guard !range.isEmpty else { return }
        if let last = regions.last, last.holder == holder, last.range.upperBound == range.lowerBound {
            regions[regions.count - 1].range = last.range.lowerBound..<range.upperBound
        } else {
            regions.append(Region(range: range, holder: holder))
        }
    }

    /// The containers walked here, by FFmpeg's demuxer name; nil for one that is not.
    package enum Family: Sendable {
        case isoBMFF, matroska, transportStream

        package init?(demuxer name: String) {
            if name.hasPrefix("mov,") {
                self = .isoBMFF
            } else if name.hasPrefix("matroska") {
                self = .matroska
            } else if name == "mpegts" {
                self = .transportStream
            } else {
                return nil
            }
        }
    }

    /// What of a container the output carries, as the demuxer read it.
    package struct Carried: Sendable {
        /// MPEG-TS PIDs of the streams the output carries.
        package var pids: Set<Int64> = []
        /// Where the payload of each Matroska block the output carries starts (the demuxer's
        /// packet position): a block is carried by what was read from it, not by its track
        /// number, which the demuxer does not keep.
        package var blocks: Set<Int64> = []

        package init(pids: Set<Int64> = [], blocks: Set<Int64> = []) {
            self.pids = pids
            self.blocks = blocks
        }
    }

    /// Walks `file`; the payload of what `carried` names is accounted for here.
    package static func walk(_ file: FileDescriptor, as family: Family, carried: Carried) -> ContainerMap {
        let bytes = FileBytes(file)
        switch family {
        case .isoBMFF: return BoxWalk(bytes).walk()
        case .matroska: return EBMLWalk(bytes, carried: carried.blocks).walk()
        case .transportStream: return TransportStreamWalk(bytes, carried: carried.pids).walk()
        }
    }
}

/// Reads a file at offsets (pread), never past the size it had when opened.
package struct FileBytes {
    package let file: FileDescriptor
    package let size: Int64

    package init(_ file: FileDescriptor) {
        self.file = file
        size = Int64(max(0, file.info?.st_size ?? 0))
    }

    /// Up to `count` bytes at `offset` (fewer at the end of the file).
    package func read(_ offset: Int64, _ count: Int) -> [UInt8] {
        guard offset >= 0, offset < size, count > 0 else { return [] }
        let wanted = Int(min(Int64(count), size - offset))
        var buffer = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            let got = buffer.withUnsafeMutableBytes {
                pread(file.raw, $0.baseAddress! + done, wanted - done, off_t(offset + Int64(done)))
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

    /// A big-endian unsigned number of `count` bytes (up to 8) from `bytes` at `index`.
    package static func number(_ bytes: [UInt8], _ index: Int, _ count: Int) -> UInt64 {
        guard index >= 0, index + count <= bytes.count else { return 0 }
        return bytes[index..<(index + count)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
