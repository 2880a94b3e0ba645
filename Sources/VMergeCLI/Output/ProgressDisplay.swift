import Foundation
import VMergeCore

/// Shows a run's progress one of the `--progress` ways.
protocol ProgressDisplay: AnyObject {
    func show(_ progress: MergeProgress)
    /// The run is over (whatever the outcome): leave the terminal tidy.
    func end()
}

enum ProgressDisplays {
    /// The display for `mode`: on `fd` if given, else on stderr through `printer`. auto is a bar
    /// on a terminal and plain lines otherwise; quiet turns auto off.
    static func make(
        mode: ProgressMode, fd: Int32?, verbosity: Verbosity, console: Console, printer: MessagePrinter
    ) -> ProgressDisplay? {
        let isTerminal = fd.map { isatty($0) == 1 } ?? console.errorIsTerminal
        let writeLine: (String) -> Void = fd.map { fd in { writeAll(fd, $0 + "\n") } } ?? { printer.line($0) }
        switch mode {
        case .none: return nil
        case .auto:
            if verbosity == .quiet { return nil }
            return isTerminal ? bar(fd: fd, console: console, printer: printer) : PlainProgress(writeLine: writeLine)
        case .bar: return bar(fd: fd, console: console, printer: printer)
        case .plain: return PlainProgress(writeLine: writeLine)
        case .json: return JSONProgress(writeLine: writeLine)
        }
    }

    private static func bar(fd: Int32?, console: Console, printer: MessagePrinter) -> ProgressDisplay {
        if let fd {
            let line = StatusLine(width: TerminalWidth(fd: fd, environment: console.environment))
            return BarProgress(columns: { line.width.columns }) { writeAll(fd, line.replace(with: $0)) }
        }
        let width = printer.statusWidth
        return BarProgress(columns: { width.columns }) { printer.status($0) }
    }
}

/// "1:05", "12:00:03": durations for people.
func clockTime(_ seconds: Double) -> String {
    // Never traps: an estimate from a speed near 0 can be huge or infinite.
    let total = seconds.isFinite ? Int(min(max(seconds, 0), 1e9).rounded()) : 0
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
    return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
}

/// What the bar and plain lines say: "42%", "clip 3/10", "0:10" (elapsed), "1.2 MiB" (written so
/// far), "ETA 0:12", "4.1x", "b.mov".
struct ProgressFields: Equatable {
    var percent: String
    var position: String
    var elapsed: String?
    var size: String?
    var eta: String?
    var speed: String?
    var name: String?

    /// The batch's total line: its percent, jobs, time so far and ETA.
    init(percent: String, position: String, elapsed: String?, eta: String?) {
        (self.percent, self.position, self.elapsed, self.eta) = (percent, position, elapsed, eta)
    }

    init(_ p: MergeProgress) {
        switch p.phase {
        case .probing:
            percent = "  0%"
            position = "probing \(p.item)/\(p.itemCount)"
            name = shortName(p.file)
        case .encoding, .done:
            percent = String(format: "%3.0f%%", (p.fraction * 100).rounded(.down))
            position = "clip \(p.item)/\(p.itemCount)"
            elapsed = clockTime(p.elapsedSeconds)
            size = p.outputBytes > 0 ? ByteSize.format(p.outputBytes) : nil
            speed = p.speed.map { String(format: "%.1fx", $0) }
            if p.phase == .encoding {
                eta = p.etaSeconds.map { "ETA \(clockTime($0))" }
                name = shortName(p.file)
            }
        }
        if name?.isEmpty == true { name = nil }
    }

    /// Everything after the percent, two spaces apart.
    var detail: String { [position, elapsed, size, eta, speed, name].compactMap { $0 }.joined(separator: "  ") }
}

private func shortName(_ path: String?) -> String? {
    guard let path else { return "" }
    return FileName(path).lastComponent.description
}

/// `name` in at most `width` characters: its start and its end (the extension, the counter a
/// phone adds) around a "…".
func shortened(_ name: String, to width: Int) -> String? {
    if name.count <= width { return name }
    guard width >= 8 else { return nil }
    let tail = (width - 1) / 2, head = width - 1 - tail
    return String(name.prefix(head)) + "…" + String(name.suffix(tail))
}

/// One self-updating line: percent, a bar, clip i/n, elapsed time, bytes written, ETA, speed and
/// the clip's name, as many as the terminal's width allows now (read again after every resize,
/// and every second). Redrawn at most five times a second.
final class BarProgress: ProgressDisplay {
    private let columns: () -> Int
    private let draw: (String?) -> Void
    private var lastDraw = Date.distantPast

    init(columns: @escaping () -> Int, draw: @escaping (String?) -> Void) {
        self.columns = columns
        self.draw = draw
    }

    func show(_ p: MergeProgress) {
        let now = Date()
        guard p.phase == .done || now.timeIntervalSince(lastDraw) >= 0.2 else { return }
        lastDraw = now
        draw(BarProgress.line(ProgressFields(p), fraction: p.fraction, columns: columns()))
    }

    func end() { draw(nil) }

    /// "[####------]": `fraction` of `cells` filled.
    static func bar(_ fraction: Double, cells: Int) -> String {
        let filled = max(0, min(cells, Int((fraction * Double(cells)).rounded(.down))))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]"
    }

    /// The line for a terminal `columns` wide: never more than `columns - 3` characters (a line
    /// that reaches the last column wraps, and a wrapped line cannot be drawn over; and the "^C"
    /// a terminal echoes after it at Ctrl-C must fit on its row, or the clearing misses). What does
    /// not fit goes in a fixed order: the name is shortened, then left out; then the speed, the
    /// size, the elapsed time, each time with the widest bar (20 to 10 cells) that fits; then the
    /// ETA, the bar and the clip count; below that the percent is cut.
    static func line(_ fields: ProgressFields, fraction: Double, columns: Int) -> String {
        let room = max(1, columns - 3)
        func text(_ extras: [String?], cells: Int?) -> String {
            var parts = [fields.percent]
            if let cells { parts.append(bar(fraction, cells: cells)) }
            let rest = extras.compactMap { $0 }.joined(separator: "  ")
            return parts.joined(separator: " ") + (rest.isEmpty ? "" : " " + rest)
        }
        let kept: [String?] = [fields.position, fields.elapsed, fields.size, fields.eta, fields.speed]
        if let name = fields.name {
            let without = text(kept, cells: 20).count
            // The name after two spaces, in what is left.
            if let short = shortened(name, to: room - without - 2) { return text(kept + [short], cells: 20) }
        } else if text(kept, cells: 20).count <= room {
            return text(kept, cells: 20)
        }
        let (position, elapsed, size, eta, speed) = (fields.position, fields.elapsed, fields.size, fields.eta, fields.speed)
        for extras in [
            [position, elapsed, size, eta, speed], [position, elapsed, size, eta], [position, elapsed, eta], [position, eta],
            [position],
        ] {
            if let cells = (10...20).reversed().first(where: { text(extras, cells: $0).count <= room }) {
                return text(extras, cells: cells)
            }
        }
        for extras in [[fields.position], []] where text(extras, cells: nil).count <= room {
            return text(extras, cells: nil)
        }
        return String(fields.percent.prefix(room))
    }
}

/// A line at most every five seconds, no carriage returns: for logs and CI.
final class PlainProgress: ProgressDisplay {
    static let interval: TimeInterval = 5
    private let writeLine: (String) -> Void
    private var lastLine = Date()

    init(writeLine: @escaping (String) -> Void) { self.writeLine = writeLine }

    func show(_ p: MergeProgress) {
        let now = Date()
        guard p.phase != .done, now.timeIntervalSince(lastLine) >= PlainProgress.interval else { return }
        lastLine = now
        let fields = ProgressFields(p)
        var line = "vmerge: \(fields.percent.trimmingCharacters(in: .whitespaces)) \(fields.detail)"
        if p.phase == .encoding {
            line += String(
                format: "  (%@ of %@ s)", formatSeconds(Double(p.doneMicros) / 1e6),
                formatSeconds(Double(p.totalMicros) / 1e6))
        }
        writeLine(line)
    }

    func end() {}
}

/// One JSON object per line, like ffmpeg's -progress: about twice a second, and always a last
/// one with "progress": "end", whatever the run came to (a merge's end, a dry run, an output
/// found up to date, a failure): a reader waits for it.
final class JSONProgress: ProgressDisplay {
    private let writeLine: (String) -> Void
    private var lastLine = Date.distantPast
    private var lastPhase: MergeProgress.Phase?
    /// The last progress received, shown or not, and whether the end was written.
    private var last: MergeProgress?
    private var ended = false

    init(writeLine: @escaping (String) -> Void) { self.writeLine = writeLine }

    func show(_ p: MergeProgress) {
        last = p
        let now = Date()
        guard p.phase != lastPhase || p.phase == .done || now.timeIntervalSince(lastLine) >= 0.5 else { return }
        lastLine = now
        lastPhase = p.phase
        ended = p.phase == .done
        write(p.json)
    }

    /// A run that did not reach its done phase ends on where it got to (nothing at all: an
    /// output found up to date before any work), marked as the end.
    func end() {
        guard !ended else { return }
        ended = true
        let at =
            last
            ?? MergeProgress(phase: .done, item: 0, itemCount: 0, file: nil, doneMicros: 0, totalMicros: 0, elapsedSeconds: 0)
        guard case let .object(fields) = at.json else { return }
        write(.object(fields.map { $0.0 == "progress" ? ("progress", .string("end")) : $0 }))
    }

    private func write(_ progress: JSON) {
        // Named a progress event first: on stderr the run's messages are events beside it.
        guard case let .object(fields) = progress else { return }
        writeLine(JSON.object([("event", .string("progress"))] + fields).text())
    }
}
