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
        let width = terminalWidth(fd: fd ?? 2, environment: console.environment)
        if let fd {
            return BarProgress(width: width) { line in
                writeAll(fd, line.map { "\r" + $0 + "\u{1B}[K" } ?? "\r\u{1B}[K")
            }
        }
        return BarProgress(width: width) { printer.status($0) }
    }

    private static func terminalWidth(fd: Int32, environment: [String: String]) -> Int {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 { return Int(size.ws_col) }
        return environment["COLUMNS"].flatMap(Int.init) ?? 80
    }
}

/// "1:05", "12:00:03": durations for people.
func clockTime(_ seconds: Double) -> String {
    // Never traps: an estimate from a speed near 0 can be huge or infinite.
    let total = seconds.isFinite ? Int(min(max(seconds, 0), 1e9).rounded()) : 0
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
    return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
}

/// What the bar and plain lines say: "42% clip 3/10 b.mov 4.1x ETA 0:12".
func progressSummary(_ p: MergeProgress) -> (percent: String, detail: String) {
    switch p.phase {
    case .probing:
        return ("  0%", "probing \(p.item)/\(p.itemCount) \(shortName(p.file))")
    case .encoding, .done:
        // Name last: it is what gets cut when the line is too long.
        var detail = "clip \(p.item)/\(p.itemCount)"
        if let speed = p.speed { detail += String(format: "  %.1fx", speed) }
        if let eta = p.etaSeconds, p.phase == .encoding { detail += "  ETA \(clockTime(eta))" }
        if p.phase == .encoding { detail += "  \(shortName(p.file))" }
        return (String(format: "%3.0f%%", (p.fraction * 100).rounded(.down)), detail)
    }
}

private func shortName(_ path: String?) -> String {
    guard let path else { return "" }
    return (path as NSString).lastPathComponent
}

/// One self-updating line: percent, a bar, clip i/n and its name, speed, ETA. Redrawn at most
/// five times a second.
final class BarProgress: ProgressDisplay {
    private let width: Int
    private let draw: (String?) -> Void
    private var lastDraw = Date.distantPast

    init(width: Int, draw: @escaping (String?) -> Void) {
        self.width = max(20, width)
        self.draw = draw
    }

    func show(_ p: MergeProgress) {
        let now = Date()
        guard p.phase == .done || now.timeIntervalSince(lastDraw) >= 0.2 else { return }
        lastDraw = now
        let (percent, detail) = progressSummary(p)
        let cells = 20
        let filled = Int((p.fraction * Double(cells)).rounded(.down))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]"
        var line = "\(percent) \(bar) \(detail)"
        // Never wider than the terminal: a wrapped status line cannot be overwritten.
        if line.count > width - 1 { line = String(line.prefix(width - 1)) }
        draw(line)
    }

    func end() { draw(nil) }
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
        let (percent, detail) = progressSummary(p)
        var line = "vmerge: \(percent.trimmingCharacters(in: .whitespaces)) \(detail)"
        if p.phase == .encoding {
            line += String(
                format: "  (%@ of %@ s)", formatSeconds(Double(p.doneMicros) / 1e6),
                formatSeconds(Double(p.totalMicros) / 1e6))
        }
        writeLine(line)
    }

    func end() {}
}

/// One JSON object per line, like ffmpeg's -progress: about twice a second and once at the end.
final class JSONProgress: ProgressDisplay {
    private let writeLine: (String) -> Void
    private var lastLine = Date.distantPast
    private var lastPhase: MergeProgress.Phase?

    init(writeLine: @escaping (String) -> Void) { self.writeLine = writeLine }

    func show(_ p: MergeProgress) {
        let now = Date()
        guard p.phase != lastPhase || p.phase == .done || now.timeIntervalSince(lastLine) >= 0.5 else { return }
        lastLine = now
        lastPhase = p.phase
        writeLine(p.json.text())
    }

    func end() {}
}
