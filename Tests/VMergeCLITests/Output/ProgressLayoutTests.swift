import XCTest

@testable import VMergeCLI
import VMergeCore

/// The bar's line at every width: never reaching the last column, and giving up fields in a
/// fixed order (the name shortened, then left out; the speed, size, elapsed time, with bar cells
/// between; then the ETA, the bar, the clip count).
final class ProgressLayoutTests: XCTestCase {
    private let progress = MergeProgress(
        phase: .encoding, item: 3, itemCount: 10, file: "/videos/IMG_0042.MOV", doneMicros: 42_000_000,
        totalMicros: 100_000_000, elapsedSeconds: 10, outputBytes: 1_500_000)

    private func line(_ columns: Int) -> String {
        BarProgress.line(ProgressFields(progress), fraction: progress.fraction, columns: columns)
    }

    func testFieldsGoInAFixedOrder() {
        XCTAssertEqual(line(90), " 42% [########------------] clip 3/10  0:10  1.4 MiB  ETA 0:14  4.2x  IMG_0042.MOV")
        // The name is shortened before it is left out; then the speed, the size and the elapsed
        // time go, each time with the widest bar that fits; the ETA stays longest.
        XCTAssertEqual(line(83), " 42% [########------------] clip 3/10  0:10  1.4 MiB  ETA 0:14  4.2x  IMG_0….MOV")
        XCTAssertEqual(line(80), " 42% [########------------] clip 3/10  0:10  1.4 MiB  ETA 0:14  4.2x")
        XCTAssertEqual(line(70), " 42% [#######------------] clip 3/10  0:10  1.4 MiB  ETA 0:14  4.2x")
        XCTAssertEqual(line(60), " 42% [######---------] clip 3/10  0:10  1.4 MiB  ETA 0:14")
        XCTAssertEqual(line(50), " 42% [#####---------] clip 3/10  0:10  ETA 0:14")
        XCTAssertEqual(line(40), " 42% [####------] clip 3/10  ETA 0:14")
        XCTAssertEqual(line(30), " 42% [####------] clip 3/10")
        XCTAssertEqual(line(20), " 42% clip 3/10")
        XCTAssertEqual(line(10), " 42%")
        XCTAssertEqual(line(5), " 4")
    }

    func testALongNameIsShortenedInTheMiddle() {
        XCTAssertEqual(shortened("IMG_20261201_142355_0042.MOV", to: 15), "IMG_202…042.MOV")
        XCTAssertEqual(shortened("a.mov", to: 15), "a.mov")
        XCTAssertNil(shortened("IMG_20261201_142355_0042.MOV", to: 7), "too short to tell: left out")
    }

    func testNeverReachesTheLastColumn() {
        for columns in 1...200 {
            // Two columns to spare: the "^C" a terminal echoes at Ctrl-C stays on the bar's row.
            XCTAssertLessThanOrEqual(line(columns).count, max(1, columns - 3), "\(columns) columns")
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
