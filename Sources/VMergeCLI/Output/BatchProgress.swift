import Foundation
import VMergeCore
import VMergeJobs

/// `vmerge batch`'s progress, the `--progress` ways: on a terminal a block drawn over itself (a
/// total line with the jobs done and failed, the time so far and an ETA, then a line per running
/// job with its bar); plain lines every five seconds; or each job's `--progress json` objects
/// with its place in the batch. Fed from the batch's worker threads.
final class BatchProgress: @unchecked Sendable {
    private let mode: ProgressMode
    /// Jobs this run does (a shard's), and how many the list has (jobs are numbered in it).
    private let total: Int
    private let listed: Int
    private let names: [Int: String]
    private let columns: () -> Int
    private let draw: (String?) -> Void
    private let writeLine: (String) -> Void
    private let lock = NSLock()
    private let clock = Stopwatch()
    /// Running jobs' latest progress, by position in the list.
    private var running: [Int: MergeProgress] = [:]
    private var ended: [RunReport.Status] = []
    private var lastDraw = -Double.infinity
    private var lastJSON: [Int: (at: Double, phase: MergeProgress.Phase)] = [:]
    /// A job's last progress object, held back for its one end object.
    private var lastFields: [Int: [(String, JSON)]] = [:]

    /// nil when `mode` shows nothing (none, or auto with -q).
    static func make(
        mode: ProgressMode, fd: Int32?, verbosity: Verbosity, console: Console, printer: MessagePrinter, jobs: [Job],
        selected: [Int]
    ) -> BatchProgress? {
        let isTerminal = fd.map { isatty($0) == 1 } ?? console.errorIsTerminal
        var shown = mode
        if mode == .auto { shown = verbosity == .quiet ? .none : isTerminal ? .bar : .plain }
        guard shown != .none else { return nil }
        let writeLine: (String) -> Void = fd.map { fd in { writeAll(fd, $0 + "\n") } } ?? { printer.line($0) }
        var columns: () -> Int = { 80 }
        var draw: (String?) -> Void = { _ in }
        if let fd {
            let line = StatusLine(width: TerminalWidth(fd: fd, environment: console.environment))
            (columns, draw) = ({ line.width.columns }, { writeAll(fd, line.replace(with: $0)) })
        } else {
            let width = printer.statusWidth
            (columns, draw) = ({ width.columns }, { printer.status($0) })
        }
        let names = Dictionary(uniqueKeysWithValues: selected.map { ($0, jobs[$0].name) })
        return BatchProgress(
            mode: shown, total: selected.count, listed: jobs.count, names: names, columns: columns, draw: draw,
            writeLine: writeLine)
    }

    private init(
        mode: ProgressMode, total: Int, listed: Int, names: [Int: String], columns: @escaping () -> Int,
        draw: @escaping (String?) -> Void, writeLine: @escaping (String) -> Void
    ) {
        (self.mode, self.total, self.listed, self.names) = (mode, total, listed, names)
        // Plain lines come every five seconds from the start, as a merge's do; the bar at once.
        if mode == .plain { lastDraw = 0 }
        (self.columns, self.draw, self.writeLine) = (columns, draw, writeLine)
    }

    func handle(_ event: BatchEvent) {
        lock.lock()
        defer { lock.unlock() }
        switch event {
        case let .progress(job, progress):
            running[job] = progress
            if mode == .json { json(job, progress) }
        case let .finished(job, status):
            running[job] = nil
            ended.append(status)
            if mode == .json {
                // One end object per job: its last progress (a failed job's may be none) and its status.
                let last = (lastFields[job] ?? []).filter { $0.0 != "progress" }
                writeLine(JSON.object(jobFields(job) + last + [("status", .string(status.rawValue)), ("progress", .string("end"))]).text())
            }
        }
        let now = clock.seconds
        var finished = false
        if case .finished = event { finished = true }
        switch mode {
        // A job that ended leaves the block at once: its line is not drawn again under its last message.
        case .bar where now - lastDraw >= 0.2 || finished:
            lastDraw = now
            draw(block())
        case .plain where now - lastDraw >= PlainProgress.interval:
            lastDraw = now
            let fields = summary()
            writeLine(
                "vmerge: batch: \(fields.percent.trimmingCharacters(in: .whitespaces)) \(fields.detail)"
                    + running.keys.sorted().map { "; " + jobLabel($0) + " " + percent($0) }.joined())
        default: break
        }
    }

    /// The run is over: the block is cleared.
    func end() {
        lock.lock()
        defer { lock.unlock() }
        if mode == .bar { draw(nil) }
    }

    /// What is done of the whole batch: ended jobs whole, running ones by their own fraction.
    private var fraction: Double {
        guard total > 0 else { return 1 }
        return min(1, (Double(ended.count) + running.values.reduce(0) { $0 + $1.fraction }) / Double(total))
    }

    /// "3/10 jobs: 2 done, 1 failed", the time so far and the ETA (at the pace so far).
    private func summary() -> ProgressFields {
        let done = ended.filter { $0 == .ok || $0 == .skipped }.count
        let f = fraction
        return ProgressFields(
            percent: String(format: "%3.0f%%", (f * 100).rounded(.down)),
            position: "\(ended.count)/\(total) jobs: \(done) done, \(ended.count - done) failed",
            elapsed: clockTime(clock.seconds),
            eta: f > 0.01 && f < 1 ? "ETA " + clockTime(clock.seconds * (1 - f) / f) : nil)
    }

    private func jobLabel(_ job: Int) -> String {
        "[\(job + 1)/\(listed)] " + (shortened(VisibleText.of(names[job] ?? ""), to: 20) ?? "")
    }

    private func percent(_ job: Int) -> String {
        String(format: "%.0f%%", ((running[job]?.fraction ?? 0) * 100).rounded(.down))
    }

    /// The total line, then a line per running job (in list order), each fitting the terminal.
    private func block() -> String {
        let width = columns()
        let head = BarProgress.line(summary(), fraction: fraction, columns: width)
        let jobs = running.keys.sorted().map { job -> String in
            jobLine(job, width: width)
        }
        return ([head] + jobs).joined(separator: "\n")
    }

    /// "  [4/10] trip   42% [####------] clip 3/10  ETA 0:12": a 10-cell bar that keeps its place
    /// from draw to draw, then what fits of the clip count, the ETA and the speed.
    private func jobLine(_ job: Int, width: Int) -> String {
        let room = max(1, width - 3)
        var line = "  " + jobLabel(job) + " "
        guard let progress = running[job] else { return String(line.prefix(room)) }
        let fields = ProgressFields(progress)
        let bar = " " + BarProgress.bar(progress.fraction, cells: 10)
        line += fields.percent
        if line.count + bar.count <= room { line += bar }
        for field in [fields.position, fields.eta, fields.speed].compactMap({ $0 }) {
            guard line.count + 2 + field.count <= room else { break }
            line += "  " + field
        }
        return String(line.prefix(room))
    }

    /// A job's progress object with its place in the batch: twice a second, and at each phase
    /// (its done one becomes its end object).
    private func json(_ job: Int, _ progress: MergeProgress) {
        guard case let .object(fields) = progress.json else { return }
        lastFields[job] = fields
        guard progress.phase != .done else { return }
        let now = clock.seconds
        if let last = lastJSON[job], last.phase == progress.phase, now - last.at < 0.5 { return }
        lastJSON[job] = (now, progress.phase)
        writeLine(JSON.object(jobFields(job) + fields).text())
    }

    /// Named a progress event first: on stderr the run's messages are events beside it.
    private func jobFields(_ job: Int) -> [(String, JSON)] {
        [("event", .string("progress")), ("job", .int(job + 1)), ("jobs", .int(listed)), ("name", .string(names[job]))]
    }
}
