import VMergeCore
import VMergeJobs

/// The text of `vmerge --help` (and of `batch --help`, `watch --help`...), built from the option
/// tables and the commands' configurations, wrapped at word boundaries to the terminal's width.
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

    /// The merge's examples, then one of each subcommand pointing to its own help.
    static var examples: [Example] {
        mergeExamples
            + CommandList.subcommands.compactMap { command in
                command.configuration.mainHelpExample.map {
                    Example(command: $0, note: "see '\(command.invocation) --help'")
                }
            }
    }

    private static let mergeExamples = [
        Example(command: "vmerge a.mov b.mov c.mov -o out.mp4"),
        Example(command: "vmerge --min-duration 0 --quality high clips/*.mov -o out.mp4 -y"),
        Example(command: "vmerge recordings/ -o out.mp4 --report out.json --progress json"),
        Example(command: "find . -name '*.mov' | vmerge --inputs-from - --sort name --max-size 160M -o out.mp4"),
        Example(command: "vmerge --dry-run *.mov -o out.mp4"),
        Example(command: "vmerge a.mov --trim 2.5,8 b.mov --trim ,4 -o out.mp4", note: "a from 2.5 s to 8 s, b's first 4 s"),
        Example(
            command: "vmerge a.mov b.mov -o trip.mp4 --rendition 9x16-1080 --rendition 1x1-720",
            note: "also trip-9x16-1080.mp4 and trip-1x1-720.mp4, decoded once"),
    ]

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

    /// A command's help: the merge's (`text(width:)`) or a subcommand's, from its configuration
    /// and table.
    static func text(for command: any CommandSpec.Type, width columns: Int = 80) -> String {
        guard !command.name.isEmpty else { return text(width: columns) }
        let width = width(columns: columns), configuration = command.configuration
        var lines = wrap("OVERVIEW: " + configuration.overview, width: width, indent: 0)
        lines += [""] + wrap("USAGE: " + configuration.usage, width: width, indent: 7, first: 0) + ["", "OPTIONS:"]
        for spec in command.table { lines += row("  " + spec.display, spec.help, width: width) }
        lines += ["", "EXIT STATUS:"] + exitRows(configuration.exits, width: width)
        lines += ["", "EXAMPLES:"] + configuration.examples.flatMap { exampleLines($0, width: width, indent: 2) }
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
