import XCTest

@testable import VMergeCLI
@testable import VMergeCore
@testable import VMergeJobs
@testable import VMergeQueue

/// Other tools' spellings get a hint naming the vmerge way: ffmpeg's -i and a last name without -o
/// shown back as the vmerge command, ffmpeg's and HandBrake's options named in vmerge's words; no
/// hint hides a real option. (More of what other tools' users type is in OtherToolsTests.)
final class ForeignOptionHintTests: ArgumentParserTestCase {
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
        XCTAssertEqual(request(["-q", name, "-o", "out.mp4"])?.job.inputPaths, [FileName(name)])
    }
}
