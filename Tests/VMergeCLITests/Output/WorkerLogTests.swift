import Foundation
import XCTest

@testable import VMergeCLI
import VMergeCore
import VMergeJobs

/// A worker's log (watch, worker) and its jobs' diagnostics through the one sink: the diary,
/// warnings, errors and a job's file-named diagnostics each printed as what they are.
final class WorkerLogTests: XCTestCase {
    private func printed(_ verbosity: Verbosity, colour: Bool) -> String {
        let capture = Capture()
        let base = capture.console
        let console = Console(
            output: { base.output($0) }, error: { base.writeErrText($0) }, errorIsTerminal: colour,
            environment: ["TERM": "xterm"])
        let log = MessagePrinter(console: console, verbosity: verbosity).sink("watch")
        log("watching in/")
        log.warning("job1: the sources are kept in .done")
        log.error("job2: failed: a.mov: not a video")
        log(Diagnostic(.warning, file: "watch: job3: c.mov", "dropped: shorter than 1 s"))
        return capture.stderr
    }

    func testEachLevelIsPrintedAsWhatItIs() {
        XCTAssertEqual(
            printed(.normal, colour: false),
            "vmerge: watch: watching in/\n"
                + "vmerge: watch: warning: job1: the sources are kept in .done\n"
                + "vmerge: watch: job2: failed: a.mov: not a video\n"
                + "vmerge: watch: job3: c.mov: dropped: shorter than 1 s\n")
        // -q keeps the worker's warnings and errors; drops the diary and a job's warnings, as a
        // merge's -q does.
        XCTAssertEqual(
            printed(.quiet, colour: false),
            "vmerge: watch: warning: job1: the sources are kept in .done\n"
                + "vmerge: watch: job2: failed: a.mov: not a video\n")
        // A warning in the warning's colour, not the error's.
        let coloured = printed(.normal, colour: true).split(separator: "\n").map(String.init)
        XCTAssertEqual(coloured[1], "\u{1B}[1;33mvmerge:\u{1B}[0m watch: warning: job1: the sources are kept in .done")
        XCTAssertEqual(coloured[2], "\u{1B}[1;31mvmerge:\u{1B}[0m watch: job2: failed: a.mov: not a video")
    }
}
