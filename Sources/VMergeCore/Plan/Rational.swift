/// An exact fraction, used for frame rates, aspect ratios and time bases.
package struct Rational: Hashable, Sendable, CustomStringConvertible {
    package var num: Int
    package var den: Int

    package init(_ num: Int, _ den: Int) {
        self.num = num
        self.den = den
    }

    /// num/den in lowest terms with a positive denominator; nil when `den` is 0 or the result
    /// does not fit Int (only -Int.min, as in Int.min / -1). Never traps.
    package init?(reducing num: Int, _ den: Int) {
        guard den != 0 else { return nil }
        // In magnitudes, where Int.min is 2^63 and nothing overflows.
        let g = Rational.gcd(num.magnitude, den.magnitude)
        let n = num.magnitude / g, d = den.magnitude / g
        guard let positiveDen = Int(exactly: d) else { return nil }
        let negative = (num < 0) != (den < 0) && n != 0
        if negative {
            guard n <= Int.min.magnitude else { return nil }
            self.init(n == Int.min.magnitude ? Int.min : -Int(n), positiveDen)
        } else {
            guard let positiveNum = Int(exactly: n) else { return nil }
            self.init(positiveNum, positiveDen)
        }
    }

    package var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
    package var isPositive: Bool { num > 0 && den > 0 }
    package var description: String { den == 1 ? "\(num)" : "\(num)/\(den)" }

    /// Reduced num and den as FFmpeg's AVRational holds them (32 bits each), or nil when they
    /// do not fit there.
    package var int32Parts: (num: Int32, den: Int32)? {
        let r = reduced
        guard let num = Int32(exactly: r.num), let den = Int32(exactly: r.den) else { return nil }
        return (num, den)
    }

    /// Whether num and den, reduced, fit FFmpeg's 32-bit AVRational.
    package var fitsInt32: Bool { int32Parts != nil }

    /// Parses "30", "29.97", "30000/1001" (and "4:3" when `separators` includes ":"). A fraction
    /// is reduced ("60/2" is 30); a zero denominator, or a value that does not fit, is nil.
    package init?(parsing text: String, separators: Set<Character> = ["/"]) {
        if let sep = text.firstIndex(where: { separators.contains($0) }) {
            guard let n = Int(text[..<sep]), let d = Int(text[text.index(after: sep)...]) else { return nil }
            self.init(reducing: n, d)
            return
        }
        if let whole = Int(text) {
            self.init(whole, 1)
            return
        }
        guard let value = Double(text) else { return nil }
        self.init(rate: value)
    }

    /// A frame rate given as a decimal (the Swift API's, or "29.97" on the command line): 29.97
    /// means the NTSC rate 30000/1001, as players and ffmpeg treat it; otherwise thousandths.
    /// Nil for what is no rate at all (not finite, or beyond what Int holds, "1e300").
    package init?(rate value: Double) {
        guard value.isFinite else { return nil }
        for (n, d) in [(24000, 1001), (30000, 1001), (60000, 1001)]
        where abs(value - Double(n) / Double(d)) < 0.005 {
            self.init(n, d)
            return
        }
        guard let thousandths = Int(exactly: (value * 1000).rounded()) else { return nil }
        self.init(reducing: thousandths, 1000)
    }

    /// In lowest terms with a positive denominator. Never traps: a zero denominator gives
    /// ±1/0 (0/0 stays 0/0), and a value Int cannot hold (Int.min / -1) comes back unchanged.
    package var reduced: Rational {
        if den == 0 { return Rational(num.signum(), 0) }
        return Rational(reducing: num, den) ?? self
    }

    private static func gcd(_ a: UInt, _ b: UInt) -> UInt {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
