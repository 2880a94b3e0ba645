import Foundation
import VMergeCore

/// The command line's first step: which command, then its arguments split by its table. Each
/// command's spec (`CommandSpec`) then reads its own values.
enum ArgumentParser {
    static func parse(_ arguments: [String]) throws -> Command {
        if let command = try hiddenCommand(arguments) { return command }
        if let subcommand = CommandList.subcommand(named: arguments.first) {
            let parsed = try subcommand.parse(Array(arguments.dropFirst()))
            return parsed.map { Command.run($0) } ?? .subcommandHelp(subcommand.name)
        }
        let parsed = try tokenize(arguments, table: MergeCommand.table)
        if try SharedOptions.version.read(parsed) && !SharedOptions.help.read(parsed) {
            return .version
        }
        return try MergeCommand.parse(parsed).map { Command.run($0) } ?? .help
    }

    /// The usage line said after a usage error of the command `word` names (the merge's for any
    /// other word).
    static func usageLine(for word: String?) -> String {
        CommandList.command(for: word).usageLine
    }

    /// How the error of a command line that cannot be run is said: as a JSON event when it asks
    /// for `--progress json` on stderr (a merge or a batch), so a pipeline reading that stream
    /// meets nothing else; else as a line. Read from its words, split by the table of its command
    /// when that takes --progress (by the merge's otherwise), else one by one.
    static func messageForm(of arguments: [String]) -> MessageForm {
        let progress = ProgressOptions.mode.long, fd = ProgressOptions.fd.long
        let command = CommandList.command(for: arguments.first)
        let (table, words) =
            !command.name.isEmpty && command.table.contains { $0.long == progress }
            ? (command.table, Array(arguments.dropFirst())) : (MergeCommand.table, arguments)
        if let parsed = try? tokenize(words, table: table) {
            let json = parsed.values[progress]?.last == ProgressMode.json.rawValue
            return json && parsed.values[fd] == nil ? .jsonEvents : .lines
        }
        let options = words.prefix { $0 != "--" }
        let json =
            zip(options, options.dropFirst()).contains { $0 == ("--\(progress)", "json") }
            || options.contains("--\(progress)=json")
        let elsewhere = options.contains { $0 == "--\(fd)" || $0.hasPrefix("--\(fd)=") }
        return json && !elsewhere ? .jsonEvents : .lines
    }

    /// Splits arguments into positionals, option values and flags, by `table`.
    static func tokenize(_ arguments: [String], table: [OptionSpec]) throws -> ParsedArguments {
        var parsed = ParsedArguments(typed: arguments)
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                parsed.typedPositions.append(index - 1)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            let next = index < arguments.count ? arguments[index] : nil
            // ffmpeg's and HandBrake's spellings (none of them is a vmerge option).
            if let hint = ForeignOptions.hint(for: argument, next: next, table: table, command: arguments) {
                throw UsageError(description: hint)
            }
            for (spec, inline) in try options(in: argument, next: next, table: table) {
                if spec.value == nil {
                    if inline != nil { throw UsageError(description: "'--\(spec.long)' takes no value") }
                    parsed.flags.insert(spec.long)
                    continue
                }
                let value: String
                if let inline {
                    value = inline
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    throw UsageError(description: "missing value for '--\(spec.long) <\(spec.value ?? "value")>'")
                }
                try parsed.add(value, for: spec)
            }
        }
        return parsed
    }

    /// The options one argument names, each with its value when the argument holds it:
    /// --name, --name=value, -x, -xvalue, -abc (flags; a value option ends the cluster).
    private static func options(in argument: String, next: String?, table: [OptionSpec]) throws -> [(OptionSpec, String?)] {
        if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            let (name, inline) = body.firstIndex(of: "=").map { (body[..<$0], String(body[body.index(after: $0)...])) } ?? (body, nil)
            guard let spec = table.first(where: { $0.long == name }) else {
                throw UsageError(description: "unknown option '--\(name)'" + suggestion(for: String(name), in: table))
            }
            return [(spec, inline)]
        }
        // `-output`: a long name with one dash, not -o with "utput".
        let word = String(argument.dropFirst())
        if word.count > 1, table.contains(where: { $0.long == word }) {
            throw UsageError(description: "unknown option '\(argument)'. Did you mean '--\(word)'?")
        }
        var found: [(OptionSpec, String?)] = []
        var rest = Substring(word)
        while let c = rest.first {
            rest = rest.dropFirst()
            guard let spec = table.first(where: { $0.short == c }) else {
                // A word (`-threads`, `-output`) is named as typed, not by its first unknown letter.
                guard argument.count > 2 else { throw UsageError(description: unknownShort(c, in: table)) }
                throw UsageError(
                    description: "unknown option '\(argument)'" + suggestion(for: String(argument.dropFirst()), in: table))
            }
            if spec.value != nil {
                // `-o=x.mp4` would name the output "=x.mp4".
                if rest.hasPrefix("=") {
                    throw UsageError(
                        description: "'\(argument)': a single-letter option takes its value without '=': -\(c) "
                            + "\(rest.dropFirst()), or --\(spec.long)=\(rest.dropFirst())")
                }
                found.append((spec, rest.isEmpty ? nil : String(rest)))
                break
            }
            // `-q 22`, `-v error`: a value meant for another tool's option, not an input.
            if argument.count == 2, let next, let hint = ForeignOptions.misreadFlag(c, next: next),
                FileKind.at(FileName(next)) == .missing
            {
                throw UsageError(description: hint)
            }
            found.append((spec, nil))
        }
        return found
    }

    /// "unknown option '-o'. Did you mean '--out'? ('-o' is vmerge's '--output')": a letter another
    /// command has, with this command's nearest long name to it.
    static func unknownShort(_ c: Character, in table: [OptionSpec]) -> String {
        let elsewhere = commands.compactMap { command in
            command.table.first { $0.short == c }.map { (command.name, $0.long) }
        }
        guard let (owner, long) = elsewhere.first else { return "unknown option '-\(c)'" }
        let nearest = suggestion(for: long, in: table).components(separatedBy: " (")[0]
        return "unknown option '-\(c)'\(nearest) ('-\(c)' is \(owner)'s '--\(long)')"
    }

    /// The commands and their tables, for telling where an option belongs.
    static var commands: [(name: String, table: [OptionSpec])] {
        CommandList.all.map { ($0.invocation, $0.table) }
    }

    /// ". Did you mean '--output'?" for a name that begins or is begun by one of `table`'s (--out,
    /// --output), else for a near miss; and which other commands have the option, if any
    /// ("'--out' is vmerge batch's, vmerge watch's and vmerge queue's").
    static func suggestion(for name: String, in table: [OptionSpec] = MergeCommand.table) -> String {
        let names = table.map(\.long)
        let prefixed = name.count >= 3 ? names.filter { $0.hasPrefix(name) || name.hasPrefix($0) } : []
        var best: String?
        if prefixed.count == 1 {
            best = prefixed[0]
        } else if let (nearest, distance) = names.map({ ($0, editDistance(name, $0)) }).min(by: { $0.1 < $1.1 }),
            distance <= max(2, name.count / 3)
        {
            best = nearest
        }
        var text = best.map { ". Did you mean '--\($0)'?" } ?? ""
        let elsewhere = commands.filter { $0.table.contains { $0.long == name } }.map { $0.name + "'s" }
        if !elsewhere.isEmpty && !names.contains(name) {
            text += " ('--\(name)' is \(JobOptionError.listed(elsewhere)))"
        }
        return text
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(1, b.count) where !b.isEmpty {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
