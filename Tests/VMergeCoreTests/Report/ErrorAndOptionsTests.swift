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
            (.nothingToMerge(dropped: 1), "nothing to merge: its one input clip was dropped", nil),
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

    /// What may pass (and is tried again) is the output's side: its file, its folder, a full disk.
    /// A damaged input that lies in the output's folder is still the input's fault: retrying it
    /// would only fail again.
    func testAnErrorOnAnInputIsNeverTheOutputsSideWhereverTheInputLies() {
        let output = "/jobs/out/trip.mp4"
        let onInput = VMergeError.ffmpeg(file: "/jobs/out/a.mov", operation: "decoding", message: "Invalid data found")
        XCTAssertFalse(onInput.isOnOutputSide(of: output, inputs: ["/jobs/out/a.mov", "/jobs/out/b.mov"]))
        XCTAssertFalse(VMergeError.io(file: "/jobs/out/b.mov", message: "Input/output error")
            .isOnOutputSide(of: output, inputs: ["/jobs/out/a.mov", "/jobs/out/b.mov"]))
        XCTAssertTrue(onInput.isOnOutputSide(of: output), "without the inputs, the folder decides (as before)")
        XCTAssertTrue(VMergeError.io(file: output, message: "No space left on device")
            .isOnOutputSide(of: output, inputs: ["/jobs/out/a.mov"]))
        XCTAssertTrue(VMergeError.ffmpeg(file: "/jobs/out/.trip.mp4.vmerge-x-1.tmp", operation: "writing", message: "I/O error")
            .isOnOutputSide(of: output, inputs: ["/jobs/out/a.mov"]))
        XCTAssertFalse(VMergeError.invalidInput(file: "/jobs/out/a.mov", reason: "no video stream")
            .isOnOutputSide(of: output, inputs: []))
    }


    /// A better quality means a lower CRF and more audio bits; --crf and --preset override the
    /// quality's x264 settings but not its audio.
    func testQualityAndItsOverrides() {
        let qualities: [Quality] = [.low, .medium, .high]
        XCTAssertEqual(qualities.map(\.crf), qualities.map(\.crf).sorted(by: >))
        XCTAssertEqual(qualities.map(\.audioBitRate), qualities.map(\.audioBitRate).sorted())
        var options = MergeOptions()
        options.quality = .high
        XCTAssertEqual(options.effectiveCRF, Double(Quality.high.crf))
        options.crf = 30
        options.preset = .veryslow
        XCTAssertEqual(options.effectiveCRF, 30)
        XCTAssertEqual(options.effectivePreset, .veryslow)
        XCTAssertEqual(options.audioBitRate, 128_000, "the quality's AAC rate, for stereo")
        options.channels = 1
        XCTAssertEqual(options.audioBitRate, 64_000, "half for mono")
    }
}
