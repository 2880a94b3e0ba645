import Foundation
import VMergeCore

/// One command-line option's row: the tables drive parsing, help, completions, the man page and
/// error messages. Its long name is its identity. A command declares each of its options once,
/// as a `CommandOption` that holds this row and reads the option's value.
struct OptionSpec: Sendable {
    /// What a value is, for shell completion.
    enum ValueKind: Sendable, Equatable {
        case file, directory, number, text
        case choice([String])
    }

    let long: String
    let short: Character?
    /// Placeholder for the value, nil for a flag.
    let value: String?
    let help: String
    var kind: ValueKind = .text
    /// The library's row, for options a job carries (parsed, checked and keyed there).
    var job: JobOption?
    /// Belongs to the input named just before it, once per input (--trim).
    var perInput = false
    /// May be given more than once, every value kept (--allow-inputs).
    var repeatable = false
    /// Its value may hold a secret (--db's password): never repeated in a message.
    var secret = false

    init(
        long: String, short: Character?, value: String?, help: String, kind: ValueKind = .text,
        perInput: Bool = false, repeatable: Bool = false
    ) {
        self.long = long
        self.short = short
        self.value = value
        self.help = help
        self.kind = kind
        self.perInput = perInput
        self.repeatable = repeatable
    }

    /// A job option's entry: names, help and value kind from the library's table.
    static func job(_ option: JobOption) -> OptionSpec {
        let kind: ValueKind
        switch option.kind {
        case .flag, .text: kind = .text
        case .fileName: kind = .file
        case .number: kind = .number
        case let .choice(words): kind = .choice(words)
        }
        var spec = OptionSpec(
            long: option.name, short: nil, value: option.placeholder, help: option.help, kind: kind)
        spec.job = option
        return spec
    }

    // Rows several commands share.
    static let quiet = OptionSpec(long: "quiet", short: "q", value: nil, help: "Print only errors.")
    static let verbose = OptionSpec(
        long: "verbose", short: "v", value: nil,
        help: "Also print FFmpeg's own warnings, each tagged with the file it concerns.")
    static let help = OptionSpec(long: "help", short: "h", value: nil, help: "Show this help and exit.")
    static let version = OptionSpec(
        long: "version", short: nil, value: nil, help: "Show the version and the FFmpeg libraries in use, and exit.")
    static let deleteSources = OptionSpec(
        long: "delete-sources", short: nil, value: nil,
        help: "Once the output is published and reads back whole, delete the inputs it holds all of: "
            + "recordings whose every use was merged whole (none dropped, trimmed or cut) and whose every "
            + "sound, video and subtitle track it carries; each only if its name still holds the file that "
            + "was merged. Every file kept says why. Never after a failure, a cancel or a dry run.")
    private static let databaseRow = OptionSpec(
        long: "db", short: nil, value: "url",
        help: "The queue's PostgreSQL database, as libpq reads it: a URI (postgresql://user@host/db), "
            + "key=value pairs (host=/run/postgresql dbname=vmerge) or a database name; the PG* "
            + "variables and ~/.pgpass give the rest. Messages never show its password. (default: "
            + "$VMERGE_DB)")
    static let database: OptionSpec = {
        var spec = databaseRow
        spec.secret = true
        return spec
    }()
    static let progress = OptionSpec(
        long: "progress", short: nil, value: "mode",
        help: "auto: a status bar on a terminal, plain lines otherwise; bar; plain (a line every 5 s, "
            + "no carriage returns); json (one object per line); none. (default: auto, none with -q)",
        kind: .choice(ProgressMode.allCases.map(\.rawValue)))
    static let progressFD = OptionSpec(
        long: "progress-fd", short: nil, value: "n", help: "Send progress to this open file descriptor instead of stderr.",
        kind: .number)
    static let jobs = OptionSpec(
        long: "jobs", short: "j", value: "n", help: "Jobs to run at once. (default: one per core, at most 8)",
        kind: .number)

    var display: String {
        var text = short.map { "-\($0), " } ?? "    "
        text += "--\(long)"
        if let value { text += " <\(value)>" }
        return text
    }
}

/// A usage error: wrong options or arguments. Exit status 2.
struct UsageError: Error, Equatable, CustomStringConvertible {
    let description: String
    /// Whether the command's usage line follows: not for a command that is well formed but names
    /// its files wrongly (an output in a missing folder, or one of the inputs).
    var showsUsage = true

    init(description: String) { self.description = description }

    /// A mistake in the files the command names, not in its grammar: exit 2 all the same.
    static func naming(_ description: String) -> UsageError {
        var error = UsageError(description: description)
        error.showsUsage = false
        return error
    }

    /// "invalid value 'x' for '--name': expected ...": the one wording of a refused value.
    static func invalidValue(_ text: String, for option: String, expected: String) -> UsageError {
        UsageError(description: JobOptionError.invalidValue(text, for: option, expected: expected).description)
    }
}

/// What the command line asked for.
enum Command: Equatable {
    case help
    case version
    /// One of `CommandList`'s commands, with its values, to run.
    case run(any CommandSpec)
    /// `vmerge batch --help`, `vmerge queue --help`...: the subcommand's word.
    case subcommandHelp(String)
    // Hidden, not in the option table: `--print-man-page`, `--print-completion <shell>` (ShellSupport.swift).
    case manPage
    case completion(Shell)

    static func == (a: Command, b: Command) -> Bool {
        switch (a, b) {
        case (.help, .help), (.version, .version), (.manPage, .manPage): true
        case let (.run(a), .run(b)): a.isEqual(to: b)
        case let (.subcommandHelp(a), .subcommandHelp(b)): a == b
        case let (.completion(a), .completion(b)): a == b
        default: false
        }
    }
}

enum Verbosity: Equatable { case quiet, normal, verbose }

enum ProgressMode: String, Equatable, CaseIterable { case auto, bar, plain, json, none }
