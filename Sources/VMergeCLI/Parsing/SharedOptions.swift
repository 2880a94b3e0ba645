import Foundation
import VMergeCore
import VMergeQueue

/// Single options several commands share, each declared and checked here once: -h, --version,
/// --report, -y, --delete-sources, --db, -j. Options taken together are `OptionGroup`s below.
enum SharedOptions {
    static let help = CommandOption<Bool>(flag: OptionSpec.help)
    static let version = CommandOption<Bool>(flag: OptionSpec.version)
    static let deleteSources = CommandOption<Bool>(flag: OptionSpec.deleteSources)

    /// --allow-remote: the operator's prefixes for objects and https resources (see `RemoteAccess`).
    static let allowRemote = CommandOption<[String]>.repeated(
        "allow-remote", value: "prefix",
        help: "Objects and https resources under this prefix (s3://bucket/trip/ or https://host/path/) may be "
            + "named by jobs from outside (job lists, watch job files, the queue), and an https one may reach a private or "
            + "local address. Repeatable.")

    /// The job's `RemoteAccess` from --allow-remote; `listingRequired` for jobs from outside.
    static func remoteAccess(_ parsed: ParsedArguments, listingRequired: Bool) throws -> RemoteAccess {
        var listed: [RemoteName] = []
        for text in try allowRemote.read(parsed) {
            switch RemoteAccess.prefix(text) {
            case let .success(name): listed.append(name)
            case let .failure(problem): throw UsageError.naming("--allow-remote \(problem)")
            }
        }
        return RemoteAccess(listed: listed, listingRequired: listingRequired)
    }

    /// -y, with what it replaces in this command.
    static func overwrite(help: String) -> CommandOption<Bool> { .flag("overwrite", short: "y", help: help) }

    /// --report's file, or stdout ("-"); never empty, never a folder, in a folder that is there.
    static func report(help: String) -> CommandOption<Location?> {
        CommandOption(OptionSpec(long: "report", short: nil, value: "file", help: help, kind: .file)) { parsed, spec in
            guard let path = parsed.values[spec.long]?.last else { return nil }
            if path.isEmpty { throw UsageError(description: "missing file name for '--report'") }
            // Never taken for a local file called "s3:": an object in a bucket, or refused.
            if RemoteName.looksRemote(path) {
                guard case let .s3(address)? = RemoteName(path), !address.isPrefix else {
                    throw UsageError.naming(
                        "'--report \(RemoteName.shown(path))': a report is written to a local file, '-' (stdout) "
                            + "or an object (s3://bucket/key.json)")
                }
                return .remote(.s3(address))
            }
            let place = Location.writing(path)
            if let file = place.file {
                if FileKind.following(file) == .directory {
                    throw UsageError.naming("'--report \(file)' names a folder; give a file name, such as report.json")
                }
                try checkFolder(of: path, for: "--report")
            }
            return place
        }
    }

    /// A file the command names for vmerge to write goes into a folder that is there: a typo in
    /// the folder is the command's mistake (exit 2, which no retry cures), said before any work.
    /// vmerge makes no such folder (a typo would be made, and the file lost in it).
    static func checkFolder(of path: String, for option: String) throws {
        // A bucket has no folders to make: a key's prefix is no mistake.
        if RemoteName.looksRemote(path) { return }
        let folder = FileName(path).folder.escaped
        guard !folder.isEmpty else { return }
        switch FileKind.following(FileName(folder)) {
        case .directory: return
        case .missing:
            throw UsageError.naming(
                "\(VisibleText.of(path)): folder \(VisibleText.of(folder)) does not exist (vmerge makes no folder for "
                    + "'\(option)'; mkdir -p \(ShellWord.quoted(folder)) first)")
        case let kind:
            throw UsageError.naming(
                "\(VisibleText.of(path)): \(VisibleText.of(folder)) is \(kind.phrase), not a folder")
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
    static func conninfo(
        _ given: String?, command: String, console: Console, printer: MessagePrinter
    ) throws -> String {
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

    /// -j/--jobs, or nil when not given.
    static let jobs = CommandOption.integer(OptionSpec.jobs, in: 1...256)
}

/// Options several commands take together, declared once as one group, as swift-argument-parser's
/// `@OptionGroup`: a command's table includes the group's rows as one entry, and its `init` reads
/// them with one call.
protocol OptionGroup {
    /// Its rows, in the order a table lists them.
    static var specs: [OptionSpec] { get }
}

/// -q and -v: how much a command says (merge, batch, watch, worker).
enum VerbosityOptions: OptionGroup {
    static let quiet = CommandOption<Bool>(flag: OptionSpec.quiet)
    static let verbose = CommandOption<Bool>(flag: OptionSpec.verbose)
    static var specs: [OptionSpec] { [quiet.spec, verbose.spec] }

    static func read(_ parsed: ParsedArguments) throws -> Verbosity {
        let (quiet, verbose) = (try Self.quiet.read(parsed), try Self.verbose.read(parsed))
        if quiet && verbose { throw UsageError(description: "'--quiet' and '--verbose' cannot be used together") }
        return quiet ? .quiet : verbose ? .verbose : .normal
    }
}

/// --progress and --progress-fd: how a merge or a batch shows its progress, and so how its
/// messages are said.
enum ProgressOptions: OptionGroup {
    /// --progress (auto when not given).
    static let mode = CommandOption.choice(OptionSpec.progress, of: ProgressMode.self).map { mode, _ in
        mode ?? .auto
    }

    /// --progress-fd (nil: stderr).
    static let fd = CommandOption<Int32?>(OptionSpec.progressFD) { parsed, spec in
        guard let text = parsed.values[spec.long]?.last else { return nil }
        guard let fd = Int32(text), fd >= 0 else {
            throw UsageError.invalidValue(text, for: spec.long, expected: "a file descriptor number")
        }
        return fd
    }

    static var specs: [OptionSpec] { [mode.spec, fd.spec] }

    static func read(_ parsed: ParsedArguments) throws -> (mode: ProgressMode, fd: Int32?) {
        (try mode.read(parsed), try fd.read(parsed))
    }

    /// The JSON report and the progress cannot share stdout.
    static func checkStdout(report: Location?, fd: Int32?) throws {
        if report == .standardOutput && fd == 1 {
            throw UsageError(description: "'--report -' and '--progress-fd 1' would both write to stdout")
        }
    }
}

/// The job options, the library's rows (`JobOption.all`) in its order: the same group in every
/// command that runs or queues merges (merge, batch, watch, queue add).
enum JobOptions: OptionGroup {
    static let specs: [OptionSpec] = JobOption.all.map(OptionSpec.job)

    /// The job settings the job options (and -y) name, each read and checked by its row of the
    /// library's option table.
    static func settings(_ parsed: ParsedArguments, overwrite: Bool = false) throws -> JobSettings {
        var settings = JobSettings()
        if overwrite { settings.merge.overwrite = true }
        do {
            for spec in specs {
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
