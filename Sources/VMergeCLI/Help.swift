import VMergeJobs

/// The text of `vmerge --help`, built from the option table.
///
/// The summary, description, arguments, exit statuses and examples are data shared with the man page
/// (`ManPage.text`), so the two cannot drift apart.
enum Help {
    static let version = JobRunner.version

    /// One line: what vmerge does.
    static let summary = "Merge phone video clips into one small, upright, web-ready MP4."

    /// The description paragraph, in the lines `--help` prints (the man page refills them).
    static let description = [
        "Clips are joined in the order given. Each is turned upright from its rotation/mirror",
        "matrix, centre-cropped to the output aspect, scaled, and encoded as H.264 + AAC in an",
        "MP4 with its index at the front (plays while it downloads). Clips shorter than",
        "--min-duration are dropped; a clip without sound contributes silence.",
    ]

    static let usage = "vmerge [options] <input>... -o <output>"

    /// Positional arguments: name and meaning.
    static let arguments: [(name: String, help: String)] = [
        (
            "<input>",
            "Video files (.mov, .mp4, ...) merged in this order, or folders: their .mov .mp4 .m4v .3gp "
                + "files in natural name order (clip2 before clip10)."
        )
    ]

    /// Exit statuses: status and meaning.
    static let exitStatuses: [(status: String, meaning: String)] = [
        ("\(ExitStatus.success)", "the output was written"),
        ("\(ExitStatus.failure)", "processing error (unreadable input, encoding or disk error); no output is left"),
        ("\(ExitStatus.usage)", "usage error (unknown option, bad value, missing argument)"),
        ("\(ExitStatus.nothingToMerge)", "nothing to merge: every clip was dropped"),
        ("130", "interrupted (SIGINT); 143 terminated (SIGTERM); no output is left, the report says cancelled"),
    ]

    /// Example command lines.
    static let examples = [
        "vmerge a.mov b.mov c.mov -o out.mp4",
        "vmerge --min-duration 0 --quality high clips/*.mov -o out.mp4 -y",
        "vmerge recordings/ -o out.mp4 --report out.json --progress json",
        "find . -name '*.mov' | vmerge --inputs-from - --sort name --max-size 160M -o out.mp4",
        "vmerge --dry-run *.mov -o out.mp4",
        "vmerge batch jobs.jsonl --report batch.json    (see 'vmerge batch --help')",
        "vmerge watch inbox/ --out outbox/              (see 'vmerge watch --help')",
    ]

    static var text: String {
        var lines = ["OVERVIEW: " + summary, ""] + description + ["", "USAGE: " + usage, "", "ARGUMENTS:"]
        for argument in arguments {
            lines.append(column("  " + argument.name, 26) + wrap(argument.help, width: 70, indent: 26))
        }
        lines += ["", "OPTIONS:"]
        for spec in OptionSpec.all {
            let name = "  " + spec.display
            let pad =
                name.count < 26
                ? String(repeating: " ", count: 26 - name.count) : "\n" + String(repeating: " ", count: 26)
            lines.append(name + pad + wrap(spec.help, width: 70, indent: 26))
        }
        lines += ["", "EXIT STATUS:"]
        for row in exitStatuses {
            lines.append(column("  " + row.status, 7) + row.meaning)
        }
        lines += ["", "EXAMPLES:"] + examples.map { "  " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    static var batchText: String {
        subcommandText(
            overview: [
                "Run many merges: one per line of a JSONL job list, or one per subfolder of a folder.",
                "Jobs already done (the output records the same inputs and options) are skipped, so a",
                "batch re-run after a crash does only what is missing. A failing job does not stop the",
                "others.",
            ],
            usage: "vmerge batch <jobs.jsonl | folder> [--out <dir>] [options]",
            table: OptionSpec.batch,
            exit: [
                ("0", "every job succeeded or was already done"), ("1", "at least one job failed"),
                ("2", "usage error"), ("130", "interrupted (SIGINT); 143 terminated (SIGTERM)"),
            ],
            examples: [
                #"vmerge batch jobs.jsonl -j 2 --report batch.json   # {"inputs":["a.mov","b.mov"],"output":"ab.mp4"}"#,
                "vmerge batch recordings/ --out merged/ --shard 0/3",
            ])
    }

    static var watchText: String {
        subcommandText(
            overview: [
                "Watch a folder and merge what arrives, until SIGINT/SIGTERM. A subfolder is a job once it",
                "holds the marker (.ready) or a job.json; a loose video file once it has settled. Jobs are",
                "claimed by an atomic rename into .processing/, so several watchers may share one inbox;",
                "outputs go to --out with a JSON report, sources to .done/ (or are deleted), failures to",
                ".failed/ with an error.json. A worker killed at any moment is recovered on restart.",
            ],
            usage: "vmerge watch <inbox> --out <dir> [options]",
            table: OptionSpec.watch,
            exit: [
                ("0", "stopped by SIGINT/SIGTERM, or --once finished with every job done"),
                ("1", "--once: at least one job failed; or the inbox or output folder is unusable"),
                ("2", "usage error"),
            ],
            examples: [
                "vmerge watch inbox/ --out outbox/ --status-file /run/vmerge.json",
                "vmerge watch inbox/ --out outbox/ --once --delete-sources",
            ])
    }

    private static func subcommandText(
        overview: [String], usage: String, table: [OptionSpec], exit: [(String, String)], examples: [String]
    ) -> String {
        var lines = ["OVERVIEW: " + overview[0]] + overview.dropFirst() + ["", "USAGE: " + usage, "", "OPTIONS:"]
        for spec in table {
            let name = "  " + spec.display
            let pad =
                name.count < 26
                ? String(repeating: " ", count: 26 - name.count) : "\n" + String(repeating: " ", count: 26)
            lines.append(name + pad + wrap(spec.help, width: 70, indent: 26))
        }
        lines += ["", "EXIT STATUS:"] + exit.map { column("  " + $0.0, 7) + $0.1 }
        lines += ["", "EXAMPLES:"] + examples.map { "  " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` padded with spaces to `width` columns.
    private static func column(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }

    /// Wraps `text` to `width` columns, continuation lines indented by `indent`.
    private static func wrap(_ text: String, width: Int, indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n" + String(repeating: " ", count: indent))
    }
}
