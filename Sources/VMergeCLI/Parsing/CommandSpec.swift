import Foundation
import VMergeCore
import VMergeJobs

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

/// A command, in the shape swift-argument-parser gives its users: what it says of itself, its
/// table, its typed values read from its own keys, a check across them, and its run.
/// `CommandList` lists the commands; `ArgumentParser.parse` picks one; `CommandRunner` turns
/// whatever its run throws into a message and an exit.
protocol CommandSpec: Equatable {
    /// Its name, help texts, exit statuses and positionals.
    static var configuration: CommandConfiguration { get }
    /// Its options' rows (each declared once, as a `CommandOption` its `init` reads, or as an
    /// `OptionGroup`), in the order help lists them.
    static var table: [OptionSpec] { get }
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
    /// Itself with the test hooks for every merge it runs (TestHooks.swift).
    func applying(_ hooks: TestHooks) -> Self
}

extension CommandSpec {
    func validate() throws {}
    var messageForm: MessageForm { .lines }
    func applying(_ hooks: TestHooks) -> Self { self }

    /// The word after `vmerge` that names it ("" for the merge itself).
    static var name: String { configuration.name }

    /// How a user types it: "vmerge batch", "vmerge" for the merge.
    static var invocation: String { name.isEmpty ? "vmerge" : "vmerge \(name)" }

    /// Said after a usage error.
    static var usageLine: String { "Usage: \(configuration.usage)   (see '\(invocation) --help')" }

    /// Whether `other` is this same command with the same values.
    func isEqual(to other: any CommandSpec) -> Bool { (other as? Self) == self }

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
            printer.failure(Diagnostic(.error, about: nil, error.description), exit: .usage)
            if error.showsUsage { printer.text([usageLine], kind: "usage") }
            return .usage
        case let error as ReportClash:
            printer.failure(Diagnostic(.error, about: nil, error.description), exit: .usage)
            return .usage
        case let failure as CommandFailure:
            for error in failure.errors { printer.failure(error, exit: failure.exit) }
            return failure.exit
        default:
            printer.failure(Diagnostic(.error, about: nil, VMergeError.message(of: error)), exit: .failure)
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
