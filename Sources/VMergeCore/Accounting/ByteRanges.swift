import Foundation

/// Byte ranges of one file, sorted and merged: the part of a source --delete-sources has
/// accounted for (see `ContainerMap` and `ByteAccount`).
package struct ByteRanges: Sendable, Equatable {
    package private(set) var ranges: [Range<Int64>]

    /// Sorts and merges `ranges` once (a file's samples come in any order, and a sample table
    /// may list the same bytes twice).
    package init(_ ranges: [Range<Int64>] = []) {
        var merged: [Range<Int64>] = []
        for range in ranges.filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        self.ranges = merged
    }

    /// The parts of `range` that no range here covers, in order.
    package func gaps(in range: Range<Int64>) -> [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        var cursor = range.lowerBound
        // The first range that ends after the start: a binary search, as a file may hold a
        // million samples.
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound <= cursor { low = middle + 1 } else { high = middle }
        }
        for covered in ranges[low...] {
            if covered.lowerBound >= range.upperBound { break }
            if covered.lowerBound > cursor { gaps.append(cursor..<covered.lowerBound) }
            cursor = max(cursor, covered.upperBound)
            if cursor >= range.upperBound { break }
        }
        if cursor < range.upperBound { gaps.append(cursor..<range.upperBound) }
        return gaps
    }

    /// Whether any range here overlaps `range`.
    package func overlaps(_ range: Range<Int64>) -> Bool { gaps(in: range) != [range] }

    package var byteCount: Int64 { ranges.reduce(0) { $0 + Int64($1.count) } }

    /// "bytes 1,234,567-1,434,566": first and last byte, counted from 0, as a person reads them.
    package static func text(_ range: Range<Int64>) -> String {
        let last = range.upperBound - 1
        return range.count == 1 ? "byte \(grouped(range.lowerBound))" : "bytes \(grouped(range.lowerBound))-\(grouped(last))"
    }

    /// 1234567 as "1,234,567".
    package static func grouped(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return value < 0 ? "-" + text : text
    }
}
