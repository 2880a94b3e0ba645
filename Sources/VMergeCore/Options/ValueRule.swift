import Foundation

/// What a job option's value may be, as a value: the one rule that the text of every door (the
/// command line, a job file, a queue spec) is read against and that the Swift API's typed
/// properties are checked by, with the words that say it in a refusal ("expected ...").
package struct ValueRule<Value: Sendable>: Sendable {
    package let expected: String
    private let test: @Sendable (Value) -> Bool

    package init(expected: String, _ test: @escaping @Sendable (Value) -> Bool) {
        self.expected = expected
        self.test = test
    }

    package func accepts(_ value: Value) -> Bool { test(value) }
}

extension ValueRule where Value == Int {
    package static let width = ValueRule(expected: "an even number from 16 to 7680") {
        (16...7680).contains($0) && $0 % 2 == 0
    }
    /// A picture's pixels: at most 65536 x 65536.
    package static let maxPixels = ValueRule(expected: "WxH such as 4096x4096") { (1...(1 << 32)).contains($0) }
}

extension ValueRule where Value == Rational {
    /// Of the reduced ratio, whose terms end up in 32-bit FFmpeg fields.
    package static let aspect = ValueRule(expected: "w:h such as 4:3, from 1:10 to 10:1") {
        $0.isPositive && $0.num <= 10_000 && $0.den <= 10_000 && (0.1...10).contains($0.doubleValue)
    }
    /// Of the reduced rate (3000000000/100000000 is 30), which must fit the encoder's time base.
    package static let frameRate = ValueRule(expected: "a rate from 1 to 240") {
        $0.isPositive && $0.num <= 1_000_000 && $0.den <= 1_000_000 && (1...240).contains($0.doubleValue)
    }
}

extension ValueRule where Value == Double {
    /// x264 takes fractions; more than two places is noise, and keeps the key readable.
    package static let crf = ValueRule(expected: "a number from 0 to 51, such as 20") {
        (0...51).contains($0) && ($0 * 100).rounded() == $0 * 100
    }
    package static let loudness = ValueRule(expected: "LUFS from -70 to -1, such as -16") { (-70...(-1)).contains($0) }
}

extension ValueRule where Value == Int64 {
    /// Below this not even the index of a one-second file fits; the top is what `ByteSize` reads.
    package static let maxSize = ValueRule(expected: "a size of at least 16K, such as 500K, 160M or 2G") {
        $0 >= 16 * 1024 && $0 < ByteSize.largest
    }
    package static let minFree = ValueRule(expected: "a size such as 1M or 2G") { $0 >= 0 && $0 < ByteSize.largest }
}

extension ValueRule where Value == String {
    /// A name beside the output, never a path: no folder, not hidden.
    package static let posterName = ValueRule(
        expected: "a file name ending in '.jpg' or '.jpeg' (it is written beside the output)"
    ) { text in
        let lower = text.lowercased()
        return !text.contains("/") && !text.hasPrefix(".") && (lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg"))
            && FileName.bytes(of: text).count <= 255  // NAME_MAX, in the name's bytes on disk
    }
}

extension TimeRange {
    /// --min-duration and --poster-at.
    package static let anyLength = TimeRange(0...MergeOptions.longestDuration)
    /// --max-duration: a length, more than 0.
    package static let someLength = TimeRange(0...MergeOptions.longestDuration, excludesLower: true)
}
