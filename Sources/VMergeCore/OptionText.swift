/// How option values are read as numbers and times, the same on the command line and in job
/// files: strictly, so what a lax parser would also take ("0x1E", " 30") is refused.
extension JobOption {
    /// A number as people write it: digits, one optional point, an optional exponent, an
    /// optional leading minus. Not "0x1E" (which Double reads as 30), "+5", " 30", "nan", "inf".
    package static func isPlainNumber(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.first == "-" { rest = rest.dropFirst() }
        let mantissa = rest.prefix { $0 != "e" && $0 != "E" }
        var exponent = rest.dropFirst(mantissa.count)
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.contains(where: { !$0.isEmpty }),
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } })
        else { return false }
        if exponent.isEmpty { return true }
        exponent = exponent.dropFirst()
        if exponent.first == "-" || exponent.first == "+" { exponent = exponent.dropFirst() }
        return !exponent.isEmpty && exponent.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// A length of time as every duration option reads it: seconds as a plain number (2.5), or
    /// m:ss / h:mm:ss as --trim reads them (1:02.5, 0:00:02); nil for anything else.
    package static func durationSeconds(_ text: String) -> Double? {
        if isPlainNumber(text) { return Double(text) }
        guard text.contains(":"), let micros = try? InputEdit.micros(from: text) else { return nil }
        return Double(micros) / 1e6
    }

    /// `isPlainNumber` for each side of a fraction ("30000/1001", "4:3"), neither negative.
    static func isPlainFraction(_ text: String, separators: Set<Character>) -> Bool {
        let parts = text.split(whereSeparator: { separators.contains($0) }).map(String.init)
        let separatorCount = text.filter { separators.contains($0) }.count
        return (parts.count == 1 && separatorCount == 0 || parts.count == 2 && separatorCount == 1)
            && parts.allSatisfy { isPlainNumber($0) && !$0.hasPrefix("-") }
    }
}
