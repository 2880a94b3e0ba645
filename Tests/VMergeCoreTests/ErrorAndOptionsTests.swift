import XCTest

@testable import VMergeCore

final class ErrorAndOptionsTests: XCTestCase {
    func testErrorDescriptions() {
        let cases: [(VMergeError, String, String?)] = [
            (
                .ffmpeg(file: "a.mov", operation: "opening input", message: "No such file or directory"),
                "a.mov: opening input: No such file or directory", "a.mov"
            ),
            (.invalidInput(file: "b.mov", reason: "no video stream"), "b.mov: no video stream", "b.mov"),
            (.nothingToMerge(dropped: 1), "nothing to merge: all 1 input clip was dropped", nil),
            (.nothingToMerge(dropped: 3), "nothing to merge: all 3 input clips were dropped", nil),
            (.outputExists(file: "out.mp4"), "out.mp4: output exists (use -y to overwrite)", "out.mp4"),
            (.outputIsInput(file: "a.mp4"), "a.mp4: output is also an input; refusing to overwrite it", "a.mp4"),
            (.io(file: "out.mp4", message: "No space left on device"), "out.mp4: No space left on device", "out.mp4"),
            (.cancelled(signal: 2), "interrupted (SIGINT): stopped, no output written", nil),
            (.cancelled(signal: 15), "terminated (SIGTERM): stopped, no output written", nil),
        ]
        for (error, text, file) in cases {
            XCTAssertEqual(error.description, text)
            XCTAssertEqual("\(error)", text)
            XCTAssertEqual(error.file, file, text)
        }
    }

    func testDiagnostic() {
        let d = Diagnostic(.warning, file: "a.mov", "no audio; using silence")
        XCTAssertEqual(d.severity, .warning)
        XCTAssertEqual(d.file, "a.mov")
        XCTAssertEqual(d.message, "no audio; using silence")
        XCTAssertEqual(Diagnostic.Severity.note.rawValue, "note")
    }

    func testDefaults() {
        let o = MergeOptions()
        XCTAssertEqual(o.minDuration, 2.0)
        XCTAssertEqual(o.width, 320)
        XCTAssertEqual(o.aspect, Rational(4, 3))
        XCTAssertEqual(o.frameRate, Rational(30, 1))
        XCTAssertEqual(o.quality, .medium)
        XCTAssertEqual(o.sampleRate, 44_100)
        XCTAssertEqual(o.channels, 2)
        XCTAssertFalse(o.overwrite)
        XCTAssertFalse(o.skipInvalid)
    }

    func testQuality() {
        XCTAssertEqual(Quality.allCases.map(\.crf), [28, 23, 18])
        XCTAssertEqual(Quality.allCases.map(\.audioBitRate), [64_000, 96_000, 128_000])
        XCTAssertEqual(Quality.allCases.map(\.rawValue), ["low", "medium", "high"])
        for q in Quality.allCases {
            XCTAssertEqual(q.x264Preset, "medium")
            XCTAssertEqual(q.x264Profile, "high")
        }
    }
}
