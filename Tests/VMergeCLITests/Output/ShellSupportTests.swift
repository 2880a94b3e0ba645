import Foundation
import VMergeCore
import XCTest

@testable import VMergeCLI

final class ShellSupportTests: XCTestCase {
    // MARK: Helpers

    /// `--min-duration` as it appears in roff.
    private func roff(_ option: String) -> String {
        option.replacingOccurrences(of: "-", with: #"\-"#)
    }

    /// The full path of `name` on PATH, or nil.
    private func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Runs `executable` with `arguments` in `directory`; returns its status, stdout and stderr.
    private func execute(_ executable: String, _ arguments: [String], in directory: URL? = nil) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }

    /// A new empty folder, removed after the test.
    private func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-shell-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// The completion script for `shell`, written to a file.
    private func scriptFile(_ shell: Shell, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("vmerge.\(shell.rawValue)")
        try Completions.script(for: shell).write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// A folder with videos (any case), other files and subfolders, for input completion.
    private func inputsFolder() throws -> URL {
        let folder = try temporaryFolder()
        for name in ["a.MOV", "b.mp4", "c clip.3gp", "notes.txt"] {
            _ = FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: Data())
        }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("sub"), withIntermediateDirectories: false)
        return folder
    }

    private func run(_ args: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let capture = Capture()
        let status = VMergeCLI.run(args, console: capture.console)
        return (status, capture.stdout, capture.stderr)
    }

    // MARK: Man page

    func testManPageSectionsInOrder() {
        let text = ManPage.text
        XCTAssertTrue(text.contains("\n.TH VMERGE 1 \"\(Help.date)\" \"vmerge \(Help.version)\" "), text)
        // The examples point to the man page's own sections, not to --help.
        XCTAssertFalse(text.contains("--help'"), text)
        XCTAssertTrue(text.contains("# see BATCH below"), text)
        let sections = [
            "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT", "EXAMPLES", "SEE ALSO",
        ]
        var previous = text.startIndex
        for section in sections {
            guard let range = text.range(of: "\n.SH \(section)\n") else { return XCTFail("no \(section) section") }
            XCTAssertGreaterThanOrEqual(range.lowerBound, previous, "\(section) out of order")
            previous = range.lowerBound
        }
        XCTAssertTrue(text.contains("\n.SH NAME\nvmerge \\- merge phone video clips into one small"), text)
        XCTAssertTrue(text.contains(#"\fBvmerge\fR [\fIoptions\fR] \fIinput\fR... \fB\-o\fR \fIoutput\fR"#), text)
        XCTAssertTrue(text.contains("\n.B NO_COLOR\n"))
        XCTAssertTrue(text.contains("\n.B VMERGE_DB\n"))
        // A section per subcommand, in help's order, after OPTIONS, each with its own options.
        previous = text.range(of: "\n.SH OPTIONS\n")!.upperBound
        for (section, option) in [
            ("BATCH", "shard"), ("WATCH", "settle"), ("QUEUE", "max\\-attempts"), ("WORKER", "lease"),
        ] {
            guard let range = text.range(of: "\n.SH \(section)\n", range: previous..<text.endIndex) else {
                XCTFail("no \(section) section, or out of order")
                continue
            }
            let body = text[range.upperBound...].components(separatedBy: "\n.SH ")[0]
            XCTAssertTrue(body.contains(#"\fB\-\-"# + option + #"\fR"#), "\(section): \(option)")
            previous = range.upperBound
        }
        XCTAssertTrue(text.hasSuffix("\n.SH SEE ALSO\n.BR ffmpeg (1)\n"))
    }

    func testManPageListsEveryOptionInTableOrder() {
        let text = ManPage.text
        var previous = text.range(of: "\n.SH OPTIONS\n")!.upperBound
        for spec in MergeCommand.table {
            var heading = spec.short.map { #"\fB\-\#($0)\fR, "# } ?? ""
            heading += #"\fB\#(roff("--" + spec.long))\fR"#
            if let value = spec.value { heading += #" <\fI\#(value)\fR>"# }
            guard let range = text.range(of: ".TP\n" + heading + "\n", range: previous..<text.endIndex) else {
                XCTFail("no entry, or out of order: \(heading)")
                continue
            }
            let help = text[range.upperBound...].prefix { $0 != "\n" }
            let firstWords = spec.help.split(separator: " ").prefix(3).joined(separator: " ")
            XCTAssertTrue(help.hasPrefix(ManPage.escape(firstWords)), "\(spec.long): \(help)")
            previous = range.upperBound
        }
        // The hidden options are named only in the comment at the top.
        XCTAssertFalse(text.contains(#"\-print"#), "hidden options listed")
    }

    func testManPageSharesHelpData() {
        let text = ManPage.text
        XCTAssertTrue(text.contains("\n" + ManPage.escape(Help.description) + "\n"))
        // Every command's exit table, in order: vmerge's, then batch's and watch's under their names.
        var previous = text.startIndex
        for command in Exit.Command.allCases {
            for row in Exit.table(for: command) {
                let entry = "\n.TP\n.B \(row.status)\n\(ManPage.escape(row.meaning))\n"
                let range = text.range(of: entry, range: previous..<text.endIndex)
                XCTAssertNotNil(range, "\(command) \(row.status)")
                previous = range.map { text.index(before: $0.upperBound) } ?? previous
            }
        }
        XCTAssertTrue(text.contains(#"\fBvmerge batch\fR:"#) && text.contains(#"\fBvmerge watch\fR:"#))
        for name in ["NO_COLOR", "TERM", "COLUMNS"] { XCTAssertTrue(text.contains("\n.B \(name)\n"), name) }
        for var example in Help.examples {
            // A note pointing to a subcommand's --help points to its section here.
            if let note = example.note, note.hasPrefix("see 'vmerge "), note.hasSuffix(" --help'") {
                example.note =
                    "see " + note.dropFirst("see 'vmerge ".count).dropLast(" --help'".count).uppercased() + " below"
            }
            for line in Help.exampleLines(example, width: ManPage.exampleWidth, indent: 0) {
                XCTAssertTrue(text.contains("\n" + ManPage.code(line) + "\n"), line)
                XCTAssertLessThanOrEqual(line.count, ManPage.exampleWidth, line)
            }
        }
        XCTAssertTrue(text.contains(#"\-\-min\-duration 0 \-\-quality high clips/*.mov \-o out.mp4 \-y"#))
    }

    func testRoffEscaping() {
        XCTAssertEqual(ManPage.escape(".hidden"), #"\&.hidden"#)
        XCTAssertEqual(ManPage.escape("'quoted"), #"\&'quoted"#)
        XCTAssertEqual(ManPage.escape(#"C:\path"#), #"C:\epath"#)
        XCTAssertEqual(ManPage.escape("see --min-duration and -q)"), #"see \-\-min\-duration and \-q)"#)
        XCTAssertEqual(ManPage.escape("one path per line ('-' = stdin)"), #"one path per line ('\-' = stdin)"#)
        XCTAssertEqual(ManPage.escape("web-ready, centre-cropped"), "web-ready, centre-cropped")
        XCTAssertEqual(ManPage.code(".x --y"), #"\&.x \-\-y"#)
        // No line starts with a control character unless it is one of our macros or a comment.
        let macros = [".TH ", ".SH ", ".TP", ".B ", ".BR ", ".PP", ".RS ", ".RE", ".nf", ".fi", #".\""#]
        for line in ManPage.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            XCTAssertFalse(line.isEmpty, "blank line in roff")
            if line.hasPrefix(".") || line.hasPrefix("'") {
                XCTAssertTrue(macros.contains { line.hasPrefix($0) }, String(line))
            }
        }
    }

    func testManPageRendersWithoutWarnings() throws {
        guard let groff = executable("groff") else { throw XCTSkip("groff is not installed") }
        let folder = try temporaryFolder()
        let page = folder.appendingPathComponent("vmerge.1")
        try ManPage.text.write(to: page, atomically: true, encoding: .utf8)
        let check = try execute(groff, ["-man", "-Tutf8", "-ww", "-z", page.path])
        XCTAssertEqual(check.status, 0)
        XCTAssertEqual(check.stderr, "")
        let rendered = try execute(groff, ["-man", "-Tascii", "-P", "-cbou", page.path])
        XCTAssertEqual(rendered.status, 0)
        XCTAssertTrue(rendered.stdout.contains("--min-duration <seconds>"), rendered.stdout)
        XCTAssertTrue(rendered.stdout.contains("vmerge - merge phone video clips"), rendered.stdout)
    }

    // MARK: Completion scripts

    func testScriptsNameEveryOptionAndChoice() {
        for shell in Shell.allCases {
            let script = Completions.script(for: shell)
            for spec in MergeCommand.table {
                // fish names options without their dashes: -l min-duration, -s o.
                let long = shell == .fish ? "-l \(spec.long) " : "--\(spec.long)"
                XCTAssertTrue(script.contains(long), "\(shell): \(spec.long)")
                if let short = spec.short {
                    XCTAssertTrue(script.contains(shell == .fish ? "-s \(short) " : "-\(short)"), "\(shell): -\(short)")
                }
                if case let .choice(words) = spec.kind {
                    XCTAssertTrue(script.contains(words.joined(separator: " ")), "\(shell): \(spec.long) \(words)")
                }
            }
            // The hidden options are named only in comments.
            for line in script.split(separator: "\n") where line.contains("print-") {
                XCTAssertTrue(line.hasPrefix("# "), "\(shell): hidden option completed: \(line)")
            }
            XCTAssertTrue(script.hasSuffix("\n"))
        }
        XCTAssertTrue(Completions.script(for: .bash).contains("\ncomplete -F _vmerge vmerge\n"))
        XCTAssertTrue(Completions.script(for: .zsh).hasPrefix("#compdef vmerge\n"))
        XCTAssertTrue(Completions.script(for: .zsh).contains("_arguments"))
        let fish = Completions.script(for: .fish)
        XCTAssertTrue(
            fish.contains(
                "\ncomplete -c vmerge -n 'not __fish_seen_subcommand_from batch watch queue worker dashboard' -s o -l output -r -F "
            ),
            fish)
        // fish offers each subcommand its own options only: after 'worker', no --output or --trim.
        let afterWorker = fish.split(separator: "\n").filter { $0.contains("__fish_seen_subcommand_from worker'") }
        let longName = { (line: Substring) -> String? in
            line.range(of: #" -l [a-z-]+"#, options: .regularExpression).map { String(line[$0].dropFirst(4)) }
        }
        XCTAssertEqual(Set(afterWorker.compactMap(longName)), Set(WorkerCommand.table.map(\.long)))
        // A file name after --poster; --retries' help whole ("waiting 2, 4, 8... s" is no sentence end).
        XCTAssertTrue(fish.contains(" -l poster -r -F "), fish)
        XCTAssertTrue(
            fish.contains(
                "Retry a job this many times after a transient error (write errors, a name taken), waiting 2, 4, 8... s'"
            ),
            fish)
    }

    func testSummaryIsFirstSentence() {
        XCTAssertEqual(Completions.summary("Print only errors."), "Print only errors")
        XCTAssertEqual(
            Completions.summary("Constant output frame rate: 30, 29.97 or 30000/1001. (default: 30)"),
            "Constant output frame rate: 30, 29.97 or 30000/1001")
        XCTAssertEqual(Completions.summary("Waits 2, 4, 8... s. Then stops."), "Waits 2, 4, 8... s")
        XCTAssertEqual(
            Completions.summary("A name (e.g. a.mov. Or b.mov) here. More."), "A name (e.g. a.mov. Or b.mov) here")
    }

    func testBashSyntax() throws {
        let script = try scriptFile(.bash, in: try temporaryFolder())
        let r = try execute("/bin/bash", ["-n", script.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
    }

    /// Runs `_vmerge` on each command line (the last word is completed) and returns the sorted candidates of each,
    /// joined by commas.
    private func bashCompletions(_ lines: [[String]], in folder: URL) throws -> [String] {
        let scripts = try temporaryFolder()
        let script = try scriptFile(.bash, in: scripts)
        var test = "source '\(script.path)'\n"
        for words in lines {
            let quotedWords = words.map { "'\($0)'" }.joined(separator: " ")
            test += """
                COMP_WORDS=(\(quotedWords)); COMP_CWORD=\(words.count - 1); COMPREPLY=(); _vmerge
                (IFS=,; printf '%s\\n' "${COMPREPLY[*]}")

                """
        }
        let file = scripts.appendingPathComponent("test.sh")
        try test.write(to: file, atomically: true, encoding: .utf8)
        let r = try execute("/bin/bash", [file.path], in: folder)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
        // Sorted here: the candidates' order is bash's (compgen's) business.
        return r.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
            $0.split(separator: ",").sorted().joined(separator: ",")
        }
    }

    func testBashCompletes() throws {
        let folder = try inputsFolder()
        let results = try bashCompletions(
            [
                ["vmerge", "--qu"], ["vmerge", "--quality", ""], ["vmerge", "--sort", "=", "m"],
                ["vmerge", "--progress", "="],
                ["vmerge", "--width", ""], ["vmerge", ""], ["vmerge", "-o", ""], ["vmerge", "n"],
                ["vmerge", "--", "-"],
                ["vmerge", "-y", "-"],
                ["vmerge", "batch", "--j"], ["vmerge", "watch", "--st"], ["vmerge", "watch", "--out", ""],
                ["vmerge", "batch", ""], ["vmerge", "ba"],
                ["vmerge", "q"], ["vmerge", "queue", ""], ["vmerge", "queue", "add", ""],
                ["vmerge", "queue", "retry", ""],
                ["vmerge", "queue", "--m"], ["vmerge", "worker", "--l"], ["vmerge", "worker", "--db", ""],
                ["vmerge", "worker", ""], ["vmerge", "dashboard", "--l"], ["vmerge", "dashboard", ""],
            ], in: folder)
        let options =
            (MergeCommand.table.map { "--\($0.long)" } + MergeCommand.table.compactMap { $0.short.map { "-\($0)" } })
        XCTAssertEqual(
            results,
            [
                "--quality,--quiet", "high,low,medium", "mtime", "auto,bar,json,none,plain",
                "", "a.MOV,b.mp4,batch,c clip.3gp,dashboard,queue,sub,watch,worker",
                "a.MOV,b.mp4,c clip.3gp,notes.txt,sub",
                "notes.txt", "",
                options.sorted().joined(separator: ","),
                "--jobs", "--status-file,--strict,--strip-metadata", "sub", "a.MOV,b.mp4,c clip.3gp,notes.txt,sub",
                "batch",
                "queue", "add,cancel,grants,init,pause,resume,retry,status", "a.MOV,b.mp4,c clip.3gp,notes.txt,sub", "",
                "--max-attempts,--max-duration,--max-pixels,--max-size,--min-duration,--min-free", "--lease", "", "",
                "--listen", "",
            ])
    }

    func testZshSyntax() throws {
        guard let zsh = executable("zsh") else { throw XCTSkip("zsh is not installed") }
        let script = try scriptFile(.zsh, in: try temporaryFolder())
        let r = try execute(zsh, ["-n", script.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
    }

    func testFishSyntax() throws {
        guard let fish = executable("fish") else { throw XCTSkip("fish is not installed") }
        let script = try scriptFile(.fish, in: try temporaryFolder())
        let r = try execute(fish, ["--no-execute", script.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
    }

    func testFishCompletes() throws {
        guard let fish = executable("fish") else { throw XCTSkip("fish is not installed") }
        let folder = try inputsFolder()
        let script = try scriptFile(.fish, in: try temporaryFolder())
        let lines = [
            "vmerge --qu", "vmerge --quality ", "vmerge --width ", "vmerge ", "vmerge -o ", "vmerge batch --j",
            "vmerge wat", "vmerge queue ", "vmerge queue add ", "vmerge worker --le", "vmerge worker --poll",
            // Each subcommand its own options: none of the merge's after worker and batch.
            "vmerge worker --o", "vmerge worker --", "vmerge batch --tr", "vmerge --poster ", "vmerge dashboard --",
            "vmerge dashboard ",
        ]
        let test =
            "source '\(script.path)'\n"
            + lines.map { line in
                "set -l r (complete -C '\(line)' | string replace -r '\\t.*' '' | env LC_ALL=C sort)\n"
                    + "echo (string join , -- $r)"
            }.joined(separator: "\n")
        let r = try execute(fish, ["--no-config", "-c", test], in: folder)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(
            r.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast(),
            [
                "--quality,--quiet", "high,low,medium", "",
                "a.MOV,b.mp4,batch,c clip.3gp,dashboard,queue,sub/,watch,worker",
                "a.MOV,b.mp4,c clip.3gp,notes.txt,sub/", "--jobs", "watch",
                "add,cancel,grants,init,pause,resume,retry,status",
                "a.MOV,b.mp4,c clip.3gp,notes.txt,sub/", "--lease", "--poll-interval",
                "--once",
                "--allow-remote,--db,--help,--jobs,--lease,--metrics-listen,--name,--notify,--notify-secret-file,"
                    + "--notify-wait,--once,--poll-interval,--quiet,--verbose",
                "",
                "a.MOV,b.mp4,c clip.3gp,notes.txt,sub/",
                "--allow-inputs,--allow-outputs,--allow-remote,--api-tokens,--connections-per-client,--db,--help,--listen,--max-attempts,"
                    + "--max-queued,--quiet,--token-file,--watch", "",
            ])
    }

    // MARK: Hidden options

    func testPrintManPageAndCompletions() {
        let man = run(["--print-man-page"])
        XCTAssertEqual(man.status, 0)
        XCTAssertEqual(man.stdout, ManPage.text)
        XCTAssertEqual(man.stderr, "")
        for shell in Shell.allCases {
            for args in [["--print-completion", shell.rawValue], ["--print-completion=\(shell.rawValue)"]] {
                let r = run(args)
                XCTAssertEqual(r.status, 0, "\(args)")
                XCTAssertEqual(r.stdout, Completions.script(for: shell), "\(args)")
                XCTAssertEqual(r.stderr, "", "\(args)")
            }
        }
    }

    func testHiddenOptionUsageErrors() {
        let r = run(["--print-completion", "tcsh"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stdout, "")
        XCTAssertTrue(
            r.stderr.hasPrefix("vmerge: invalid value 'tcsh' for '--print-completion': expected bash, zsh or fish\n"),
            r.stderr)
        let cases: [([String], String)] = [
            (["--print-completion"], "missing value for '--print-completion <shell>'"),
            (["--print-completion", "bash", "zsh"], "unexpected argument 'zsh' after '--print-completion'"),
            (["--print-man-page", "a.mov"], "unexpected argument 'a.mov' after '--print-man-page'"),
            (["--print-man-page=yes"], "'--print-man-page' takes no value"),
            // Only as the first argument.
            (["a.mov", "--print-man-page"], "unknown option '--print-man-page'"),
        ]
        for (args, message) in cases {
            let r = run(args)
            XCTAssertEqual(r.status, Exit.usage.status, "\(args)")
            XCTAssertTrue(r.stderr.hasPrefix("vmerge: \(message)"), "\(args): \(r.stderr)")
        }
    }

    func testHiddenOptionsAreNotInHelp() {
        XCTAssertFalse(Help.text().contains("print-"))
        XCTAssertFalse(MergeCommand.table.contains { $0.long.hasPrefix("print-") })
        XCTAssertEqual(try ArgumentParser.parse(["--print-completion", "zsh"]), .completion(.zsh))
        XCTAssertEqual(try ArgumentParser.parse(["--print-man-page"]), .manPage)
    }
}
