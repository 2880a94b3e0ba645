import XCTest

@testable import VMergeCLI
@testable import VMergeCore
@testable import VMergeJobs
@testable import VMergeQueue

/// The merge's own options: where its inputs come from and their order, the report, progress and
/// the limits; --trim after the input it trims; --crf and --preset; --skip-deblocking.
final class MergeOptionParsingTests: ArgumentParserTestCase {
    func testPipelineOptions() {
        let r = request([
            "--inputs-from", "list.txt", "--sort", "name", "-n", "--report", "-", "--progress", "json",
            "--progress-fd", "3", "--max-duration", "60", "--max-size", "160M", "--min-free", "2G", "-o", "o.mp4",
        ])
        XCTAssertEqual(r?.job.inputPaths, [])
        XCTAssertEqual(r?.job.inputsFrom, .file("list.txt"))
        XCTAssertEqual(r?.job.order, .name)
        XCTAssertEqual(r?.job.dryRun, true)
        XCTAssertEqual(r?.reportTo, .standardOutput)
        XCTAssertEqual(r?.progress, .json)
        XCTAssertEqual(r?.progressFD, 3)
        XCTAssertEqual(r?.job.options.maxDuration, 60)
        XCTAssertEqual(r?.job.options.maxSize, 160 << 20)
        XCTAssertEqual(r?.job.minFree, 2 << 30)
        let plain = request(["a.mov", "-o", "o.mp4"])
        XCTAssertEqual(plain?.progress, .auto)
        XCTAssertEqual(plain?.job.order, InputOrder.none)
        XCTAssertNil(plain?.job.options.maxSize)
        XCTAssertNil(plain?.reportTo)
    }

    func testPipelineOptionErrors() {
        let cases: [([String], String)] = [
            (["--max-size", "10K"], "invalid value '10K' for '--max-size': expected a size of at least 16K"),
            (["--max-size", "lots"], "invalid value 'lots' for '--max-size'"),
            (["--max-duration", "0"], "invalid value '0' for '--max-duration'"),
            (["--max-duration", "1e12"], "out of range (more than 0, up to 10000000 s)"),
            (["--max-duration", "0.01"], "shorter than one frame"),
            (["--min-duration", "1e300"], "invalid value '1e300' for '--min-duration'"),
            (["--min-free", "x"], "invalid value 'x' for '--min-free'"),
            (["--sort", "size"], "invalid value 'size' for '--sort': expected name, mtime, none or recorded"),
            (["--progress", "fancy"], "expected auto, bar, plain, json or none"),
            (["--progress-fd", "-1"], "invalid value '-1' for '--progress-fd'"),
            (["--report", ""], "missing file name for '--report'"),
            (["--report", "-", "--progress-fd", "1"], "would both write to stdout"),
        ]
        for (extra, text) in cases {
            let message = usageError(["a.mov", "-o", "o.mp4"] + extra) ?? ""
            XCTAssertTrue(message.contains(text), "\(extra): \(message)")
        }
        XCTAssertEqual(usageError(["-o", "o.mp4"]), "no input files given")
        // An empty name is the command's mistake (a shell variable left unset), not a missing file.
        XCTAssertEqual(usageError(["a.mov", "", "-o", "o.mp4"]), "an input is an empty name ('')")
        XCTAssertEqual(
            usageError(["--inputs-from", "l.txt"]), "missing '-o <file>': where should the merged video go?")
    }

    /// --trim belongs to the input before it; the same file may be named twice with two trims.
    func testTrimFollowsItsInput() {
        let r = request(["a.mov", "--trim", "1.5,8", "b.mov", "a.mov", "--trim=1:02,", "c.mov", "--trim", ",0:03", "-o", "o.mp4"])
        XCTAssertEqual(
            r?.job.inputs,
            [
                JobInput("a.mov", edit: InputEdit(startMicros: 1_500_000, endMicros: 8_000_000)), JobInput("b.mov"),
                JobInput("a.mov", edit: InputEdit(startMicros: 62_000_000)), JobInput("c.mov", edit: InputEdit(endMicros: 3_000_000)),
            ])
        let cases: [([String], String)] = [
            (["--trim", "1,2", "a.mov"], "'--trim' must follow the file it applies to, e.g. a.mov --trim 1,2"),
            (["a.mov", "--trim", "1,2", "--trim", "3,4"], "'--trim' is given twice for a.mov"),
            (["a.mov", "--trim", "8,2"], "a.mov: the trim ends at 2 s, not after its start (8 s)"),
            (["a.mov", "--trim", "2"], "a.mov: invalid value '2' for '--trim': expected START,END in seconds"),
            (["a.mov", "--trim", ","], "a.mov: invalid value ',' for '--trim'"),
            (["a.mov", "--trim", "-1,2"], "a.mov: invalid value '-1,2' for '--trim': '-1' is out of range (0 to 86400 s"),
            (["a.mov", "--trim", "1:75,"], "seconds after a ':' must be under 60"),
            (["a.mov", "--trim", "1e6,"], "'1e6' is out of range (0 to 86400 s, the longest clip vmerge reads)"),
            (["a.mov", "--trim", "25:00:00,"], "'25:00:00' is out of range (0 to 86400 s, the longest clip vmerge reads)"),
            (["a.mov", "--trim", "1, 2"], "a.mov: invalid value '1, 2' for '--trim': ' 2' is not a time: no spaces around it"),
        ]
        for (arguments, text) in cases {
            let message = usageError(arguments + ["-o", "o.mp4"]) ?? ""
            XCTAssertTrue(message.contains(text), "\(arguments): \(message)")
        }
        // Not a batch or watch option: their jobs trim in the job file.
        XCTAssertEqual(
            usageError(["batch", "jobs.jsonl", "--trim", "1,2"]).map { $0.hasPrefix("unknown option '--trim'") }, true)
    }

    func testCrfAndPreset() {
        let r = request(["a.mov", "-o", "out.mp4", "--crf", "20.5", "--preset", "slow"])
        XCTAssertEqual(r?.job.options.crf, 20.5)
        XCTAssertEqual(r?.job.options.preset, .slow)
        XCTAssertEqual(r?.job.options.effectiveCRF, 20.5)
        let plain = request(["a.mov", "-o", "out.mp4", "--quality", "high"])
        XCTAssertEqual(plain?.job.options.effectiveCRF, 18, "the quality's CRF without --crf")
        XCTAssertEqual(plain?.job.options.effectivePreset, .medium)
        for bad in ["52", "-1", "20.123", "1e1", "x"] {
            XCTAssertEqual(
                usageError(["a.mov", "-o", "out.mp4", "--crf", bad]),
                "invalid value '\(bad)' for '--crf': expected a number from 0 to 51, such as 20")
        }
        XCTAssertEqual(
            usageError(["a.mov", "-o", "out.mp4", "--preset", "Fast 1080p30"]),
            "invalid value 'Fast 1080p30' for '--preset': expected ultrafast, superfast, veryfast, faster, fast, medium, "
                + "slow, slower, veryslow or placebo")
    }

    func testSkipDeblocking() {
        XCTAssertEqual(request(["a.mov", "-o", "out.mp4"])?.job.options.skipDeblocking, .auto)
        for choice in SkipDeblocking.allCases {
            let r = request(["a.mov", "-o", "out.mp4", "--skip-deblocking", choice.rawValue])
            XCTAssertEqual(r?.job.options.skipDeblocking, choice)
        }
        XCTAssertEqual(
            usageError(["a.mov", "-o", "out.mp4", "--skip-deblocking", "sometimes"]),
            "invalid value 'sometimes' for '--skip-deblocking': expected auto, never, unreferenced or always")
    }
}
