import Foundation

/// When a clip was recorded, as its container says: the moment, and how finely the container
/// gives it, to choose between the clocks one file may carry (`--sort recorded`).
package struct RecordingTime: Sendable, Equatable {
    /// Microseconds since 1970-01-01 UTC.
    package var micros: Int64
    /// Digits of a second the source gives (0: whole seconds).
    package var precision: Int
    /// The tag it was read from ("creation_time", "com.apple.quicktime.creationdate").
    package var tag: String

    package init(micros: Int64, precision: Int, tag: String) {
        (self.micros, self.precision, self.tag) = (micros, precision, tag)
    }

    /// Reads ISO 8601 as containers write it: "2024-05-01T08:00:03Z", "...03.123456Z",
    /// "2024-05-01T10:00:03+0200", "+02:00"; without a zone, UTC (what `creation_time` means).
    /// `precision` overrides the digits the text shows: FFmpeg prints an MP4 header's whole
    /// seconds with six. nil for anything else, and for dates before 1970 (a header left at 0).
    package init?(iso text: String, tag: String, precision: Int? = nil) {
        let scalars = Array(text.utf8)
        var at = 0
        func number(_ digits: Int) -> Int? {
            guard at + digits <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[at..<at + digits] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            at += digits
            return value
        }
        /// Steps over one of the characters in `allowed`.
        func skip(_ allowed: String) -> Bool {
            guard at < scalars.count, allowed.utf8.contains(scalars[at]) else { return false }
            at += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2),
            skip("T "), let hour = number(2), skip(":"), let minute = number(2), skip(":"),
            let second = number(2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61, year >= 1970
        else { return nil }
        var micros = Int64(RecordingTime.days(year: year, month: month, day: day)) * 86_400_000_000
        micros += Int64(hour * 3600 + minute * 60 + second) * 1_000_000
        var digits = 0
        if skip(".") {
            var scale: Int64 = 100_000
            while at < scalars.count, (48...57).contains(scalars[at]) {
                micros += Int64(scalars[at] - 48) * scale
                scale /= 10
                digits += 1
                at += 1
            }
            guard digits > 0 else { return nil }
        }
        if at < scalars.count {
            if skip("Z") {
            } else {
                guard let sign: Int64 = skip("+") ? 1 : skip("-") ? -1 : nil, let zoneHours = number(2) else {
                    return nil
                }
                _ = skip(":")
                guard let zoneMinutes = number(2), zoneHours < 24, zoneMinutes < 60 else { return nil }
                // Local time minus its offset is UTC.
                micros -= sign * Int64(zoneHours * 60 + zoneMinutes) * 60_000_000
            }
        }
        guard at == scalars.count else { return nil }
        self.init(micros: micros, precision: precision ?? digits, tag: tag)
    }

    /// Days from 1970-01-01 to a civil date (Howard Hinnant's days_from_civil).
    private static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The most precise of `candidates`; of equally precise ones the first (callers list the
    /// clock that carries its own time zone first).
    package static func best(_ candidates: [RecordingTime?]) -> RecordingTime? {
        candidates.compactMap { $0 }.enumerated().max { a, b in
            a.element.precision != b.element.precision ? a.element.precision < b.element.precision : a.offset > b.offset
        }?.element
    }

    /// "2024-05-01T08:00:03Z", or with its fraction ("...03.250Z") when the source gives one.
    package var text: String {
        let seconds = micros / 1_000_000, fraction = micros % 1_000_000
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        var text = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
            c.second ?? 0)
        if precision > 0 {
            text += "." + String(String(format: "%06d", Int(fraction)).prefix(min(6, precision)))
        }
        return text + "Z"
    }
}

extension InputList {
    /// `inputs` oldest recording first (`--sort recorded`), by name where two times are the same;
    /// those whose container gives no time after them, by name; and which those were.
    package static func sorted(_ inputs: [JobInput], recorded time: (FileName) -> RecordingTime?)
        -> (inputs: [JobInput], untimed: [FileName])
    {
        // Each file read once, however often it is named.
        var micros: [FileName: Int64?] = [:]
        for input in inputs where micros[input.path] == nil { micros[input.path] = .some(time(input.path)?.micros) }
        let byName = naturallySorted(inputs) { $0.path.escaped }
        // Stable on the name order (its index breaks ties): equal times stay by name.
        let timed = byName.enumerated().compactMap { index, input in
            micros[input.path].flatMap { $0 }.map { (at: $0, index: index, input: input) }
        }
        let ordered = timed.sorted { ($0.at, $0.index) < ($1.at, $1.index) }.map(\.input)
        let untimed = byName.filter { micros[$0.path].flatMap { $0 } == nil }
        var said = Set<FileName>()
        return (ordered + untimed, untimed.map(\.path).filter { said.insert($0).inserted })
    }
}
