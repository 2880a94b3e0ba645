import Foundation

/// Who holds each byte of a container file, as its own small walk of boxes (MP4, QuickTime),
/// elements (Matroska) or packets (MPEG-TS) reads it: the container's structure (headers, the
/// index, padding that holds nothing, short descriptive tags), media data whose bytes only its
/// samples can account for, the payload of a track the output does not carry, or something no
/// output holds. --delete-sources deletes a file only when every byte is structure or lies in a
/// shown sample of a stream the output carries whole (see `ByteAccount` in VMergeAV).
///
/// Structure is measured, not trusted by name: a table box is as long as its entries, a header
/// as its fields, padding holds only fill, a transport packet's stuffing is 0xFF; a byte past
/// what the walk reads is "nothing". What is read but not taken apart (codec set-up, handler
/// names, descriptive tags: short text or numbers saying when, where, with which camera) is
/// "description": the output carries its first clip's, and a file's description counts as
/// structure only while it stays within `descriptionBudget`, what a recording's takes, so no
/// volume of data passes as a header. Binary tags (cover art, a maker's data), boxes and
/// elements not known here, data in padding and bytes past the last box are "nothing": they
/// keep the file.
package struct ContainerMap: Sendable {
    package enum Holder: Sendable, Equatable {
        /// Headers and the index as measured, fill.
        case structure
        /// Read but not taken apart: codec set-up, handler names, descriptive tags (see
        /// `descriptionBudget`); what and where, as a phrase ("in a 'hdlr' box in moov/trak").
        case description(String)
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
        /// Where each sample the output carries starts, as the demuxer gives its position: a
        /// Matroska block's payload, the transport packet that starts a PES packet. A block or a
        /// PES is carried by what was read from it, not by its track number (which the
        /// demuxer does not keep) or its PID (which may hold PES packets the demuxer skips).
        package var sampleStarts: Set<Int64> = []

        package init(pids: Set<Int64> = [], sampleStarts: Set<Int64> = []) {
            self.pids = pids
            self.sampleStarts = sampleStarts
        }
    }

    /// The most description a file may have for it to count as structure: a phone's codec
    /// set-up, handler names and tags take a few KiB.
    package static let descriptionBudget: Int64 = 64 * 1024

    /// Walks a file's bytes; the payload of what `carried` names is accounted for here.
    package static func walk(_ bytes: FileBytes, as family: Family, carried: Carried) -> ContainerMap {
        var map: ContainerMap
        switch family {
        case .isoBMFF: map = BoxWalk(bytes).walk()
        case .matroska: map = EBMLWalk(bytes, carried: carried.sampleStarts).walk()
        case .transportStream: map = TransportStreamWalk(bytes, carried: carried).walk()
        }
        map.settleDescription()
        return map
    }

    /// Description within the budget is structure. Past it, the largest parts are held by no
    /// output until what is left fits: a 100 KB handler name is data, the brands beside it are
    /// not.
    private mutating func settleDescription() {
        var described = regions.indices.filter { if case .description = regions[$0].holder { true } else { false } }
        var total = described.reduce(Int64(0)) { $0 + Int64(regions[$1].range.count) }
        described.sort { regions[$0].range.count > regions[$1].range.count }
        for index in described {
            guard case let .description(what) = regions[index].holder else { continue }
            if total > ContainerMap.descriptionBudget {
                total -= Int64(regions[index].range.count)
                regions[index].holder = .nothing(
                    "\(what) (headers and tags past the \(ContainerMap.descriptionBudget / 1024) KiB a recording's take)"
                )
            } else {
                regions[index].holder = .structure
            }
        }
    }
}
