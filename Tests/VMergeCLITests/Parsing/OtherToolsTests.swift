import Foundation
import TestSupport
import XCTest

@testable import VMergeCLI
@testable import VMergeCore

/// What an ffmpeg, HandBrakeCLI or sox user types: a hint that names the word as typed and
/// suggests only what vmerge then accepts; an option given twice; spellings of other subcommands.
final class OtherToolsTests: XCTestCase {
    private func refusal(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            let command = try ArgumentParser.parse(args)
            XCTFail("expected a usage error for \(args), got \(command)", file: file, line: line)
        } catch {
            return (error as? UsageError)?.description
        }
        return nil
    }

    private func parses(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> MergeCommand? {
        do {
            guard case let .run(command as MergeCommand) = try ArgumentParser.parse(args) else { return nil }
            return command
        } catch {
            XCTFail("\(args): \(error)", file: file, line: line)
            return nil
        }
    }

    /// ffmpeg's single-dash words are named whole, never read as letters (-nostdin was -n plus
    /// "-o stdin": a dry run with no output and exit 0).
    func testSingleDashWordsAreNamedAsTyped() {
        let merge = ["a.mov", "-o", "o.mp4"]
        for (word, says) in [
            ("-nostdin", "vmerge reads stdin only for '--inputs-from -'"),
            ("-threads", "vmerge uses every core itself"),
            ("-pix_fmt", "vmerge always writes 8-bit 4:2:0 (yuv420p)"),
            ("-progress", "progress is --progress bar|plain|json|none"),
            ("-metadata", "--strip-metadata drops them"),
            ("-hwaccel", "vmerge decodes and encodes in software"),
            ("-qscale", "the picture's quality is --crf 23"),
            ("-input", "inputs are plain arguments"),
            ("-x264-params", "vmerge sets x264 itself"),
            ("-shortest", "vmerge keeps each clip's sound with its pictures itself"),
        ] {
            let said = refusal([word, "2"] + merge) ?? ""
            XCTAssertTrue(said.hasPrefix("unknown option '\(word)'; "), "\(word): \(said)")
            XCTAssertTrue(said.contains(says), "\(word): \(said)")
        }
        // A word with a letter vmerge has no flag for is named whole; so is a long name with one dash.
        XCTAssertEqual(refusal(["-yx"] + merge), "unknown option '-yx'")
        XCTAssertEqual(refusal(["-output", "o.mp4", "a.mov"]), "unknown option '-output'. Did you mean '--output'?")
        XCTAssertEqual(refusal(["-verbose"] + merge), "unknown option '-verbose'. Did you mean '--verbose'?")
        XCTAssertEqual(refusal(["-k"] + merge), "unknown option '-k'")
        // Clusters of vmerge's own flags still split, and -o still takes what follows it.
        XCTAssertEqual(parses(["-yqn", "a.mov", "-ofile.mp4"])?.job.output, "file.mp4")
    }

    /// A hint's suggestion works as given: values are translated, or the hint says how.
    func testHintsSuggestWhatVmergeAccepts() throws {
        let merge = ["a.mov", "-o", "o.mp4"]
        XCTAssertEqual(
            refusal(["-t", "00:00:02"] + merge), "unknown option '-t'; the output's length is --max-duration 00:00:02")
        XCTAssertEqual(parses(["--max-duration", "00:00:02"] + merge)?.job.options.maxDuration, 2)
        for (size, width) in [("hd720", "1280"), ("640x480", "640"), ("853x480", "852"), ("vga", "640"), ("HD1080", "1920")] {
            let said = try XCTUnwrap(refusal(["-s", size] + merge))
            XCTAssertTrue(said.contains("--width \(width) "), "\(size): \(said)")
            XCTAssertEqual(parses(["--width", width] + merge)?.job.options.width, Int(width))
        }
        XCTAssertTrue(refusal(["-s", "huge"] + merge)?.contains("--width <even pixels, 16 to 7680>") == true)
        // Not 4:3: the aspect too, so the picture has the shape asked for.
        XCTAssertEqual(
            refusal(["-s", "hd720"] + merge),
            "unknown option '-s'; the size is --width 1280 --aspect 16:9 (the height follows from the aspect)")
        XCTAssertEqual(parses(["--width", "1280", "--aspect", "16:9"] + merge)?.job.options.outputSize.height, 720)
        // A value the vmerge option would refuse is not passed on: the hint shows one that works.
        for (typed, said) in [
            (["-t", "1:75"], "--max-duration 60"), (["-t", "-5"], "--max-duration 60"), (["-r", "abc"], "--fps 25"),
            (["-r", "241"], "--fps 25"), (["-crf", "99"], "--crf 23"), (["-fs", "abc"], "--max-size 16M"),
            (["-ss", "1:75"], "--trim 2.5,"), (["-aspect", "0:0"], "--aspect 4:3"),
        ] {
            XCTAssertTrue(refusal(typed + merge)?.contains(said) == true, "\(typed): \(refusal(typed + merge) ?? "")")
        }
        // A command without the option the hint points to says which commands have it.
        XCTAssertEqual(
            refusal(["worker", "-s", "hd720"]),
            "unknown option '-s': what it does is '--width' of vmerge, vmerge batch, vmerge watch and vmerge queue, not of this command")
        XCTAssertEqual(
            refusal(["a.mov", "-o=o.mp4"]), "'-o=o.mp4': a single-letter option takes its value without '=': -o o.mp4, or --output=o.mp4")
        XCTAssertEqual(refusal(["queue", "status", "--db", "password=a", "--db", "password=b"]), "'--db' is given twice; give it once")
        // sox: -r is the sample rate, -c the channels, -t the file type, -v the volume.
        XCTAssertEqual(
            refusal(["-r", "44100"] + merge), "unknown option '-r'; vmerge writes AAC at 44.1 kHz stereo; the frame rate is --fps")
        XCTAssertEqual(refusal(["-r", "25"] + merge), "unknown option '-r'; the frame rate is --fps 25")
        XCTAssertEqual(refusal(["-c", "2"] + merge), "unknown option '-c'; vmerge writes stereo sound (AAC, 44.1 kHz)")
        XCTAssertEqual(refusal(["-c", "copy"] + merge), "unknown option '-c'; vmerge always writes H.264 and AAC")
        XCTAssertEqual(
            refusal(["-t", "wav"] + merge), "unknown option '-t'; the container follows the name given to -o: .mp4, .m4v or .mov")
        XCTAssertEqual(
            refusal(["-v", "0.5"] + merge), "'-v' is --verbose in vmerge and takes no value; the sound's level is --loudness -16")
        XCTAssertTrue(refusal(["--norm"] + merge)?.contains("--loudness -16") == true)
        XCTAssertTrue(refusal(["--combine", "concatenate"] + merge)?.contains("joins its inputs in the order given") == true)
    }

    /// Every duration option reads what --trim reads: seconds, m:ss, h:mm:ss.
    func testEveryDurationOptionTakesMinutesAndSeconds() throws {
        let merge = ["a.mov", "-o", "o.mp4"]
        let options = try XCTUnwrap(
            parses(["--max-duration", "1:30", "--min-duration", "0:01.5", "--poster-at", "0:00:02"] + merge)?.job.options)
        XCTAssertEqual(options.maxDuration, 90)
        XCTAssertEqual(options.minDuration, 1.5)
        XCTAssertEqual(options.posterAt, 2)
        guard
            case let .run(watch as WatchCommand) = try ArgumentParser.parse([
                "watch", "in", "--out", "o", "--settle", "1:00",
            ]),
            case let .run(worker as WorkerCommand) = try ArgumentParser.parse([
                "worker", "--lease", "1:00", "--poll-interval", "0:00.5",
            ])
        else { return XCTFail("watch, worker") }
        XCTAssertEqual(watch.watch.settle, 60)
        XCTAssertEqual(worker.settings.lease, 60)
        XCTAssertEqual(worker.settings.pollInterval, 0.5)
        // The same in a job file, and the same key as the seconds.
        var base = JobSettings()
        try JobOption.maxDuration.apply("90", to: &base)
        var given = JobSettings()
        try JobOption.maxDuration.apply("1:30", to: &given)
        XCTAssertEqual(given, base)
        XCTAssertEqual(
            JobKey.make(inputs: ["/a.mov"], root: nil, options: given.merge),
            JobKey.make(inputs: ["/a.mov"], root: nil, options: base.merge))
        XCTAssertEqual(
            refusal(["--max-duration", "1:75"] + merge),
            "invalid value '1:75' for '--max-duration': not a time: seconds after a ':' must be under 60")
        XCTAssertEqual(refusal(["--max-duration", "0x10"] + merge)?.hasPrefix("invalid value '0x10'"), true)
    }

    /// Seeded: a time written as seconds, m:ss or h:mm:ss reads as the same number of seconds,
    /// on the command line and in a job file, and keys the same job (VMERGE_TIME_SEED to vary).
    func testEveryWayOfWritingATimeReadsTheSame() throws {
        var seed = UInt64(ProcessInfo.processInfo.environment["VMERGE_TIME_SEED"] ?? "") ?? 7
        for _ in 0..<300 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let millis = 100 + Int((seed >> 20) % 36_000_000)  // 0.1 s to 10 h
            let (h, m, s) = (millis / 3_600_000, millis / 60_000 % 60, Double(millis % 60_000) / 1000)
            let seconds = Double(millis) / 1000
            let forms = [
                String(format: "%.3f", seconds), String(format: "%d:%06.3f", h * 60 + m, s),
                String(format: "%d:%02d:%06.3f", h, m, s),
            ]
            var keys: Set<String> = []
            for form in forms {
                let given = try XCTUnwrap(
                    parses(["--max-duration", form, "--poster-at", form, "a.mov", "-o", "o.mp4"])?.job.options, form)
                XCTAssertEqual(try XCTUnwrap(given.maxDuration, form), seconds, accuracy: 1e-9, form)
                XCTAssertEqual(try XCTUnwrap(given.posterAt, form), seconds, accuracy: 1e-9, form)
                var file = JobSettings()
                try JobOption.maxDuration.apply(form, to: &file)
                XCTAssertEqual(file.merge.maxDuration, given.maxDuration, form)
                keys.insert(JobKey.make(inputs: ["/a.mov"], root: nil, options: file.merge))
            }
            XCTAssertEqual(keys.count, 1, "one job however the time is written: \(forms)")
        }
    }

    /// An option given twice is a mistake said at once, not the last one silently winning.
    func testAnOptionGivenTwiceIsRefused() {
        XCTAssertEqual(
            refusal(["a.mov", "-o", "one.mp4", "-o", "two.mp4"]),
            "'--output' is given twice ('one.mp4', then 'two.mp4'); give it once")
        XCTAssertEqual(
            refusal(["a.mov", "-o", "o.mp4", "--width", "640", "--width=480"]),
            "'--width' is given twice ('640', then '480'); give it once")
        XCTAssertEqual(
            refusal(["worker", "--lease", "5", "--lease", "6"]), "'--lease' is given twice ('5', then '6'); give it once")
        // Flags may repeat, and so may --allow-inputs (each a folder).
        XCTAssertEqual(parses(["-y", "-y", "a.mov", "-o", "o.mp4"])?.job.options.overwrite, true)
        let folder = FileManager.default.temporaryDirectory.path
        guard case let .run(watch as WatchCommand) = try? ArgumentParser.parse(
            ["watch", "in", "--out", "o", "--allow-inputs", folder, "--allow-inputs", "/"])
        else { return XCTFail("watch") }
        XCTAssertEqual(watch.watch.allowedInputs.count, 2)
    }

    /// Another command's spelling is named as theirs, with this command's own.
    func testOtherCommandsSpellingsAreKnown() {
        XCTAssertEqual(
            refusal(["a.mov", "--out", "o.mp4"]),
            "unknown option '--out'. Did you mean '--output'? ('--out' is vmerge batch's, vmerge watch's and vmerge queue's)")
        XCTAssertEqual(
            refusal(["batch", "jobs.jsonl", "--output", "x"]),
            "unknown option '--output'. Did you mean '--out'? ('--output' is vmerge's)")
        XCTAssertEqual(
            refusal(["worker", "--settle", "5"]), "unknown option '--settle' ('--settle' is vmerge watch's)")
        XCTAssertEqual(refusal(["a.mov", "-o", "o.mp4", "--widht", "640"]), "unknown option '--widht'. Did you mean '--width'?")
        // A letter another command has: named as theirs, with this command's nearest option.
        XCTAssertEqual(
            refusal(["batch", "jobs.jsonl", "-o", "out"]), "unknown option '-o'. Did you mean '--out'? ('-o' is vmerge's '--output')")
        XCTAssertEqual(refusal(["watch", "in", "--out", "o", "-j", "2"]), "unknown option '-j' ('-j' is vmerge batch's '--jobs')")
        XCTAssertEqual(refusal(["a.mov", "-o", "o.mp4", "-k"]), "unknown option '-k'")
    }

    /// The README's table is what vmerge says to each word (written out when it is not).
    func testTheREADMEsTableIsWhatVmergeSays() throws {
        let text = try Documentation.allText()
        let header = "| you typed | from | vmerge says |"
        let start = try XCTUnwrap(text.range(of: header), "the README has the hints table").lowerBound
        let table = String(text[start...].prefix { _ in true }).components(separatedBy: "\n\n")[0] + "\n"
        if table != ForeignOptions.markdownTable {
            try? ForeignOptions.markdownTable.write(toFile: "/tmp/vmerge-hints-table.md", atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(table, ForeignOptions.markdownTable, "the table as vmerge says it: /tmp/vmerge-hints-table.md")
    }
}
