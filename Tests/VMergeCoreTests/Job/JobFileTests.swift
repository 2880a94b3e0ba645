import Foundation
import XCTest

@testable import VMergeCore

/// The one job-file decoder: the same rules for a job list line and a job.json.
final class JobFileTests: XCTestCase {
    private func decode(_ json: String, over base: JobSettings = JobSettings()) throws -> Job {
        try JobFile.decode(JobFile.object(from: Data(json.utf8)), over: base, inputsRequired: false, outputRequired: false)
    }

    private func refusal(_ json: String) -> String? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return "\(error)"
        }
    }

    func testEveryOptionIsReadByItsRowAndOverTheRunWideOnes() throws {
        var base = JobSettings()
        base.merge.quality = .low
        base.merge.skipInvalid = true
        let job = try decode(
            #"{"inputs": ["a.mov"], "output": "x.mp4", "name": "x", "options": {"width": 160, "fps": "3000000000/100000000", "skip-invalid": false, "min-free": "2M", "max_size": 100000}}"#,
            over: base)
        XCTAssertEqual(job.inputPaths, ["a.mov"])
        XCTAssertEqual(job.settings.merge.width, 160)
        XCTAssertEqual(job.settings.merge.frameRate, Rational(30, 1), "reduced")
        XCTAssertEqual(job.settings.merge.quality, .low, "the run's, not overridden")
        XCTAssertFalse(job.settings.merge.skipInvalid, "a job may switch a run-wide flag off")
        XCTAssertEqual(job.settings.minFree, 2 << 20, "min-free is honoured")
        XCTAssertEqual(job.settings.merge.maxSize, 100_000)
    }

    func testWhatIsRefused() {
        let cases: [(String, String)] = [
            (#"{"inputz": ["a.mov"]}"#, "unknown field 'inputz'"),
            (#"{"inputs": "a.mov"}"#, "'inputs' must be a non-empty list of paths"),
            (#"{"inputs": []}"#, "'inputs' must be a non-empty list of paths"),
            (#"{"inputs": [1]}"#, "'inputs' must be a list of paths"),
            (#"{"inputs": [""]}"#, "an input is empty"),
            (#"{"output": "a\nb.mp4"}"#, "'output' contains a control character"),
            (#"{"name": 5}"#, "'name' must be a string"),
            (#"{"options": []}"#, "'options' must be an object"),
            (#"{"options": {"widht": 320}}"#, "unknown option 'widht'"),
            (#"{"options": {"width": "wide"}}"#, "invalid value 'wide' for '--width'"),
            (#"{"options": {"width": true}}"#, "option 'width' must be a number"),
            (#"{"options": {"strict": "yes"}}"#, "option 'strict' must be true or false"),
            (#"{"options": {"quality": 3}}"#, "option 'quality' must be a string"),
            (#"{"options": {"width": 1e300}}"#, "invalid value '1e+300' for '--width'"),
            (#"{"options": {"fps": "9223372036854775807/4611686018427387904"}}"#, "invalid value"),
            (#"{"options": {"aspect": "9223372036854775807:1"}}"#, "invalid value"),
            (#"{"options": {"max-duration": 0.001, "fps": 30}}"#, "shorter than one frame"),
            ("[1, 2]", "not a JSON object"),
            ("{", "not valid JSON"),
        ]
        for (json, expected) in cases {
            let message = refusal(json) ?? "accepted"
            XCTAssertTrue(message.contains(expected), "\(json): \(message)")
        }
    }

    func testListsAreBounded() {
        let many = "[" + Array(repeating: "\"a.mov\"", count: JobFile.maxInputs + 1).joined(separator: ",") + "]"
        XCTAssertTrue((refusal(#"{"inputs": "# + many + "}") ?? "").contains("at most \(JobFile.maxInputs)"))
    }

    /// An input may be an object with a trim and a chapter title; plain paths stay paths.
    func testInputObjects() throws {
        let job = try decode(
            #"{"inputs": ["a.mov", {"path": "b.mov", "start": 1.5, "end": "0:08", "title": "Arrival"}, {"path": "c.mov"}, {"path": "a.mov", "end": 2}]}"#)
        XCTAssertEqual(
            job.inputs,
            [
                JobInput("a.mov"), JobInput("b.mov", edit: InputEdit(startMicros: 1_500_000, endMicros: 8_000_000, title: "Arrival")),
                JobInput("c.mov"), JobInput("a.mov", edit: InputEdit(endMicros: 2_000_000)),
            ])
        let refusals = [
            (#"{"inputs": [{"file": "a.mov"}]}"#, "unknown field 'file' in an input (expected path, start, end, title)"),
            (#"{"inputs": [{"start": 1}]}"#, #"an input object must have a "path" string"#),
            (#"{"inputs": [{"path": "a.mov", "start": -1}]}"#, "input a.mov: 'start': '-1' is out of range (0 to 86400 s"),
            (#"{"inputs": [{"path": "a.mov", "start": true}]}"#, "input a.mov: 'start' must be a number of seconds"),
            (#"{"inputs": [{"path": "a.mov", "start": 5, "end": 5}]}"#, "input a.mov: the trim ends at 5 s, not after its start (5 s)"),
            (#"{"inputs": [{"path": "a.mov", "end": "soon"}]}"#, "input a.mov: 'end': 'soon' is not a time"),
            (#"{"inputs": [{"path": "a.mov", "start": 1e9}]}"#, "'1000000000' is out of range (0 to 86400 s, the longest clip vmerge reads)"),
            (#"{"inputs": [{"path": "a.mov", "title": "two\nlines"}]}"#, "'title' contains a control character"),
            (#"{"inputs": [{"path": "a.mov", "title": 3}]}"#, "'title' must be a string"),
            (#"{"inputs": [7]}"#, "'inputs' must be a list of paths or {\"path\": ...} objects"),
        ]
        for (json, text) in refusals {
            let message = refusal(json) ?? "accepted"
            XCTAssertTrue(message.contains(text), "\(json): \(message)")
        }
        XCTAssertNotNil(refusal(#"{"inputs": [{"path": "a.mov", "title": "\#(String(repeating: "x", count: 1025))"}]}"#))
    }

    /// A trim or a title changes the key; an input without them keys as before (finished
    /// batches stay finished).
    func testEditsAreKeyed() {
        let options = MergeOptions()
        // (That an untrimmed input keys exactly as before is pinned by JobKeyGoldenTests.)
        let plain = JobKey.make(inputs: [JobInput("/nowhere/a.mov")], root: nil, options: options)
        let keys = [
            InputEdit(startMicros: 1), InputEdit(endMicros: 5_000_000), InputEdit(startMicros: 1, endMicros: 5_000_000),
            InputEdit(title: "A"), InputEdit(title: "B"),
        ].map { JobKey.make(inputs: [JobInput("/nowhere/a.mov", edit: $0)], root: nil, options: options) }
        XCTAssertEqual(Set(keys + [plain]).count, 6)
    }

    /// The run's limits are ceilings: a job.json may make them stricter, never lift them.
    func testAJobCannotLiftTheRunsLimits() throws {
        var run = JobSettings()
        try JobOption.maxPixels.apply("100x100", to: &run)
        try JobOption.maxDuration.apply("60", to: &run)
        try JobOption.maxSize.apply("10M", to: &run)
        try JobOption.minFree.apply("1G", to: &run)
        for (json, message) in [
            (#"{"options": {"max-pixels": "65536x65536"}}"#,
             "option 'max-pixels' 4294967296 is above this run's 10000: a job may make a run-wide limit stricter, not lift it"),
            (#"{"options": {"max-duration": 61}}"#, "option 'max-duration' 61.0 is above this run's 60.0"),
            (#"{"options": {"max-size": "11M"}}"#, "option 'max-size' 11534336 is above this run's 10485760"),
            (#"{"options": {"min-free": "1M"}}"#, "option 'min-free' 1048576 is below this run's 1073741824"),
        ] {
            XCTAssertThrowsError(try decode(json, over: run), json) { error in
                XCTAssertTrue("\(error)".hasPrefix(message), "\(error)")
            }
        }
        let stricter = try decode(
            #"{"options": {"max-pixels": "50x50", "max-duration": 30, "max-size": "1M", "min-free": "2G"}}"#, over: run)
        XCTAssertEqual(stricter.settings.merge.maxPixels, 2500)
        XCTAssertEqual(stricter.settings.merge.maxDuration, 30)
        // Without a run-wide value only --max-pixels has a ceiling: its default.
        XCTAssertThrowsError(try decode(#"{"options": {"max-pixels": "16384x16384"}}"#))
        XCTAssertEqual(try decode(#"{"options": {"max-duration": 600, "max-size": "2G"}}"#).settings.merge.maxDuration, 600)
    }

    func testTheJobKeyComesFromTheTable() {
        var a = MergeOptions()
        var b = a
        b.strict = true
        XCTAssertNotEqual(
            JobKey.make(inputs: [String](), root: nil, options: a), JobKey.make(inputs: [String](), root: nil, options: b),
            "every keyed row counts")
        a.overwrite = true
        XCTAssertEqual(
            JobKey.make(inputs: [String](), root: nil, options: a), JobKey.make(inputs: [String](), root: nil, options: MergeOptions()),
            "run settings do not")
        XCTAssertEqual(
            Set(JobOption.all.filter { !$0.keyed }.map(\.name)), ["min-free"], "only min-free leaves the output alone")
        // --crf and --preset key by the value in force: naming the quality's own is no change.
        var crf = MergeOptions()
        crf.crf = 23
        crf.preset = .medium
        XCTAssertEqual(
            JobKey.make(inputs: [String](), root: nil, options: crf), JobKey.make(inputs: [String](), root: nil, options: MergeOptions()))
        crf.crf = 20
        XCTAssertNotEqual(
            JobKey.make(inputs: [String](), root: nil, options: crf), JobKey.make(inputs: [String](), root: nil, options: MergeOptions()))
    }

    func testCrfAndPresetInAJobFile() throws {
        let job = try decode(#"{"options": {"crf": 20, "preset": "veryfast", "fit": "blur"}}"#)
        XCTAssertEqual(job.settings.merge.fit, .blur)
        XCTAssertEqual(job.settings.merge.crf, 20)
        XCTAssertEqual(job.settings.merge.preset, .veryfast)
        XCTAssertEqual(try decode(#"{"options": {"crf": "18.5"}}"#).settings.merge.crf, 18.5)
        XCTAssertEqual(
            refusal(#"{"options": {"crf": 99}}"#), "invalid value '99' for '--crf': expected a number from 0 to 51, such as 20")
        XCTAssertEqual(refusal(#"{"options": {"preset": 3}}"#)?.contains("preset"), true)
    }
}

extension JobFileTests {
    /// Numbers as people write them, nothing Double(String) would also take.
    func testOnlyPlainNumbersAreNumbers() {
        for (json, expected) in [
            (#"{"options": {"min-duration": "0x10"}}"#, "invalid value '0x10'"),
            (#"{"options": {"fps": "0x1E"}}"#, "invalid value '0x1E'"),
            (#"{"options": {"width": "+320"}}"#, "invalid value '+320'"),
            (#"{"options": {"width": " 320"}}"#, "invalid value ' 320'"),
            (#"{"options": {"aspect": "-4:-3"}}"#, "invalid value '-4:-3'"),
            (#"{"options": {"max-duration": "nan"}}"#, "invalid value 'nan'"),
            (#"{"options": {"min_duration": 1, "min-duration": 2}}"#, "is given twice"),
        ] {
            let message = (try? decode(json)).map { _ in "accepted" } ?? refusal(json) ?? ""
            XCTAssertTrue(message.contains(expected), "\(json): \(message)")
        }
        XCTAssertEqual(try decode(#"{"options": {"fps": "29.97", "max-duration": "1e2"}}"#).settings.merge.maxDuration, 100)
    }
}

extension JobFileTests {
    /// The report's options come from the same table: a new option cannot be left out of it.
    func testTheReportListsEveryJobOption() throws {
        let report = RunReport(
            status: .ok, exit: .success, startedAt: Date(), wallSeconds: 0, versions: ("v", "f", []),
            options: MergeOptions(), minFree: 5, settings: [], outputPath: "o.mp4", inputPaths: [])
        let text = report.json.text(pretty: false)
        let object = try XCTUnwrap(
            (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["options"] as? [String: Any])
        for option in JobOption.all {
            XCTAssertNotNil(object[option.reportKey], option.name)
        }
        XCTAssertEqual(object["min_free"] as? Int, 5)
        XCTAssertEqual(object["max_pixels"] as? Int, 8192 * 8192)
    }
}
