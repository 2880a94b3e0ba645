import XCTest

@testable import VMergeCLI
@testable import VMergeCore
@testable import VMergeJobs
@testable import VMergeQueue

final class ArgumentParserTests: XCTestCase {
    private func request(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> MergeCommand? {
        do {
            let command = try ArgumentParser.parse(args)
            guard case let .merge(request) = command else {
                XCTFail("expected a merge, got \(command)", file: file, line: line)
                return nil
            }
            return request
        } catch {
            XCTFail("unexpected error \(error) for \(args)", file: file, line: line)
            return nil
        }
    }

    private func usageError(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            let command = try ArgumentParser.parse(args)
            XCTFail("expected a usage error for \(args), got \(command)", file: file, line: line)
            return nil
        } catch let error as UsageError {
            return error.description
        } catch {
            XCTFail("expected UsageError, got \(error)", file: file, line: line)
            return nil
        }
    }

    func testInputsAndOutput() {
        let r = request(["a.mov", "b.mov", "-o", "out.mp4"])
        XCTAssertEqual(
            r,
            MergeCommand(
                job: Job(name: "out.mp4", inputs: ["a.mov", "b.mov"], output: "out.mp4", options: MergeOptions()),
                verbosity: .normal))
    }

    func testOutputSpellings() {
        XCTAssertEqual(request(["--output=x.mp4", "a.mov"])?.job.output, "x.mp4")
        XCTAssertEqual(request(["--output", "y.mp4", "a.mov"])?.job.output, "y.mp4")
        XCTAssertEqual(request(["-ofile.mp4", "a.mov"])?.job.output, "file.mp4")
        XCTAssertEqual(request(["a.mov", "-o", "-dash.mp4"])?.job.output, "-dash.mp4")
        // Twice is refused (it was: the last one won, silently; see OtherToolsTests).
        XCTAssertEqual(
            usageError(["-o", "one.mp4", "a.mov", "-o", "two.mp4"]),
            "'--output' is given twice ('one.mp4', then 'two.mp4'); give it once")
    }

    func testFlags() {
        let r = request(["-y", "a.mov", "-o", "o.mp4"])
        XCTAssertEqual(r?.job.options.overwrite, true)
        XCTAssertEqual(r?.job.options.skipInvalid, false)
        XCTAssertEqual(request(["--overwrite", "a.mov", "-o", "o.mp4"])?.job.options.overwrite, true)
        XCTAssertEqual(request(["a.mov", "-o", "o.mp4"])?.job.options.overwrite, false)
        XCTAssertEqual(request(["--skip-invalid", "a.mov", "-o", "o.mp4"])?.job.options.skipInvalid, true)
        XCTAssertEqual(request(["-q", "a.mov", "-o", "o.mp4"])?.verbosity, .quiet)
        XCTAssertEqual(request(["--quiet", "a.mov", "-o", "o.mp4"])?.verbosity, .quiet)
        XCTAssertEqual(request(["-v", "a.mov", "-o", "o.mp4"])?.verbosity, .verbose)
        XCTAssertEqual(request(["--verbose", "a.mov", "-o", "o.mp4"])?.verbosity, .verbose)
    }

    func testCombinedShortFlags() {
        let r = request(["-yq", "a.mov", "-o", "o.mp4"])
        XCTAssertEqual(r?.job.options.overwrite, true)
        XCTAssertEqual(r?.verbosity, .quiet)
        // A value option ends the cluster and takes the rest, or the next argument.
        let s = request(["-yo", "out.mp4", "a.mov"])
        XCTAssertEqual(s?.job.output, "out.mp4")
        XCTAssertEqual(s?.job.options.overwrite, true)
        XCTAssertEqual(s?.job.inputPaths, ["a.mov"])
        let t = request(["-qyoout.mp4", "a.mov"])
        XCTAssertEqual(t?.job.output, "out.mp4")
        XCTAssertEqual(t?.verbosity, .quiet)
        XCTAssertEqual(t?.job.options.overwrite, true)
    }

    func testDoubleDashEndsOptions() {
        let r = request(["-o", "out.mp4", "--", "-x.mov", "--help", "-y"])
        XCTAssertEqual(r?.job.inputPaths, ["-x.mov", "--help", "-y"])
        XCTAssertEqual(r?.job.options.overwrite, false)
        XCTAssertEqual(request(["-o", "out.mp4", "--", "--"])?.job.inputPaths, ["--"])
        XCTAssertEqual(request(["-", "-o", "out.mp4"])?.job.inputPaths, ["-"])
    }

    func testValues() {
        let r = request([
            "--min-duration", "0", "--width", "640", "--aspect", "16:9", "--fps", "29.97",
            "--quality", "high", "a.mov", "-o", "o.mp4",
        ])
        var expected = MergeOptions()
        expected.minDuration = 0
        expected.width = 640
        expected.aspect = Rational(16, 9)
        expected.frameRate = Rational(30000, 1001)
        expected.quality = .high
        XCTAssertEqual(r?.job.options, expected)
        XCTAssertEqual(r?.job.options.outputSize.height, 360)

        XCTAssertEqual(request(["--min-duration=1.5", "a", "-o", "o.mp4"])?.job.options.minDuration, 1.5)
        XCTAssertEqual(request(["--aspect=4/3", "a", "-o", "o.mp4"])?.job.options.aspect, Rational(4, 3))
        XCTAssertEqual(request(["--aspect", "3:4", "a", "-o", "o.mp4"])?.job.options.aspect, Rational(3, 4))
        XCTAssertEqual(request(["--fps", "30000/1001", "a", "-o", "o.mp4"])?.job.options.frameRate, Rational(30000, 1001))
        XCTAssertEqual(request(["--fps", "25", "a", "-o", "o.mp4"])?.job.options.frameRate, Rational(25, 1))
        XCTAssertEqual(request(["--quality=low", "a", "-o", "o.mp4"])?.job.options.quality, .low)
        XCTAssertEqual(request(["--width", "16", "a", "-o", "o.mp4"])?.job.options.width, 16)
        XCTAssertEqual(request(["--width", "7680", "a", "-o", "o.mp4"])?.job.options.width, 7680)
        XCTAssertEqual(
            usageError(["--width", "640", "--width", "480", "a", "-o", "o.mp4"]),
            "'--width' is given twice ('640', then '480'); give it once")
    }

    func testUnknownOptions() {
        XCTAssertEqual(
            usageError(["--widht", "640", "a", "-o", "o.mp4"]), "unknown option '--widht'. Did you mean '--width'?")
        XCTAssertEqual(
            usageError(["--verbos", "a", "-o", "o.mp4"]), "unknown option '--verbos'. Did you mean '--verbose'?")
        XCTAssertEqual(
            usageError(["--min-durations=3", "a", "-o", "o.mp4"]),
            "unknown option '--min-durations'. Did you mean '--min-duration'?")
        XCTAssertEqual(usageError(["--zzzzzzzzzzzz", "a", "-o", "o.mp4"]), "unknown option '--zzzzzzzzzzzz'")
        XCTAssertEqual(usageError(["-x", "a", "-o", "o.mp4"]), "unknown option '-x'")
        // A cluster with a letter vmerge has no flag for is named whole.
        XCTAssertEqual(usageError(["-yx", "a", "-o", "o.mp4"]), "unknown option '-yx'")
    }

    func testFlagWithValue() {
        XCTAssertEqual(usageError(["--overwrite=yes", "a", "-o", "o.mp4"]), "'--overwrite' takes no value")
        XCTAssertEqual(usageError(["--help=1"]), "'--help' takes no value")
    }

    func testMissingValues() {
        XCTAssertEqual(usageError(["a.mov", "-o", "o.mp4", "--fps"]), "missing value for '--fps <rate>'")
        XCTAssertEqual(usageError(["a.mov", "-o"]), "missing value for '--output <file>'")
        XCTAssertEqual(usageError(["a.mov", "-yo"]), "missing value for '--output <file>'")
        XCTAssertEqual(usageError(["a.mov", "--width"]), "missing value for '--width <n>'")
        XCTAssertEqual(usageError(["a.mov", "--quality"]), "missing value for '--quality <low|medium|high>'")
    }

    func testBadWidth() {
        for text in ["641", "abc", "8", "14", "7682", "-2", "0", "320.0", ""] {
            XCTAssertEqual(
                usageError(["--width", text, "a", "-o", "o.mp4"]),
                "invalid value '\(text)' for '--width': expected an even number from 16 to 7680", text)
        }
    }

    func testBadOtherValues() {
        XCTAssertEqual(
            usageError(["--quality", "ultra", "a", "-o", "o.mp4"]),
            "invalid value 'ultra' for '--quality': expected low, medium or high")
        XCTAssertEqual(
            usageError(["--quality", "High", "a", "-o", "o.mp4"]),
            "invalid value 'High' for '--quality': expected low, medium or high")
        for text in ["0", "300", "abc", "-30", "30/0", "nan"] {
            XCTAssertEqual(
                usageError(["--fps", text, "a", "-o", "o.mp4"]),
                "invalid value '\(text)' for '--fps': expected a rate from 1 to 240", text)
        }
        for text in ["0:3", "100:1", "1:100", "wide", "4:0", "-4:3"] {
            XCTAssertEqual(
                usageError(["--aspect", text, "a", "-o", "o.mp4"]),
                "invalid value '\(text)' for '--aspect': expected w:h such as 4:3, from 1:10 to 10:1", text)
        }
        for text in ["abc", "inf", "nan", "0x10", "+1"] {
            XCTAssertEqual(
                usageError(["--min-duration", text, "a", "-o", "o.mp4"]),
                "invalid value '\(text)' for '--min-duration': not a time (seconds such as 1.5, or m:ss such as 1:02.5)", text)
        }
        for text in ["-1", "1e308", "1e400"] {
            XCTAssertEqual(
                usageError(["--min-duration", text, "a", "-o", "o.mp4"]),
                "invalid value '\(text)' for '--min-duration': out of range (0 to 10000000 s)", text)
        }
    }

    func testMissingOutputOrInputs() {
        XCTAssertEqual(usageError(["a.mov"]), "missing '-o <file>': where should the merged video go?")
        // b.mov is not here: taken for the output ffmpeg's way, and shown back with -o.
        XCTAssertEqual(
            usageError(["a.mov", "b.mov", "-y"]),
            "missing '-o <file>': where should the merged video go? To write b.mov, say so with -o: vmerge a.mov -o b.mov -y")
        XCTAssertEqual(usageError(["-o", "out.mp4"]), "no input files given")
        XCTAssertEqual(usageError([]), "no input files and no output given")
        XCTAssertEqual(usageError(["-y"]), "no input files and no output given")
    }

    func testStdoutOutputIsRefused() {
        XCTAssertEqual(
            usageError(["a.mov", "-o", "-"]), "cannot write to stdout: a faststart MP4 needs a seekable file")
    }

    func testQuietAndVerbose() {
        XCTAssertEqual(usageError(["-q", "-v", "a", "-o", "o.mp4"]), "'--quiet' and '--verbose' cannot be used together")
        XCTAssertEqual(
            usageError(["--verbose", "--quiet", "a", "-o", "o.mp4"]),
            "'--quiet' and '--verbose' cannot be used together")
        XCTAssertEqual(usageError(["-qv", "a", "-o", "o.mp4"]), "'--quiet' and '--verbose' cannot be used together")
    }

    func testHelpAndVersionWin() throws {
        XCTAssertEqual(try ArgumentParser.parse(["--help"]), .help)
        XCTAssertEqual(try ArgumentParser.parse(["-h"]), .help)
        XCTAssertEqual(try ArgumentParser.parse(["a.mov", "--help"]), .help)
        XCTAssertEqual(try ArgumentParser.parse(["--width", "3", "-q", "-v", "--help"]), .help)
        XCTAssertEqual(try ArgumentParser.parse(["-yh"]), .help)
        XCTAssertEqual(try ArgumentParser.parse(["--version"]), .version)
        XCTAssertEqual(try ArgumentParser.parse(["--version", "--quality", "ultra"]), .version)
        XCTAssertEqual(try ArgumentParser.parse(["--version", "--help"]), .help)
    }

    func testSuggestionAndEditDistance() {
        XCTAssertEqual(ArgumentParser.suggestion(for: "widht"), ". Did you mean '--width'?")
        XCTAssertEqual(ArgumentParser.suggestion(for: "outptu"), ". Did you mean '--output'?")
        XCTAssertEqual(ArgumentParser.suggestion(for: "skipinvalid"), ". Did you mean '--skip-invalid'?")
        XCTAssertEqual(ArgumentParser.suggestion(for: "zzzzzzzzzzzz"), "")
        XCTAssertEqual(ArgumentParser.editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(ArgumentParser.editDistance("", "abc"), 3)
        XCTAssertEqual(ArgumentParser.editDistance("abc", ""), 3)
        XCTAssertEqual(ArgumentParser.editDistance("", ""), 0)
        XCTAssertEqual(ArgumentParser.editDistance("width", "width"), 0)
        XCTAssertEqual(ArgumentParser.editDistance("widht", "width"), 2)
    }

    func testOptionTable() {
        XCTAssertEqual(
            MergeCommand.table.map(\.long),
            [
                "output", "overwrite", "min-duration", "width", "aspect", "fit", "fps",
                "quality", "crf", "preset", "tonemap", "skip-deblocking", "loudness", "chapters", "poster", "poster-at", "skip-invalid", "strict", "strip-metadata", "max-pixels", "max-duration", "max-size", "min-free",
                "delete-sources", "trim", "inputs-from", "sort",
                "dry-run", "report", "progress", "progress-fd", "quiet", "verbose", "help", "version",
            ])
        XCTAssertEqual(Set(MergeCommand.table.map(\.long)).count, MergeCommand.table.count)
        let shorts = MergeCommand.table.compactMap(\.short)
        XCTAssertEqual(shorts, ["o", "y", "n", "q", "v", "h"])
        XCTAssertEqual(MergeCommand.table[0].display, "-o, --output <file>")
        XCTAssertEqual(MergeCommand.table[2].display, "    --min-duration <seconds>")
        XCTAssertEqual(MergeCommand.table[1].display, "-y, --overwrite")
    }

    func testPipelineOptions() {
        let r = request([
            "--inputs-from", "list.txt", "--sort", "name", "-n", "--report", "-", "--progress", "json",
            "--progress-fd", "3", "--max-duration", "60", "--max-size", "160M", "--min-free", "2G", "-o", "o.mp4",
        ])
        XCTAssertEqual(r?.job.inputPaths, [])
        XCTAssertEqual(r?.job.inputsFrom, "list.txt")
        XCTAssertEqual(r?.job.order, .name)
        XCTAssertEqual(r?.job.dryRun, true)
        XCTAssertEqual(r?.reportPath, "-")
        XCTAssertEqual(r?.progress, .json)
        XCTAssertEqual(r?.progressFD, 3)
        XCTAssertEqual(r?.job.options.maxDuration, 60)
        XCTAssertEqual(r?.job.options.maxSize, 160 << 20)
        XCTAssertEqual(r?.job.minFree, 2 << 30)
        let plain = request(["a.mov", "-o", "o.mp4"])
        XCTAssertEqual(plain?.progress, .auto)
        XCTAssertEqual(plain?.job.order, InputOrder.none)
        XCTAssertNil(plain?.job.options.maxSize)
        XCTAssertNil(plain?.reportPath)
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
            (["--sort", "size"], "invalid value 'size' for '--sort': expected name, mtime or none"),
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

    func testBatchAndWatchCommands() throws {
        guard
            case let .batch(batch) = try ArgumentParser.parse(
                ["batch", "jobs.jsonl", "-j", "3", "--shard", "1/4", "--quality", "low", "--report", "r.json"])
        else { return XCTFail("not a batch") }
        XCTAssertEqual(batch.source, "jobs.jsonl")
        XCTAssertEqual(batch.parallel, 3)
        XCTAssertEqual(batch.shard, .init(index: 1, count: 4))
        XCTAssertEqual(batch.settings.merge.quality, .low)
        XCTAssertEqual(batch.reportPath, "r.json")
        // A job's own options over the batch-wide ones, by the library's decoder.
        let job = try JobFile.decode(
            ["options": ["width": 160]], over: batch.settings, inputsRequired: false, outputRequired: false)
        XCTAssertEqual(job.settings.merge.width, 160)
        XCTAssertEqual(job.settings.merge.quality, .low)
        guard
            case let .watch(watch) = try ArgumentParser.parse(
                ["watch", "in", "--out", "out", "--settle", "2.5", "--delete-sources", "--once", "--retries", "0"])
        else { return XCTFail("not a watch") }
        XCTAssertEqual(watch.watch.inbox, "in")
        XCTAssertEqual(watch.watch.outbox, "out")
        XCTAssertEqual(watch.watch.settle, 2.5)
        XCTAssertTrue(watch.watch.deleteSources && watch.watch.once)
        XCTAssertEqual(watch.watch.retries, 0)
        XCTAssertEqual(watch.watch.marker, ".ready")
        XCTAssertEqual(try ArgumentParser.parse(["batch", "--help"]), .subcommandHelp("batch"))
        XCTAssertEqual(try ArgumentParser.parse(["queue", "add", "--help"]), .subcommandHelp("queue"))
        guard case let .queue(add)? = try? ArgumentParser.parse(
            ["queue", "add", "jobs.jsonl", "--db=vmerge", "--out", "o", "--max-attempts", "5", "--quality", "low"])
        else { return XCTFail("queue add") }
        XCTAssertEqual(add.action, .add("jobs.jsonl"))
        XCTAssertEqual(add.database, "vmerge")
        XCTAssertEqual(add.out, "o")
        XCTAssertEqual(add.maxAttempts, 5)
        XCTAssertEqual(add.settings.merge.quality, .low)
        guard case let .queue(cancel) = try ArgumentParser.parse(["queue", "cancel", "3", "4"]),
            case let .queue(status) = try ArgumentParser.parse(["queue", "status", "--json"])
        else { return XCTFail("queue cancel, queue status") }
        XCTAssertEqual(cancel.action, .cancel([3, 4]))
        XCTAssertEqual(cancel.maxAttempts, QueueCommand.defaultMaxAttempts)
        XCTAssertFalse(cancel.json)
        XCTAssertEqual(status.action, .status)
        XCTAssertTrue(status.json)
        XCTAssertEqual(try ArgumentParser.parse(["worker", "--help"]), .subcommandHelp("worker"))
        guard case let .worker(plain) = try ArgumentParser.parse(["worker"]),
            case let .worker(given) = try ArgumentParser.parse([
                "worker", "--db", "vmerge", "-j2", "--once", "--lease=5.5", "--name", "w1", "--poll-interval", "0.5",
                "-q",
            ])
        else { return XCTFail("worker") }
        XCTAssertNil(plain.database)
        XCTAssertEqual(plain.verbosity, .normal)
        XCTAssertEqual(
            plain.settings,
            WorkerSettings(conninfo: "", name: WorkerSettings.defaultName, parallel: Batch.defaultParallel, lease: 60, pollInterval: 2))
        XCTAssertEqual(given.database, "vmerge")
        XCTAssertEqual(given.verbosity, .quiet)
        XCTAssertEqual(
            given.settings, WorkerSettings(conninfo: "", name: "w1", parallel: 2, lease: 5.5, pollInterval: 0.5, once: true))
        let errors: [([String], String)] = [
            (["batch"], "batch: no job list or folder given"),
            (["batch", "a", "b"], "batch: one job list or folder, not 2"),
            (["batch", "a", "--shard", "3/3"], "invalid value '3/3' for '--shard'"),
            (["batch", "a", "-j", "0"], "invalid value '0' for '--jobs'"),
            (["batch", "a", "-o", "x.mp4"], "unknown option '-o'"),
            (["watch", "in"], "watch: missing '--out <dir>'"),
            (["watch", "in", "--out", "o", "--settle", "-1"], "invalid value '-1' for '--settle'"),
            (["watch", "in", "--out", "o", "--marker", "a/b"], "invalid value 'a/b' for '--marker'"),
            (["watch", "in", "--out", "o", "--sttle", "1"], "Did you mean '--settle'?"),
            (["worker", "jobs.jsonl"], "worker: unexpected argument 'jobs.jsonl': the jobs come from the queue"),
            (["worker", "--lease", "1"], "invalid value '1' for '--lease': out of range (2 to 3600 s)"),
            (["worker", "--lease", "0x10"], "invalid value '0x10' for '--lease'"),
            (["worker", "--poll-interval", "0"], "invalid value '0' for '--poll-interval': out of range (0.1 to 3600 s)"),
            (["worker", "-j", "0"], "invalid value '0' for '--jobs': expected a number from 1 to 256"),
            (["worker", "--name", ""], "invalid value '' for '--name'"),
            (["worker", "--name", "a\nb"], "invalid value 'a\nb' for '--name'"),
            (["worker", "--db", ""], "'--db' needs a connection string"),
            (["worker", "--quality", "high"], "unknown option '--quality'"),
            (["worker", "-q", "-v"], "'--quiet' and '--verbose' cannot be used together"),
        ]
        for (args, text) in errors {
            let message = usageError(args) ?? ""
            XCTAssertTrue(message.contains(text), "\(args): \(message)")
        }
    }
}

/// Other tools' spellings get a hint naming the vmerge way; --crf and --preset are real options.
extension ArgumentParserTests {
    /// ffmpeg's way of naming inputs and the output, shown back as the vmerge command, with the
    /// user's own names and options, quoted for the shell only where needed.
    func testHintsShowTheCommandAsTyped() {
        let cases: [([String], String)] = [
            (["-i", "part1.mov", "-i", "part2.mov", "merged.mp4"], "vmerge part1.mov part2.mov -o merged.mp4"),
            (["--quality", "high", "-i", "a b.mov", "--input=it's.mov", "out.m4v"], "vmerge --quality high 'a b.mov' 'it'\\''s.mov' -o out.m4v"),
            (["-i", "a.mov", "-i", "b.mov", "-o", "x.mp4"], "vmerge a.mov b.mov -o x.mp4"),
            (["-i", "a.mov"], "vmerge a.mov -o merged.mp4"),
            // A name like an option is an input as ./-name; an -o with nothing after it is dropped.
            (["-i", "-dash.mov", "-i", "a.mov", "out.mp4"], "vmerge ./-dash.mov a.mov -o out.mp4"),
            (["-i", "a.mov", "-i", "b.mov", "-o"], "vmerge a.mov b.mov -o merged.mp4"),
            (["-i", "a.mov", "--", "-b.mov", "out.mp4"], "vmerge a.mov -o out.mp4 -- -b.mov"),
            // A name as argv gives it (bytes, here a real U+10FFFF) comes back as those bytes.
            (["-i", FileName.decode(Array("c\u{10FFFF}.mov".utf8)), "-i", "tab\there.mov", "o.mp4"],
             "vmerge $'c\\xF4\\x8F\\xBF\\xBF.mov' $'tab\\x09here.mov' -o o.mp4"),
        ]
        for (arguments, command) in cases {
            XCTAssertEqual(usageError(arguments), "unknown option '-i'; inputs are plain arguments: \(command)", "\(arguments)")
        }
        XCTAssertEqual(
            usageError(["a.mov", "b.mov", "out2.mp4"]),
            "missing '-o <file>': where should the merged video go? To write out2.mp4, say so with -o: vmerge a.mov b.mov -o out2.mp4")
        XCTAssertEqual(
            usageError(["--crf", "20", "a.mov", "--", "b.mov", "out2.mp4"]),
            "missing '-o <file>': where should the merged video go? To write out2.mp4, say so with -o: vmerge --crf 20 a.mov -o out2.mp4 -- b.mov")
        // A last name that is no output (or is there, so may be an input) gets no guess.
        XCTAssertEqual(usageError(["a.mov", "b.mov"]), "missing '-o <file>': where should the merged video go? To write b.mov, say so with -o: vmerge a.mov -o b.mov")
        XCTAssertEqual(usageError(["a.mov", "b.mkv"]), "missing '-o <file>': where should the merged video go?")
        XCTAssertEqual(usageError(["a.mov", "/"]), "missing '-o <file>': where should the merged video go?")
        // The escaped bytes of a name that is not UTF-8 come back as the same bytes.
        XCTAssertEqual(ShellWord.quoted("c" + String(FileName.escaped(0xFF)) + ".mov"), "$'c\\xFF.mov'")
        XCTAssertEqual(ShellWord.quoted("~x"), "'~x'")
        XCTAssertEqual(ShellWord.quoted(""), "''")
        XCTAssertEqual(ShellWord.quoted("a$b`c"), "'a$b`c'")
    }

    func testFfmpegAndHandBrakeSpellingsGetHints() {
        let input = ["a.mov", "-o", "out.mp4"]
        for (arguments, expected) in [
            (["-r", "25"], "unknown option '-r'; the frame rate is --fps 25"),
            (["-s", "640x480"], "unknown option '-s'; the size is --width 640 (the height follows from --aspect, 4:3 by default)"),
            (["-t", "60"], "unknown option '-t'; the output's length is --max-duration 60"),
            (["-ss", "5"], "unknown option '-ss'; a clip's start is --trim START,END after the file, e.g. a.mov --trim 5,"),
            (["-to", "8"], "unknown option '-to'; a clip's end is --trim START,END after the file, e.g. a.mov --trim ,8; the output's length is --max-duration"),
            (["-fs", "16M"], "unknown option '-fs'; the size limit is --max-size 16M"),
            (["-an"], "unknown option '-an'; vmerge always writes video and sound (silence where a clip has none)"),
            (
                ["-b:v", "1M"],
                "unknown option '-b:v'; vmerge sets the picture, not the bit rate: --crf 23 or --quality low|medium|high; --max-size caps the file"
            ),
            (["-q", "22"], "'-q' is --quiet in vmerge; HandBrake's quality is --crf 22 here"),
            (["-v", "error"], "'-v' is --verbose in vmerge and takes no value; -q prints only errors"),
            (["--quality", "22"], "invalid value '22' for '--quality': expected low, medium or high; a CRF is --crf 22"),
            (["--rate=24"], "unknown option '--rate'; the frame rate is --fps 24"),
            (["-i"], "unknown option '-i'; inputs are plain arguments: vmerge a.mov -o out.mp4"),
            (["-crf", "20"], "unknown option '-crf'; the CRF is --crf 20"),
            (["-r", "-y"], "unknown option '-r'; the frame rate is --fps 25"),
        ] {
            XCTAssertEqual(usageError(arguments + input), expected, "\(arguments)")
        }
        // The same in batch and watch, whose tables differ.
        XCTAssertEqual(usageError(["batch", "jobs.jsonl", "-r", "25"]), "unknown option '-r'; the frame rate is --fps 25")
        // batch has no --trim (a job's inputs carry their trims): the hint says whose option it is.
        XCTAssertEqual(
            usageError(["batch", "jobs.jsonl", "-ss", "5"]), "unknown option '-ss': what it does is '--trim' of vmerge, not of this command")
    }

    func testNoHintHidesARealOption() throws {
        for table in [MergeCommand.table, BatchCommand.table, WatchCommand.table] {
            let names = Set(table.map { "--" + $0.long } + table.compactMap { $0.short.map { "-\($0)" } })
            for hint in ForeignOptions.hints {
                XCTAssertTrue(names.isDisjoint(with: hint.spellings), "\(hint.spellings) shadows a vmerge option")
            }
        }
        // -q and -v before a word that is an existing file stay flags.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-hint-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let name = dir.appendingPathComponent("22").path
        _ = FileManager.default.createFile(atPath: name, contents: Data())
        XCTAssertEqual(request(["-q", name, "-o", "out.mp4"])?.job.inputPaths, [name])
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
