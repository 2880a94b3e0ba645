/// The pictures before and after a video packet's in presentation order, from the timestamps of
/// the packets read so far. Decode timestamps never go back and no picture is shown before it is
/// decoded (pts >= dts), so once reading has reached decode time t, no packet still to come holds
/// a picture before t: a packet's neighbours are certain as soon as reading has passed the next
/// one. Anything that breaks those rules (a decode time going back, a missing or repeated
/// timestamp, a picture before its decode time) makes every later answer "not known".
package struct PresentationNeighbours {
    /// Presentation times read, ascending (the oldest dropped beyond `capacity`).
    private var seen: [Int64] = []
    private var lastDecodeTime = Int64.min
    package private(set) var irregular = false
    private let capacity = 4096

    package init() {}

    /// Records a video packet's timestamps (nil: it has none), in decode order.
    package mutating func add(pts: Int64?, dts: Int64?) {
        guard !irregular else { return }
        guard let pts, let dts, dts >= lastDecodeTime, pts >= dts else {
            irregular = true
            return
        }
        lastDecodeTime = dts
        let index = insertionIndex(of: pts)
        if index < seen.count, seen[index] == pts {
            irregular = true
            return
        }
        seen.insert(pts, at: index)
        // Far behind what is being decided (a packet waits at most a few dozen behind reading).
        if seen.count > capacity { seen.removeFirst(capacity / 2) }
    }

    /// The presentation times just before and after `pts` (nil: there is none), or nil while a
    /// packet not yet read could still fall between. After the last packet (`ended`) every
    /// answer is final.
    package func around(_ pts: Int64, ended: Bool) -> (previous: Int64?, next: Int64?)? {
        guard !irregular else { return nil }
        let index = insertionIndex(of: pts)
        guard index < seen.count, seen[index] == pts else { return nil }
        let previous = index > 0 ? seen[index - 1] : nil
        let next = index + 1 < seen.count ? seen[index + 1] : nil
        if ended { return (previous, next) }
        // A packet to come has pts >= its dts >= lastDecodeTime >= next > pts > previous.
        guard let next, lastDecodeTime >= next else { return nil }
        return (previous, next)
    }

    private func insertionIndex(of pts: Int64) -> Int {
        var low = 0, high = seen.count
        while low < high {
            let middle = (low + high) / 2
            if seen[middle] < pts { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
