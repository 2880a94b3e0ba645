/// An exact fraction, used for frame rates, aspect ratios and time bases.
public struct Rational: Hashable, Sendable, CustomStringConvertible {
    public var num: Int
    public var den: Int

    public init(_ num: Int, _ den: Int) {
        self.num = num
        self.den = den
    }

    public var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
    public var isPositive: Bool { num > 0 && den > 0 }
    public var description: String { den == 1 ? "\(num)" : "\(num)/\(den)" }

    /// Parses "30", "29.97", "30000/1001" (and "4:3" when `separators` includes ":").
    public init?(parsing text: String, separators: Set<Character> = ["/"]) {
        if let sep = text.firstIndex(where: { separators.contains($0) }) {
            guard let n = Int(text[..<sep]), let d = Int(text[text.index(after: sep)...]), d != 0
            else { return nil }
            self.init(n, d)
            return
        }
        if let whole = Int(text) {
            self.init(whole, 1)
            return
        }
        guard let value = Double(text), value.isFinite else { return nil }
        // Decimal rates: 29.97 means the NTSC rate 30000/1001, as players and ffmpeg treat it.
        for (n, d) in [(24000, 1001), (30000, 1001), (60000, 1001)]
        where abs(value - Double(n) / Double(d)) < 0.005 {
            self.init(n, d)
            return
        }
        self.init(Int((value * 1000).rounded()), 1000)
        self = reduced
    }

    public var reduced: Rational {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? abs(a) : gcd(b, a % b) }
        let g = gcd(num, den)
        return g == 0 ? self : Rational(num / g, den / g)
    }
}
