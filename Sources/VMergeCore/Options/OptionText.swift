import Foundation

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

    /// A time as every door reads one (the duration options, --trim, --settle and the worker's
    /// seconds, a job file's "start"/"end" strings): see `seconds(ofTime:in:)`; nil for anything
    /// else, whatever its range.
    package static func durationSeconds(_ text: String) -> Double? {
        try? seconds(ofTime: text, in: .unbounded)
    }

    /// The one grammar of a time, wherever one is typed: seconds as a plain number (2.5, 1e2; see
    /// `isPlainNumber`), or m:ss / h:mm:ss (1:02.5, 0:01:02) with whole hours and minutes,
    /// minutes after an hour and seconds after a ':' under 60. Nothing around it: " 1" and "1 "
    /// are refused, as every number is (a space is a typing slip or a quoting mistake, and
    /// taking it would make " 1" and "1" two spellings of one job). A number past the range (1e308,
    /// -1) is a time out of range, not "not a time".
    package static func seconds(ofTime text: String, in range: TimeRange) throws(TimeRefusal) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed != text, !trimmed.isEmpty, (try? seconds(ofTime: trimmed, in: .unbounded)) != nil {
            throw .spaced
        }
        var value: Double
        if isPlainNumber(text) {
            value = Double(text) ?? .nan
        } else {
            let fields = text.split(separator: ":", omittingEmptySubsequences: false)
            let whole = { (field: Substring) in !field.isEmpty && field.allSatisfy { $0.isASCII && $0.isNumber } }
            guard (2...3).contains(fields.count), fields.dropLast().allSatisfy(whole), let last = fields.last,
                isPlainNumber(String(last)), !last.contains(where: { "eE-".contains($0) }), let seconds = Double(last)
            else { throw .notATime }
            if seconds >= 60 { throw TimeRefusal(reason: "not a time: seconds after a ':' must be under 60") }
            let leading = fields.dropLast().map { Double($0) ?? .infinity }
            if leading.count == 2 && leading[1] >= 60 {
                throw TimeRefusal(reason: "not a time: minutes after a ':' must be under 60")
            }
            value = seconds + zip(leading.reversed(), [60.0, 3600]).map { $0 * $1 }.reduce(0, +)
        }
        guard range.contains(value) else { throw .outOfRange(range) }
        return value
    }

    /// An option's value read as a time in `range`, refused in the option's words.
    static func time(_ text: String, for option: String, in range: TimeRange) throws(JobOptionError) -> Double {
        do throws(TimeRefusal) {
            return try seconds(ofTime: text, in: range)
        } catch {
            throw error.of(text, option: option)
        }
    }

    /// `isPlainNumber` for each side of a fraction ("30000/1001", "4:3"), neither negative.
    static func isPlainFraction(_ text: String, separators: Set<Character>) -> Bool {
        let parts = text.split(whereSeparator: { separators.contains($0) }).map(String.init)
        let separatorCount = text.filter { separators.contains($0) }.count
        return (parts.count == 1 && separatorCount == 0 || parts.count == 2 && separatorCount == 1)
            && parts.allSatisfy { isPlainNumber($0) && !$0.hasPrefix("-") }
    }
}

/// The seconds a time may be, for its message: "0 to 86400 s", "more than 0, up to 10000000 s".
package struct TimeRange: Sendable, Equatable {
    package var lower: Double
    /// The lower bound itself is refused (a length that must be more than 0).
    package var excludesLower = false
    package var upper: Double
    /// What the upper bound is, in the message ("the longest clip vmerge reads").
    package var why: String?

    package init(_ range: ClosedRange<Double>, excludesLower: Bool = false, why: String? = nil) {
        (lower, upper, self.excludesLower, self.why) = (range.lowerBound, range.upperBound, excludesLower, why)
    }

    package static let unbounded = TimeRange(-Double.infinity...Double.infinity)
    /// A point on a clip's own timeline (--trim, a job file's "start" and "end", the API's).
    package static let inClip = TimeRange(0...Limits.maxClipSeconds, why: "the longest clip vmerge reads")

    package func contains(_ seconds: Double) -> Bool {
        seconds >= lower && seconds <= upper && !(excludesLower && seconds == lower)
    }

    package var description: String {
        let bounds =
            (excludesLower ? "more than \(formatDecimal(lower)), up to " : "\(formatDecimal(lower)) to ")
            + "\(formatDecimal(upper)) s"
        return why.map { "\(bounds), \($0)" } ?? bounds
    }
}

/// Why a typed time is refused, the same words at every door. `reason` has no subject, so a
/// message may name the text first ("'1e308' is out of range (...)", `about(_:)`) or after the
/// option ("invalid value '1e308' for '--max-duration': out of range (...)", `of(_:option:)`).
package struct TimeRefusal: Error, Sendable, Equatable {
    package let reason: String
    package init(reason: String) { self.reason = reason }

    package static let notATime = TimeRefusal(reason: "not a time (seconds such as 1.5, or m:ss such as 1:02.5)")
    package static let spaced = TimeRefusal(reason: "not a time: no spaces around it")
    package static func outOfRange(_ range: TimeRange) -> TimeRefusal {
        TimeRefusal(reason: "out of range (\(range.description))")
    }

    /// "'<text>' is <reason>": a time within a larger value or field.
    package func about(_ text: String) -> JobOptionError { JobOptionError("'\(text)' is \(reason)") }

    /// "invalid value '<text>' for '--<option>': <reason>": an option's whole value.
    package func of(_ text: String, option: String) -> JobOptionError {
        JobOptionError("invalid value '\(text)' for '--\(option)': \(reason)")
    }
}
