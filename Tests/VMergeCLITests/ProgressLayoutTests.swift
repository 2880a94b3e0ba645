import XCTest

@testable import VMergeCLI
import VMergeCore

/// The bar's line at every width: never reaching the last column, and giving up fields in a
/// fixed order (name, then bar cells, then ETA, speed, the bar, the clip count).
final class ProgressLayoutTests: XCTestCase {
    private let progress = MergeProgress(
        phase: .encoding, item: 3, itemCount: 10, file: "/videos/IMG_0042.MOV", doneMicros: 42_000_000,
        totalMicros: 100_000_000, elapsedSeconds: 10)

    private func line(_ columns: Int) -> String {
        BarProgress.line(ProgressFields(progress), fraction: progress.fraction, columns: columns)
    }

    func testFieldsGoInAFixedOrder() {
        XCTAssertEqual(line(80), " 42% [########------------] clip 3/10  4.2x  ETA 0:14  IMG_0042.MOV")
        XCTAssertEqual(line(60), " 42% [########------------] clip 3/10  4.2x  ETA 0:14")
        XCTAssertEqual(line(45), " 42% [####-------] clip 3/10  4.2x  ETA 0:14")
        XCTAssertEqual(line(40), " 42% [######----------] clip 3/10  4.2x")
        XCTAssertEqual(line(30), " 42% [#####-------] clip 3/10")
        XCTAssertEqual(line(20), " 42% clip 3/10")
        XCTAssertEqual(line(10), " 42%")
        XCTAssertEqual(line(3), " 4")
    }

    func testNeverReachesTheLastColumn() {
        for columns in 1...200 {
            XCTAssertLessThanOrEqual(line(columns).count, max(1, columns - 1), "\(columns) columns")
        }
    }

    /// A resize narrower than the line on screen clears the rows a reflowing terminal wrapped it onto.
    func testAStatusLineClearsWhatTheTerminalWrapped() {
        let status = StatusLine(width: TerminalWidth(fd: -1, environment: ["COLUMNS": "40"]))
        XCTAssertEqual(status.replace(with: String(repeating: "x", count: 30)), "\r\u{1B}[K" + String(repeating: "x", count: 30))
        XCTAssertEqual(status.replace(with: "y"), "\r\u{1B}[Ky")
        _ = status.replace(with: String(repeating: "z", count: 95))  // as if drawn before a shrink to 40
        XCTAssertEqual(status.replace(with: nil), "\r\u{1B}[K" + String(repeating: "\u{1B}[1A\u{1B}[K", count: 2))
    }
}
