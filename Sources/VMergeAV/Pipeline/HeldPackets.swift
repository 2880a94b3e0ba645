import CFFmpeg
import VMergeCore

/// Packets of a clip whose unshown pictures may go undecoded: each video packet waits, with
/// whatever was read after it, until its picture's neighbours in presentation order are known,
/// then is decided: decoded, or only counted when the output does not show its picture and
/// nothing references it (`PictureSkipping`).
struct HeldPackets {
    private var skipping: PictureSkipping
    private let videoIndex: Int32
    /// Read but not yet handled, in file order.
    private var held: [Packet] = []
    private var neighbours = PresentationNeighbours()
    /// How far reading may run ahead of handling; a packet whose neighbours are not known by
    /// then is decoded.
    static let readAhead = 64

    init(_ skipping: PictureSkipping, videoIndex: Int32) {
        self.skipping = skipping
        self.videoIndex = videoIndex
    }

    /// Takes a packet read (moving its contents: `packet` may be reused).
    mutating func add(_ packet: Packet) throws {
        let taken = try Packet()
        av_packet_move_ref(taken.pointer, packet.pointer)
        if taken.pointer.pointee.stream_index == videoIndex {
            skipping.observe(taken.pointer)
            let (pts, dts) = (taken.pointer.pointee.pts, taken.pointer.pointee.dts)
            neighbours.add(pts: pts == noPTS ? nil : pts, dts: dts == noPTS ? nil : dts)
        }
        held.append(taken)
    }

    /// The first packet held, if it can be decided now, and whether to skip it; at the end of
    /// the file (`ended`) every one can. `canDecide`: whether the clip's time zero is known;
    /// `shows`: whether the output shows the picture at a timestamp, given its neighbours'.
    mutating func next(
        ended: Bool, canDecide: Bool, shows: (Int64, (previous: Int64?, next: Int64?)) -> Bool
    ) -> (packet: Packet, skip: Bool)? {
        guard let head = held.first else { return nil }
        var skip = false
        if head.pointer.pointee.stream_index == videoIndex, canDecide {
            let pts = head.pointer.pointee.pts
            if pts != noPTS, let around = neighbours.around(pts, ended: ended) {
                skip = !shows(pts, around) && skipping.isUnreferenced(head.pointer)
            } else if !ended && !neighbours.irregular && held.count < HeldPackets.readAhead {
                return nil  // read on until its neighbours are known
            }
        }
        held.removeFirst()
        return (head, skip)
    }

    /// Drops what is held (reading stopped: nothing further is used).
    mutating func clear() { held = [] }
}
