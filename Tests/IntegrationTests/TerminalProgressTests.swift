import Foundation
import TestSupport
import XCTest

/// The progress bar in a real terminal: vmerge runs in a tmux pane that is resized during the
/// run, and what the pane shows is read back with capture-pane. Whatever the width, the pane
/// holds one progress line, never wider than the pane (a wider one wraps, cannot be drawn over
/// and fills the screen with stacked half-lines).
final class TerminalProgressTests: XCTestCase {
    /// A private tmux server (its own socket, no configuration file), killed at the end.
    private struct Tmux {
        let socket = "vmerge-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

        @discardableResult
        func run(_ arguments: [String]) throws -> RunResult {
            try runProgram(
                URL(fileURLWithPath: "/usr/bin/env"), ["tmux", "-L", socket, "-f", "/dev/null"] + arguments,
                in: FileManager.default.temporaryDirectory)
        }

        /// Starts the server with `arguments` (new-session), through bash so that the server holds
        /// nothing of ours: it keeps what its first client had open, and a pipe of ours would not
        /// reach its end while the server lives.
        func start(_ arguments: [String]) throws -> Int32 {
            let quoted = (["tmux", "-L", socket, "-f", "/dev/null"] + arguments).map {
                "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'"
            }
            // Every inherited descriptor closed too (the ends of our pipes among them).
            let closeAll = "for fd in {3..255}; do eval \"exec $fd>&-\"; done 2>/dev/null; "
            return try runProgram(
                URL(fileURLWithPath: "/bin/bash"),
                ["-c", closeAll + quoted.joined(separator: " ") + " </dev/null >/dev/null 2>&1"],
                in: FileManager.default.temporaryDirectory
            ).status
        }

        /// The visible pane, as lines (trailing empty ones dropped), and its width.
        func pane() throws -> (lines: [String], width: Int) {
            let capture = try run(["capture-pane", "-p"])
            if capture.status != 0 { throw InspectError("tmux capture-pane: \(capture.stderr)") }
            let text = capture.stdout
            var lines = text.components(separatedBy: "\n")
            while lines.last?.isEmpty == true { lines.removeLast() }
            let width = Int(try run(["display-message", "-p", "#{pane_width}"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            return (lines, width)
        }

        /// The pane's lines once `condition` holds (a failure after `timeout` seconds).
        func waitFor(_ what: String, timeout: Double, _ condition: ([String]) -> Bool) throws -> [String] {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let lines = try pane().lines
                if condition(lines) { return lines }
                Thread.sleep(forTimeInterval: 0.05)
            }
            XCTFail("timed out waiting for \(what): \(try pane().lines)")
            return []
        }
    }

    private func skipWithoutTmux() throws {
        guard (try? runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["tmux", "-V"], in: FileManager.default.temporaryDirectory))?
            .status == 0
        else {
            throw XCTSkip("tmux is not installed (make deps installs it): the bar cannot be tested in a terminal")
        }
    }

    /// vmerge with the bar on 60 copies of the 1080p clip (about 10 s), run by `prefix` in an
    /// 80-column pane; then "vmerge-exit=<status>".
    private func startMerge(in tmux: Tmux, prefix: String = "") throws {
        let dir = try makeScratchDirectory()
        let clip = Fixtures.path("b_")
        let command =
            "cd '\(dir.path)' && echo start && \(prefix)'\(VMergeBinary.url.path)' --progress bar "
            + Array(repeating: "'\(clip)'", count: 60).joined(separator: " ")
            + " -o out.mp4; echo vmerge-exit=$?; sleep 60"
        XCTAssertEqual(try tmux.start(["new-session", "-d", "-x", "80", "-y", "20", command]), 0)
        _ = try tmux.waitFor("the bar", timeout: 30) { $0.contains(where: isProgressLine) }
    }

    /// Under `timeout` vmerge is in a process group of its own, which no SIGWINCH reaches: the
    /// bar still follows the pane to 40 columns, by reading the width again every second.
    func testTheBarFollowsAResizeThatSendsNoSignal() throws {
        try skipWithoutTmux()
        let tmux = Tmux()
        defer { _ = try? tmux.run(["kill-server"]) }
        try startMerge(in: tmux, prefix: "timeout 120 ")
        try tmux.run(["resize-window", "-x", "40"])
        let narrow = try tmux.waitFor("a bar under 40 columns", timeout: 5) { lines in
            let bars = lines.filter(isProgressLine)
            return bars.count == 1 && bars[0].count < 40 && !lines.contains { $0.hasPrefix("vmerge-exit=") }
        }
        XCTAssertEqual(narrow.filter(isProgressLine).count, 1, "\(narrow)")
        // The bar says how long it has run and how much it has written.
        try tmux.run(["resize-window", "-x", "100"])
        // (Once encoding: probing 60 inputs takes a while under a sanitizer.)
        let wide = try tmux.waitFor("a wide bar, encoding", timeout: 30) { lines in
            lines.contains { isProgressLine($0) && $0.count > 60 && $0.contains(" clip ") }
        }
        let bar = try XCTUnwrap(wide.first { isProgressLine($0) && $0.contains(" clip ") })
        XCTAssertNotNil(bar.range(of: #"clip [0-9]+/60  [0-9]+:[0-9]{2}  [0-9.]+ (B|KiB|MiB)"#, options: .regularExpression), bar)
        // (The merge is not waited for: killing tmux's server ends it, and its scratch folder goes.)
    }

    /// " 42% [####...] clip 3/10 ...": a line of the bar, whatever fields fit.
    private func isProgressLine(_ line: String) -> Bool {
        line.range(of: #"^ {0,2}[0-9]{1,3}%"#, options: .regularExpression) != nil
    }

    func testTheBarFitsThePaneAfterEveryResize() throws {
        try skipWithoutTmux()
        let tmux = Tmux()
        defer { _ = try? tmux.run(["kill-server"]) }
        try startMerge(in: tmux)

        for width in [40, 60, 30, 80] {
            try tmux.run(["resize-window", "-x", "\(width)"])
            // Let the bar redraw at the new width (it draws five times a second).
            Thread.sleep(forTimeInterval: 0.5)
            var sawBar = false
            for _ in 0..<10 {
                let (lines, paneWidth) = try tmux.pane()
                XCTAssertEqual(paneWidth, width)
                if lines.contains(where: { $0.hasPrefix("vmerge-exit=") }) { break }
                let bars = lines.filter(isProgressLine)
                XCTAssertLessThanOrEqual(bars.count, 1, "at \(width) columns: \(lines)")
                // The bar leaves the last column free (a line that reaches it wraps).
                for bar in bars { XCTAssertLessThan(bar.count, width, "at \(width) columns: \(bar)") }
                sawBar = sawBar || bars.count == 1
                Thread.sleep(forTimeInterval: 0.1)
            }
            XCTAssertTrue(sawBar, "no bar at \(width) columns")
        }
        // Interrupted: the bar is cleared and vmerge exits 130 with one line.
        try tmux.run(["send-keys", "C-c"])
        let end = try tmux.waitFor("the exit", timeout: 30) { $0.contains { $0.hasPrefix("vmerge-exit=") } }
        XCTAssertTrue(end.contains("vmerge-exit=130"), "\(end)")
        XCTAssertFalse(end.contains(where: isProgressLine), "the bar is cleared at the end: \(end)")
    }

    /// `vmerge batch -j 2` on a terminal: a total line and a line per running job, drawn over
    /// themselves, fitting the pane after a resize, cleared at the end.
    func testTheBatchShowsAJobLinePerRunningJob() throws {
        try skipWithoutTmux()
        let tmux = Tmux()
        defer { _ = try? tmux.run(["kill-server"]) }
        let dir = try makeScratchDirectory()
        let clips = Array(repeating: "\"\(Fixtures.path("b_"))\"", count: 40).joined(separator: ", ")
        let lines = ["trip", "party"].map { #"{"inputs": [\#(clips)], "output": "\#($0).mp4", "name": "\#($0)"}"# }
        try Data(lines.joined(separator: "\n").utf8).write(to: dir.appendingPathComponent("jobs.jsonl"))
        let command =
            "cd '\(dir.path)' && '\(VMergeBinary.url.path)' batch jobs.jsonl -j 2; echo vmerge-exit=$?; sleep 60"
        XCTAssertEqual(try tmux.start(["new-session", "-d", "-x", "80", "-y", "20", command]), 0)
        let isJobLine = { (line: String) in line.hasPrefix("  [1/2] trip ") || line.hasPrefix("  [2/2] party ") }
        let shown = try tmux.waitFor("the block, both jobs encoding", timeout: 30) { pane in
            pane.contains { isProgressLine($0) && $0.contains("0/2 jobs: 0 done, 0 failed") }
                && pane.filter { isJobLine($0) && $0.contains("clip ") }.count == 2
        }
        XCTAssertEqual(shown.filter(isProgressLine).count, 1, "one total line: \(shown)")
        for line in shown where isProgressLine(line) || isJobLine(line) { XCTAssertLessThan(line.count, 78, line) }
        try tmux.run(["resize-window", "-x", "40"])
        let narrow = try tmux.waitFor("the block at 40 columns", timeout: 5) { pane in
            let block = pane.filter { isProgressLine($0) || isJobLine($0) }
            return block.count == 3 && block.allSatisfy { $0.count < 38 }
        }
        XCTAssertEqual(narrow.filter(isProgressLine).count, 1, "one total line: \(narrow)")
        try tmux.run(["send-keys", "C-c"])
        let end = try tmux.waitFor("the exit", timeout: 30) { $0.contains { $0.hasPrefix("vmerge-exit=") } }
        XCTAssertTrue(end.contains("vmerge-exit=130"), "\(end)")
        XCTAssertFalse(end.contains { isProgressLine($0) || isJobLine($0) }, "the block is cleared at the end: \(end)")
    }
}
