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

    /// A scope ("batch: [2/5] trip") and a label ("job 3") are said before the message, but they
    /// are no file: an event's `file` is only ever the file the message is about, byte for byte.
    func testAnEventsFileIsTheFileNotItsScopeOrALabel() throws {
        let capture = Capture()
        let printer = MessagePrinter(console: capture.console, verbosity: .normal, form: .jsonEvents)
        let name = FileName(bytes: Array("clips/b".utf8) + [0xFF] + Array(".mov".utf8))
        let sink = printer.sink("batch").tagged("batch: [2/5] trip")
        sink(Diagnostic(.warning, about: .file(name), "no audio; using silence"))
        sink(Diagnostic(.error, about: .label("job 3"), "not in the queue"))
        sink.warning("the worker's own line")
        let events = try capture.stderr.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(events.count, 3)
        XCTAssertEqual(events[0]["file"] as? String, name.escaped)
        XCTAssertEqual(events[0]["text"] as? String, "vmerge: batch: [2/5] trip: clips/b\\xFF.mov: no audio; using silence")
        XCTAssertTrue(events[1]["file"] is NSNull, "\(events[1])")
        XCTAssertEqual(events[1]["text"] as? String, "vmerge: batch: [2/5] trip: job 3: not in the queue")
        XCTAssertTrue(events[2]["file"] is NSNull, "\(events[2])")
        XCTAssertEqual(events[2]["text"] as? String, "vmerge: batch: [2/5] trip: the worker's own line")
    }
}
