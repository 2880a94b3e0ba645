import Foundation
import VMergeCore
import XCTest

@testable import VMergeCLI

/// What the library reports reaches stderr as one `vmerge: <file>: <message>` line, and -q keeps
/// everything but errors off it.
final class DiagnosticPrintingTests: XCTestCase {
    func testADiagnosticIsOneLineNamingItsFile() {
        let capture = Capture()
        MessagePrinter(console: capture.console, verbosity: .normal)
            .diagnostic(Diagnostic(.warning, file: "a.mov", "no audio; using silence"))
        XCTAssertEqual(capture.stderr, "vmerge: a.mov: no audio; using silence\n")
        let quiet = Capture()
        let printer = MessagePrinter(console: quiet.console, verbosity: .quiet)
        printer.diagnostic(Diagnostic(.warning, file: "a.mov", "no audio; using silence"))
        XCTAssertEqual(quiet.stderr, "")
        printer.print(.error, file: "b.mov", "not a video")
        XCTAssertEqual(quiet.stderr, "vmerge: b.mov: not a video\n")
    }

    /// A name written by someone else (a file in a watched inbox, a job's name in the queue) cannot
    /// forge a second "vmerge:" line or send the terminal a command: it arrives escaped, on the one
    /// line of the message it is in, whether the message is a diagnostic, a usage error or a table.
    func testANameCannotBreakTheLineOrDriveTheTerminal() {
        let evil = "x.mov\nvmerge: all inputs deleted\u{1B}[2J\u{9B}1m\u{2028}"
        let shown = "x.mov\\nvmerge: all inputs deleted\\x1B[2J\\u{9B}1m\\u{2028}"
        let capture = Capture()
        MessagePrinter(console: capture.console, verbosity: .normal).diagnostic(Diagnostic(.warning, file: evil, "no audio"))
        XCTAssertEqual(capture.stderr, "vmerge: \(shown): no audio\n")
        let usage = Capture()
        XCTAssertEqual(VMergeCLI.run(["--\u{1B}]0;pwned\u{7}", "a.mov", "-o", "o.mp4"], console: usage.console), 2)
        XCTAssertTrue(usage.stderr.hasPrefix("vmerge: unknown option '--\\x1B]0;pwned\\x07'"), usage.stderr)
        for text in [capture.stderr, usage.stderr] {
            XCTAssertFalse(text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x2028 }, text)
        }
        let table = QueueCommand.columns([["ID", "NAME"], ["1", evil]])
        XCTAssertEqual(table, "ID  NAME\n1   \(shown)\n")
    }
}
