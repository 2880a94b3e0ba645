import VMergeCore
import VMergeJobs

/// The text of `vmerge --help` (and of `batch --help`, `watch --help`), built from the option
/// table and wrapped at word boundaries to the terminal's width.
///
/// The summary, description, arguments, exit statuses and examples are data shared with the man page
/// (`ManPage.text`), so the two cannot drift apart.
enum Help {
    static let version = JobRunner.version
    /// The month of this version, for the man page's header.
    static let date = "December 2026"

    /// One line: what vmerge does.
    static let summary = "Merge phone video clips into one small, upright, web-ready MP4."

    /// The description paragraph (wrapped to the width; the man page lets roff fill it).
    static let description =
        "Clips are joined in the order given. Each is turned upright from its rotation/mirror matrix, "
        + "centre-cropped to the output aspect, scaled, and encoded as H.264 + AAC in an MP4 with its index "
        + "at the front (plays while it downloads). Clips shorter than --min-duration are dropped; a clip "
        + "without sound contributes silence."

    static let usage = "vmerge [options] <input>... -o <output>"

    /// Positional arguments: name and meaning.
    static let arguments: [(name: String, help: String)] = [
        (
            "<input>",
            "Video files (.mov, .mp4, ...) merged in this order, or folders: their .mov .mp4 .m4v .3gp "
                + "files in natural name order (clip2 before clip10)."
        )
    ]

    /// A command line to show, with what it does when that is not obvious.
    struct Example: Sendable {
        let command: String
        var note: String?
    }

    static let examples = [
        Example(command: "vmerge a.mov b.mov c.mov -o out.mp4"),
        Example(command: "vmerge --min-duration 0 --quality high clips/*.mov -o out.mp4 -y"),
        Example(command: "vmerge recordings/ -o out.mp4 --report out.json --progress json"),
        Example(command: "find . -name '*.mov' | vmerge --inputs-from - --sort name --max-size 160M -o out.mp4"),
        Example(command: "vmerge --dry-run *.mov -o out.mp4"),
        Example(command: "vmerge a.mov --trim 2.5,8 b.mov --trim ,4 -o out.mp4", note: "a from 2.5 s to 8 s, b's first 4 s"),
        Example(command: "vmerge batch jobs.jsonl --report batch.json", note: "see 'vmerge batch --help'"),
        Example(command: "vmerge watch inbox/ --out outbox/", note: "see 'vmerge watch --help'"),
        Example(command: "vmerge queue add --db postgresql:///vmerge jobs.jsonl", note: "see 'vmerge queue --help'"),
        Example(command: "vmerge worker --db postgresql:///vmerge -j 2", note: "see 'vmerge worker --help'"),
        Example(command: "vmerge dashboard --db postgresql:///vmerge", note: "see 'vmerge dashboard --help'"),
    ]

    /// `vmerge batch`, `vmerge watch`, `vmerge queue` and `vmerge worker`.
    struct Subcommand: Sendable {
        let exit: Exit.Command
        let overview: String
        let usage: String
        let table: [OptionSpec]
        let examples: [Example]
    }

    static let batch = Subcommand(
        exit: .batch,
        overview: "Run many merges: one per line of a JSONL job list, or one per subfolder of a folder. Jobs "
            + "already done (the output records the same inputs and options) are skipped, so a batch re-run "
            + "after a crash does only what is missing. A failing job does not stop the others.",
        usage: "vmerge batch <jobs.jsonl | folder> [--out <dir>] [options]",
        table: BatchCommand.table,
        examples: [
            Example(
                command: "vmerge batch jobs.jsonl -j 2 --report batch.json",
                note: #"a line of jobs.jsonl: {"inputs":["a.mov","b.mov"],"output":"ab.mp4"}"#),
            Example(command: "vmerge batch recordings/ --out merged/ --shard 0/3"),
        ])

    static let watch = Subcommand(
        exit: .watch,
        overview: "Watch a folder and merge what arrives, until SIGINT/SIGTERM. A subfolder is a job once it "
            + "holds the marker (.ready) or a job.json; a loose video file once it has settled. Jobs are "
            + "claimed by an atomic rename into .processing/, so several watchers may share one inbox; "
            + "outputs go to --out with a JSON report, sources to .done/ (or are deleted), failures to "
            + ".failed/ with an error.json. A worker killed at any moment is recovered on restart.",
        usage: "vmerge watch <inbox> --out <dir> [options]",
        table: WatchCommand.table,
        examples: [
            Example(command: "vmerge watch inbox/ --out outbox/ --status-file /run/vmerge.json"),
            Example(command: "vmerge watch inbox/ --out outbox/ --once --delete-sources"),
        ])

    static let queue = Subcommand(
        exit: .queue,
        overview: "A job queue in PostgreSQL, for workers on many machines. 'init' creates the queue's tables (or "
            + "brings them up to date; safe to run again). 'grants' prints the SQL that gives a role what a worker, "
            + "or a dashboard that only reads, needs (for the queue's owner to run: psql). 'add' queues the jobs "
            + "of a job list or a folder, as 'vmerge batch' reads them, with absolute paths, once their inputs are "
            + "found here; a job already queued (same inputs, options and "
            + "output) is not added again; the merge options below apply to its jobs as batch-wide ones do in "
            + "batch. 'status' lists the jobs and how many are in each state. 'retry' "
            + "queues failed or cancelled jobs again; 'cancel' cancels queued or running ones. 'pause' makes "
            + "workers claim nothing new (running jobs go on to their end; queued ones stay queued) until "
            + "'resume'.",
        usage: "vmerge queue <init | grants <--worker | --reader> <role> | add <jobs.jsonl | folder> | status | "
            + "retry <id>... | cancel <id>... | pause | resume> --db <url> [options]",
        table: QueueCommand.table,
        examples: [
            Example(command: "export VMERGE_DB='host=db.example dbname=vmerge user=vmerge'"),
            Example(command: "vmerge queue init"),
            Example(command: "vmerge queue grants --worker vmerge_worker | psql -v ON_ERROR_STOP=1 \"$VMERGE_DB\""),
            Example(command: "vmerge queue add recordings/ --out /srv/merged --quality high"),
            Example(command: "vmerge queue status --json"),
            Example(command: "vmerge queue retry 12 13"),
            Example(command: "vmerge queue pause", note: "and later: vmerge queue resume"),
        ])

    static let worker = Subcommand(
        exit: .worker,
        overview: "Run the queue's jobs ('vmerge queue'), with the job runner batch uses, until SIGINT/SIGTERM: "
            + "running jobs are then cancelled and put back in the queue. Any number of workers on any number of "
            + "machines may share one queue; each claim is a lease that a heartbeat renews, and a job whose worker "
            + "stopped renewing it (killed, machine gone, network cut) is claimed again once it has run out. A bad "
            + "input fails the job at once; output-side errors are retried with a backoff until the job's attempts "
            + "('queue add --max-attempts') are used up. An output already holding its job's result is recorded done without work. The database "
            + "going away stops neither the worker nor its running jobs: it reconnects, and records what they "
            + "ended with once the database is back.",
        usage: "vmerge worker --db <url> [-j <n>] [--once] [options]",
        table: WorkerCommand.table,
        examples: [
            Example(command: "VMERGE_DB='host=db.example dbname=vmerge user=vmerge' vmerge worker -j 2"),
            Example(command: "vmerge worker --db postgresql:///vmerge --once", note: "until the queue is empty"),
        ])

    static let dashboard = Subcommand(
        exit: .dashboard,
        overview: "Serve a web page over the queue ('vmerge queue') and its metrics for Prometheus at /metrics, "
            + "until SIGINT/SIGTERM. Both are read from the database at each request; a database that cannot be "
            + "read within 3 s shows as such (vmerge_database_up 0) and the server goes on. The page also shows "
            + "the watch folders whose status files --watch names. It updates itself every 2 s (without scripts, it "
            + "reloads every 10 s). It only reads unless --token-file is given: then a browser signed in with the "
            + "token can retry and cancel jobs and pause and resume the queue.",
        usage: "vmerge dashboard [--db <url>] [--watch <path>]... [--listen <address:port>]... [--token-file <file>]",
        table: DashboardCommand.table,
        examples: [
            Example(command: "vmerge dashboard --db postgresql:///vmerge", note: "http://127.0.0.1:8080/"),
            Example(command: "vmerge dashboard --watch /run/vmerge-watch-trips/status.json", note: "watch folders only"),
            Example(command: "curl -s http://127.0.0.1:8080/metrics"),
            Example(
                command: "vmerge dashboard --db postgresql:///vmerge --listen 127.0.0.1:8080 --listen unix:/run/vmerge/dashboard.sock",
                note: "and a Unix socket, its owner's only"),
            Example(command: "curl -s --unix-socket /run/vmerge/dashboard.sock http://localhost/metrics"),
            Example(
                command: "(umask 077; head -c 24 /dev/urandom | base64 > ~/.vmerge-token); vmerge dashboard --token-file ~/.vmerge-token",
                note: "actions on"),
            Example(command: "curl -s -X POST -H \"Authorization: Bearer $(cat ~/.vmerge-token)\" http://127.0.0.1:8080/jobs/12/retry"),
        ])

    /// The subcommands, in the order help and the man page list them.
    static let subcommands = [batch, watch, queue, worker, dashboard]

    /// The width help is wrapped to: the terminal's, within reason (below 40 nothing fits; past
    /// 100 lines get hard to read).
    static func width(columns: Int) -> Int { min(max(columns, 40), 100) }

    static func text(width columns: Int = 80) -> String {
        let width = width(columns: columns)
        var lines = wrap("OVERVIEW: " + summary, width: width, indent: 0)
        lines += [""] + wrap(description, width: width, indent: 0)
        lines += [""] + wrap("USAGE: " + usage, width: width, indent: 7, first: 0) + ["", "ARGUMENTS:"]
        for argument in arguments { lines += row("  " + argument.name, argument.help, width: width) }
        lines += ["", "OPTIONS:"]
        for spec in MergeCommand.table { lines += row("  " + spec.display, spec.help, width: width) }
        lines += ["", "EXIT STATUS:"] + exitRows(.merge, width: width)
        lines += ["", "EXAMPLES:"] + examples.flatMap { exampleLines($0, width: width, indent: 2) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func text(for subcommand: Subcommand, width columns: Int = 80) -> String {
        let width = width(columns: columns)
        var lines = wrap("OVERVIEW: " + subcommand.overview, width: width, indent: 0)
        lines += [""] + wrap("USAGE: " + subcommand.usage, width: width, indent: 7, first: 0) + ["", "OPTIONS:"]
        for spec in subcommand.table { lines += row("  " + spec.display, spec.help, width: width) }
        lines += ["", "EXIT STATUS:"] + exitRows(subcommand.exit, width: width)
        lines += ["", "EXAMPLES:"] + subcommand.examples.flatMap { exampleLines($0, width: width, indent: 2) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The help column: 26, as swift-argument-parser lays it out, while that leaves room for the
    /// help; in a narrow terminal the help goes under the name, indented 6.
    private static func helpColumn(width: Int) -> Int { width >= 60 ? 26 : 6 }

    /// A name and its help: on one line when the name fits before the help column.
    private static func row(_ name: String, _ help: String, width: Int) -> [String] {
        let column = helpColumn(width: width)
        let text = wrap(help, width: width, indent: column)
        if name.count < column {
            let first = name + String(repeating: " ", count: column - name.count) + text[0].dropFirst(column)
            return [first] + text.dropFirst()
        }
        return [name] + text
    }

    private static func exitRows(_ command: Exit.Command, width: Int) -> [String] {
        Exit.table(for: command).flatMap { row -> [String] in
            let text = wrap(row.meaning, width: width, indent: 7)
            let label = "  " + row.status
            return [label + String(repeating: " ", count: 7 - label.count) + text[0].dropFirst(7)] + text.dropFirst()
        }
    }

    /// An example as lines of at most `width`: its note as a `#` comment above it, a command too
    /// long for one line continued with `\`, as a shell reads it.
    static func exampleLines(_ example: Example, width: Int, indent: Int) -> [String] {
        let pad = String(repeating: " ", count: indent)
        var lines = example.note.map { wrap("# " + $0, width: width, indent: indent + 2, first: indent) } ?? []
        // Fixed indentation for the command's own lines, so copying them gives the command.
        var current = pad
        var empty = true
        for word in example.command.split(separator: " ") {
            // Room for the word and, if more follow, " \\".
            if !empty && current.count + 1 + word.count + 2 > width {
                lines.append(current + " \\")
                current = pad + "    "
                empty = true
            }
            current += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(current)
        return lines
    }

    /// `text` in lines of at most `width` columns, broken between words (a word longer than a
    /// line stands alone); the first line indented by `first` spaces, the others by `indent`.
    static func wrap(_ text: String, width: Int, indent: Int, first: Int? = nil) -> [String] {
        var lines: [String] = []
        var line = String(repeating: " ", count: first ?? indent)
        var empty = true
        for word in words(text) {
            if !empty && line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
        return lines
    }

    /// The words of `text`, with "(default:" kept together with its value.
    private static func words(_ text: String) -> [String] {
        var words: [String] = []
        for word in text.split(separator: " ").map(String.init) {
            if words.last == "(default:" { words[words.count - 1] += " " + word } else { words.append(word) }
        }
        return words
    }
}
