import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMergeQueue

/// What the tokenizer found in one command's arguments, by option name.
struct ParsedArguments: Equatable {
    var positionals: [String] = []
    /// The arguments as typed, and where in them each positional was: a hint can then show the
    /// user's own command back, mended (`vmerge a.mov b.mov -o out2.mp4`).
    var typed: [String] = []
    var typedPositions: [Int] = []
    /// Every value given for each option, in the order given.
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    /// Per-input options (--trim): by the position of the positional they follow.
    var attached: [Int: [String: String]] = [:]

    /// An option's value: a per-input option's goes to the input just before it (once each);
    /// any other but a repeatable one may be given once (a second `-o` is a mistake, never
    /// silently the one that wins).
    mutating func add(_ value: String, for spec: OptionSpec) throws {
        guard spec.perInput else {
            if let earlier = values[spec.long]?.last, !spec.repeatable {
                throw UsageError(
                    description: spec.secret
                        ? "'--\(spec.long)' is given twice; give it once"
                        : "'--\(spec.long)' is given twice ('\(earlier)', then '\(value)'); give it once")
            }
            values[spec.long, default: []].append(value)
            return
        }
        guard let last = positionals.indices.last else {
            throw UsageError(
                description: "'--\(spec.long)' must follow the file it applies to, e.g. a.mov --\(spec.long) \(value)")
        }
        if attached[last]?[spec.long] != nil {
            throw UsageError(description: "'--\(spec.long)' is given twice for \(positionals[last])")
        }
        attached[last, default: [:]][spec.long] = value
    }
}

/// A subcommand, in the shape swift-argument-parser gives its users: its table, its typed values
/// read from its own keys, a check across them, and its run. `ArgumentParser.parse` picks the
/// command; `CommandRunner` turns whatever its run throws into a message and an exit.
protocol CommandSpec: Equatable {
    /// The word after `vmerge` that names it ("" for the merge itself).
    static var name: String { get }
    /// Its options' rows (each declared once, as a `CommandOption` its `init` reads), in the
    /// order help lists them.
    static var table: [OptionSpec] { get }
    /// Said after a usage error.
    static var usageLine: String { get }
    /// The typed values, each read through its option; throws `UsageError` for a value no
    /// option accepts.
    init(_ parsed: ParsedArguments) throws
    /// What no single option can check (two options that clash).
    func validate() throws
    var verbosity: Verbosity { get }
    /// How its messages are said on stderr (JSON events when its progress objects are there too).
    var messageForm: MessageForm { get }
    /// Runs it. A `UsageError` or a `ReportClash` thrown is a usage error (exit 2), any other
    /// error a failure (exit 1).
    func run(console: Console, printer: MessagePrinter) throws -> Exit
}

extension CommandSpec {
    func validate() throws {}
    var messageForm: MessageForm { .lines }

    /// The command from its arguments; nil for --help.
    static func parse(_ arguments: [String]) throws -> Self? {
        try parse(ArgumentParser.tokenize(arguments, table: table))
    }

    static func parse(_ parsed: ParsedArguments) throws -> Self? {
        if try SharedOptions.help.read(parsed) { return nil }
        let command = try Self(parsed)
        try command.validate()
        return command
    }
}

/// Options several commands share, each declared and checked here once: -q/-v, -h, --version,
/// --report, -y, --delete-sources, --db, --progress/--progress-fd, -j and the job options.
enum SharedOptions {
    static let quiet = CommandOption<Bool>(flag: OptionSpec.quiet)
    static let verbose = CommandOption<Bool>(flag: OptionSpec.verbose)
    static let help = CommandOption<Bool>(flag: OptionSpec.help)
    static let version = CommandOption<Bool>(flag: OptionSpec.version)
    static let deleteSources = CommandOption<Bool>(flag: OptionSpec.deleteSources)

    /// -y, with what it replaces in this command.
    static func overwrite(help: String) -> CommandOption<Bool> { .flag("overwrite", short: "y", help: help) }

    static func verbosity(_ parsed: ParsedArguments) throws -> Verbosity {
        let (quiet, verbose) = (try Self.quiet.read(parsed), try Self.verbose.read(parsed))
        if quiet && verbose { throw UsageError(description: "'--quiet' and '--verbose' cannot be used together") }
        return quiet ? .quiet : verbose ? .verbose : .normal
    }

    /// --report's file, "-" for stdout; never empty, never a folder, in a folder that is there.
    static func report(help: String) -> CommandOption<String?> {
        CommandOption(OptionSpec(long: "report", short: nil, value: "file", help: help, kind: .file)) { parsed, spec in
            guard let path = parsed.values[spec.long]?.last else { return nil }
            if path.isEmpty { throw UsageError(description: "missing file name for '--report'") }
            if path != "-" {
                if FileKind.following(path) == .directory {
                    throw UsageError.naming(
                        "'--report \(VisibleText.of(path))' names a folder; give a file name, such as report.json")
                }
                try checkFolder(of: path, for: "--report")
            }
            return path
        }
    }

    /// A file the command names for vmerge to write goes into a folder that is there: a typo in
    /// the folder is the command's mistake (exit 2, which no retry cures), said before any work.
    /// vmerge makes no such folder (a typo would be made, and the file lost in it).
    static func checkFolder(of path: String, for option: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        guard !folder.isEmpty else { return }
        switch FileKind.following(folder) {
        case .directory: return
        case .missing:
            throw UsageError.naming(
                "\(VisibleText.of(path)): folder \(VisibleText.of(folder)) does not exist (vmerge makes no folder for "
                    + "'\(option)'; mkdir -p \(ShellWord.quoted(folder)) first)")
        case let kind:
            throw UsageError.naming("\(VisibleText.of(path)): \(VisibleText.of(folder)) is \(kind.phrase), not a folder")
        }
    }

    /// --db; nil: VMERGE_DB at run time.
    static let database = CommandOption<String?>(OptionSpec.database) { parsed, spec in
        guard let text = parsed.values[spec.long]?.last else { return nil }
        if text.isEmpty { throw UsageError(description: "'--db' needs a connection string") }
        return text
    }

    /// --db, else VMERGE_DB; a usage error when neither names a database. A password in --db
    /// is readable by every local user (`ps`): warned of, with where it belongs instead.
    static func conninfo(_ given: String?, command: String, console: Console, printer: MessagePrinter) throws -> String {
        guard let conninfo = given ?? console.environment["VMERGE_DB"], !conninfo.isEmpty else {
            throw UsageError(description: "\(command): no database given: use '--db <url>' or set VMERGE_DB")
        }
        if let given, PGConnection.carriesSecret(given) {
            printer.print(
                .warning, file: nil,
                "\(command): the password in '--db' can be read by every user of this machine (ps); put the "
                    + "connection string in VMERGE_DB, or the password in ~/.pgpass or PGPASSWORD")
        }
        return conninfo
    }

    /// --progress (auto when not given).
    static let progress = CommandOption.choice(OptionSpec.progress, of: ProgressMode.self).map { mode, _ in
        mode ?? .auto
    }

    /// --progress-fd (nil: stderr).
    static let progressFD = CommandOption<Int32?>(OptionSpec.progressFD) { parsed, spec in
        guard let text = parsed.values[spec.long]?.last else { return nil }
        guard let fd = Int32(text), fd >= 0 else {
            throw UsageError.invalidValue(text, for: spec.long, expected: "a file descriptor number")
        }
        return fd
    }

    /// -j/--jobs, or nil when not given.
    static let jobs = CommandOption.integer(OptionSpec.jobs, in: 1...256)

    /// The job settings the job options (and -y) name, over `base`, each read and checked by its
    /// row of the library's option table.
    static func jobSettings(
        _ parsed: ParsedArguments, table: [OptionSpec], overwrite: Bool = false, base: JobSettings = JobSettings()
    ) throws -> JobSettings {
        var settings = base
        if overwrite { settings.merge.overwrite = true }
        do {
            for spec in table {
                guard let option = spec.job else { continue }
                if spec.value == nil {
                    if parsed.flags.contains(spec.long) { try option.apply("true", to: &settings) }
                } else if let text = parsed.values[spec.long]?.last {
                    try option.apply(text, to: &settings)
                }
            }
            try settings.validate()
        } catch {
            throw UsageError(description: error.description)
        }
        return settings
    }
}

/// The one place a command's outcome becomes an exit: what its run throws is said in one line
/// (a usage error with the command's usage line after it).
enum CommandRunner {
    static func run<C: CommandSpec>(_ command: C, console: Console) -> Exit {
        let printer = MessagePrinter.forRun(console: console, verbosity: command.verbosity, form: command.messageForm)
        do {
            return try command.run(console: console, printer: printer)
        } catch {
            return fail(error, printer: printer, usageLine: C.usageLine)
        }
    }

    /// The one place a command line that fails is said, parsing or running: each error one line
    /// "vmerge: <file>: <what is wrong>" on stderr, a usage line after a mistake in the grammar,
    /// then (a run that deleted sources with -q) how many; returns the exit status it means.
    static func fail(_ error: any Error, printer: MessagePrinter, usageLine: String) -> Exit {
        defer { printer.sayDeletedCount() }
        switch error {
        case let error as UsageError:
            printer.failure(file: nil, error.description, exit: .usage)
            if error.showsUsage { printer.text([usageLine], kind: "usage") }
            return .usage
        case let error as ReportClash:
            printer.failure(file: nil, error.description, exit: .usage)
            return .usage
        case let failure as CommandFailure:
            for error in failure.errors { printer.failure(file: error.file, error.message, exit: failure.exit) }
            return failure.exit
        default:
            printer.failure(file: nil, VMergeError.message(of: error), exit: .failure)
            return .failure
        }
    }
}

/// A command that ran and failed: its errors (one line each, said by `CommandRunner.fail`) and
/// the exit status they mean. What the command wrote before (a report on stdout) stays written.
struct CommandFailure: Error {
    var errors: [Diagnostic]
    var exit: Exit

    init(_ exit: Exit, _ errors: [Diagnostic]) {
        self.exit = exit
        self.errors = errors
    }

    init(_ exit: Exit, file: String? = nil, _ message: String) {
        self.init(exit, [Diagnostic(.error, file: file, message)])
    }
}
