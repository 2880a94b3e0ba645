import XCTest

@testable import VMergeCLI
@testable import VMergeCore
@testable import VMergeJobs
@testable import VMergeQueue

/// How the command line is read: inputs and the output, flags and values, --, unknown and missing
/// options, -q/-v, --help and --version, suggestions, the merge's option table.
final class ArgumentParserTests: ArgumentParserTestCase {
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
        XCTAssertEqual(
            request(["--fps", "30000/1001", "a", "-o", "o.mp4"])?.job.options.frameRate, Rational(30000, 1001))
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
                "invalid value '\(text)' for '--min-duration': not a time (seconds such as 1.5, or m:ss such as 1:02.5)",
                text)
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
            "missing '-o <file>': where should the merged video go? To write b.mov, say so with -o: vmerge a.mov -o b.mov -y"
        )
        XCTAssertEqual(usageError(["-o", "out.mp4"]), "no input files given")
        XCTAssertEqual(usageError([]), "no input files and no output given")
        XCTAssertEqual(usageError(["-y"]), "no input files and no output given")
    }

    func testStdoutOutputIsRefused() {
        XCTAssertEqual(
            usageError(["a.mov", "-o", "-"]), "cannot write to stdout: a faststart MP4 needs a seekable file")
    }

    func testQuietAndVerbose() {
        XCTAssertEqual(
            usageError(["-q", "-v", "a", "-o", "o.mp4"]), "'--quiet' and '--verbose' cannot be used together")
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
                "quality", "crf", "preset", "tonemap", "skip-deblocking", "loudness", "chapters", "poster", "poster-at",
                "skip-invalid", "strict", "strip-metadata", "max-pixels", "max-duration", "max-size", "min-free",
                "rendition",
                "delete-sources", "trim", "inputs-from", "sort",
                "dry-run", "report", "allow-remote", "notify", "notify-secret-file", "notify-wait", "progress",
                "progress-fd", "quiet", "verbose", "help", "version",
            ])
        XCTAssertEqual(Set(MergeCommand.table.map(\.long)).count, MergeCommand.table.count)
        let shorts = MergeCommand.table.compactMap(\.short)
        XCTAssertEqual(shorts, ["o", "y", "n", "q", "v", "h"])
        XCTAssertEqual(MergeCommand.table[0].display, "-o, --output <file>")
        XCTAssertEqual(MergeCommand.table[2].display, "    --min-duration <seconds>")
        XCTAssertEqual(MergeCommand.table[1].display, "-y, --overwrite")
    }
}
