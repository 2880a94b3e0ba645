import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// Merges `inputs` through the library (--min-duration 0) with `flag` on and with it off, and
/// checks that both outputs show the same source picture in every frame (bar-code fixtures) and
/// the same sound sample for sample: for options that may change only how much work is done.
/// Returns the frame numbers and both runs' results (on, off).
func mergeWithAndWithout(
    _ flag: WritableKeyPath<MergeHooks, Bool>, _ inputs: [JobInput], file: StaticString = #filePath,
    line: UInt = #line
) throws -> (numbers: [Int?], on: MergeResult, off: MergeResult) {
    let dir = try makeScratchDirectory()
    var runs: [(numbers: [Int?], samples: [Float], result: MergeResult)] = []
    var bytes: [Data] = []
    for on in [true, false] {
        var options = MergeOptions()
        options.minDuration = 0
        var hooks = MergeHooks()
        hooks[keyPath: flag] = on
        let path = dir.appendingPathComponent(on ? "on.mp4" : "off.mp4").path
        let result = try runnerMerge(inputs, output: path, options: options, hooks: hooks)
        runs.append((try barCodeFrameNumbers(path), try MediaInspector(path: path).audioSamples().samples, result))
        bytes.append(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
    XCTAssertEqual(runs[0].numbers, runs[1].numbers, "the same pictures", file: file, line: line)
    XCTAssertEqual(runs[0].samples, runs[1].samples, "the same sound", file: file, line: line)
    // The same frames make the same file, whichever merge of this process ran first.
    XCTAssertTrue(bytes[0] == bytes[1], "the same bytes (\(bytes[0].count) vs \(bytes[1].count))", file: file, line: line)
    return (runs[0].numbers, runs[0].result, runs[1].result)
}
