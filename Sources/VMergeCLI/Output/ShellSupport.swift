import VMergeCore
// The shell completion scripts, generated from the commands of `CommandList` (their tables and configurations), and
// the hidden options that print them and the man page (`make install` runs those).

/// A shell vmerge prints a completion script for.
enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish
}

// MARK: - Hidden options

extension ArgumentParser {
    /// `--print-man-page` and `--print-completion <shell>`, recognised only as the first argument and kept out of the
    /// option table so that help does not list them. Nil when the command line starts with anything else.
    static func hiddenCommand(_ arguments: [String]) throws -> Command? {
        guard let first = arguments.first else { return nil }
        var rest = arguments.dropFirst()
        let command: Command
        if first == "--print-man-page" {
            command = .manPage
        } else if first.hasPrefix("--print-man-page=") {
            throw UsageError(description: "'--print-man-page' takes no value")
        } else if first == "--print-completion" || first.hasPrefix("--print-completion=") {
            let value: String
            if let eq = first.firstIndex(of: "=") {
                value = String(first[first.index(after: eq)...])
            } else if let next = rest.popFirst() {
                value = next
            } else {
                throw UsageError(description: "missing value for '--print-completion <shell>'")
            }
            guard let shell = Shell(rawValue: value) else {
                throw UsageError.invalidValue(
                    value, for: "print-completion", expected: JobOptionError.oneOf(Shell.allCases.map(\.rawValue)))
            }
            command = .completion(shell)
        } else {
            return nil
        }
        if let extra = rest.first {
            throw UsageError(description: "unexpected argument '\(extra)' after '\(first)'")
        }
        return command
    }
}

// MARK: - Completion scripts

/// Shell completion scripts: every option, the values of an option from its kind (`OptionSpec.ValueKind`), and
/// inputs as video files and folders (any file when there are none).
enum Completions {
    /// Input extensions completed first, in any case.
    static let videoExtensions = ["mov", "mp4", "m4v", "3gp"]

    static func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bash
        case .zsh: zsh
        case .fish: fish
        }
    }

    /// The first sentence of an option's help, for the one-line descriptions zsh and fish show.
    /// The help's first sentence: up to the first ". " outside parentheses that ends no
    /// ellipsis ("waiting 2, 4, 8... s" goes on).
    static func summary(_ help: String) -> String {
        let characters = Array(help)
        var depth = 0
        var end = characters.count
        for (index, character) in characters.enumerated() {
            if character == "(" { depth += 1 }
            if character == ")" { depth = max(0, depth - 1) }
            guard character == ".", depth == 0, index + 1 < characters.count, characters[index + 1] == " " else { continue }
            if index > 0 && characters[index - 1] == "." { continue }
            end = index
            break
        }
        var text = String(characters[..<end])
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// `text` as one single-quoted word for bash and zsh.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    private static func names(_ spec: OptionSpec) -> [String] {
        (spec.short.map { ["-\($0)"] } ?? []) + ["--\(spec.long)"]
    }

    // MARK: bash

    private static var bash: String {
        // Options that take a value, grouped by what completes it, in table order.
        var actions: [(patterns: [String], action: String)] = []
        // Every option of every mode (their names never clash), so values complete after any.
        var seen: Set<String> = []
        let everyOption = CommandList.all.flatMap { $0.table }.filter {
            seen.insert($0.long).inserted
        }
        for spec in everyOption where spec.value != nil {
            let action: String
            switch spec.kind {
            case .file: action = #"_vmerge_paths -f "$cur""#
            case .directory: action = #"_vmerge_paths -d "$cur""#
            case let .choice(words):
                action = #"COMPREPLY=($(compgen -W \#(quoted(words.joined(separator: " "))) -- "$cur"))"#
            case .number, .text: action = ""
            }
            if let i = actions.firstIndex(where: { $0.action == action }) {
                actions[i].patterns += names(spec)
            } else {
                actions.append((names(spec), action))
            }
        }
        let cases = actions.map { row in
            "        \(row.patterns.joined(separator: " | ")))\n"
                + (row.action.isEmpty ? "" : "            \(row.action)\n")
                + "            return ;;"
        }
        let words = { (table: [OptionSpec]) in
            (table.map { "--\($0.long)" } + table.compactMap { $0.short.map { "-\($0)" } }).joined(separator: " ")
        }
        let options = words(MergeCommand.table)
        let modeOptions = CommandList.subcommands.map { subcommand in
            "\(subcommand.name)) COMPREPLY=($(compgen -W \(quoted(words(subcommand.table))) -- \"$cur\")) ;;"
        }
        let modes = CommandList.subcommands.map { $0.name }.joined(separator: " ")
        // *.[mM][oO][vV]: any case, without extglob or nocasematch.
        let videos = videoExtensions.map { ext in
            "*." + ext.map { c in c.isLetter ? "[\(c.lowercased())\(c.uppercased())]" : String(c) }.joined()
        }
        return #"""
            # bash completion for vmerge(1), generated by 'vmerge --print-completion bash': do not edit.

            # Completes the paths matching $2: files and folders with -f, folders with -d.
            _vmerge_paths() {
                local path
                compopt -o filenames 2>/dev/null
                while IFS= read -r path; do
                    COMPREPLY+=("$path")
                done < <(compgen "$1" -- "$2")
            }

            # Completes inputs: the video files and folders matching $1, or any file when there are none.
            _vmerge_inputs() {
                local path
                local -a all
                _vmerge_paths -f "$1"
                all=("${COMPREPLY[@]}")
                COMPREPLY=()
                for path in "${all[@]}"; do
                    if [[ -d ${path/#\~/$HOME} ]]; then
                        COMPREPLY+=("$path")
                        continue
                    fi
                    case $path in
                        \#(videos.joined(separator: " | ")))
                            COMPREPLY+=("$path") ;;
                    esac
                done
                ((${#COMPREPLY[@]})) || COMPREPLY=("${all[@]}")
            }

            _vmerge() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} i
                COMPREPLY=()
                # bash splits --name=value into '--name' '=' 'value' (COMP_WORDBREAKS).
                if [[ $cur == = ]]; then
                    cur=
                elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
                    prev=${COMP_WORDS[COMP_CWORD - 2]}
                fi
                case $prev in
            \#(cases.joined(separator: "\n"))
                esac
                # After '--' every word is an input.
                for ((i = 1; i < COMP_CWORD; i++)); do
                    [[ ${COMP_WORDS[i]} == -- ]] && break
                done
                if ((i == COMP_CWORD)) && [[ $cur == -* ]]; then
                    case ${COMP_WORDS[1]} in
                        \#(modeOptions.joined(separator: "\n            "))
                        *) COMPREPLY=($(compgen -W \#(quoted(options)) -- "$cur")) ;;
                    esac
                    return
                fi
                if ((COMP_CWORD > 1)); then
                    case ${COMP_WORDS[1]} in
                        \#(bashPositionals.joined(separator: "\n            "))
                    esac
                fi
                _vmerge_inputs "$cur"
                # The first word may also be a mode.
                ((COMP_CWORD == 1)) && COMPREPLY+=($(compgen -W \#(quoted(modes)) -- "$cur"))
            }

            complete -F _vmerge vmerge

            """#
    }

    // MARK: zsh

    private static var zsh: String {
        /// Text inside an `_arguments` spec: `\`, `[`, `]` and `:` are quoted with a backslash.
        func spec(_ text: String) -> String {
            var text = text.replacingOccurrences(of: "\\", with: "\\\\")
            for c in ["[", "]", ":"] { text = text.replacingOccurrences(of: c, with: "\\" + c) }
            return text
        }
        func specs(_ table: [OptionSpec]) -> [String] {
            var lines: [String] = []
            for option in table {
                let names = Self.names(option)
                // -o+ and --output=: the value may follow in the same word or in the next.
                let forms = names.map { option.value == nil ? $0 : $0.hasPrefix("--") ? $0 + "=" : $0 + "+" }
                // Offered once; --help and --version end the command line.
                let exclusions =
                    option.long == OptionSpec.help.long || option.long == OptionSpec.version.long
                    ? "(- *)" : names.count > 1 ? "(\(names.joined(separator: " ")))" : ""
                var tail = "[\(spec(summary(option.help)))]"
                if let value = option.value {
                    let action: String
                    switch option.kind {
                    case .file: action = "_files"
                    case .directory: action = "_files -/"
                    case let .choice(words): action = "(\(words.joined(separator: " ")))"
                    case .number, .text: action = " "
                    }
                    tail += ":\(spec(value)):\(action)"
                }
                if forms.count == 1 {
                    lines.append(quoted(exclusions + forms[0] + tail))
                } else {
                    lines.append(quoted(exclusions) + "{\(forms.joined(separator: ","))}" + quoted(tail))
                }
            }
            return lines
        }
        let lines = specs(MergeCommand.table) + zshPositionals(MergeCommand.configuration.positionals).map(quoted)
        let modes = CommandList.subcommands.map { $0.name }
        let branches = CommandList.subcommands.enumerated().map { index, subcommand in
            // Each mode's positionals, after its options.
            let positionals = zshPositionals(subcommand.configuration.positionals).map(quoted)
            return """
                \(index == 0 ? "if" : "elif") [[ $words[2] == \(subcommand.name) ]]; then
                        shift words; (( CURRENT-- ))
                        _arguments -s -S \\
                            \((specs(subcommand.table) + positionals).joined(separator: " \\\n            "))
                """
        }
        return #"""
            #compdef vmerge
            # zsh completion for vmerge(1), generated by 'vmerge --print-completion zsh': do not edit.

            _vmerge() {
                # The modes (`vmerge batch ...`, `vmerge queue ...`...) have options of their own.
                \#(branches.joined(separator: "\n    "))
                else
                    (( CURRENT == 2 )) && compadd -- \#(modes.joined(separator: " "))
                    _arguments -s -S \
                        \#(lines.joined(separator: " \\\n            "))
                fi
            }

            # Autoloaded from $fpath as _vmerge, or sourced.
            if [[ $funcstack[1] == _vmerge ]]; then
                _vmerge "$@"
            else
                compdef _vmerge vmerge
            fi

            """#
    }

    // MARK: fish

    /// `text` as one single-quoted word for fish.
    static func fishQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    private static var fish: String {
        /// One `complete` line for `option`, offered only when `condition` holds (fish -n).
        func line(_ option: OptionSpec, condition: String? = nil) -> String {
            var line = "complete -c vmerge" + (condition.map { " -n '\($0)'" } ?? "")
            if let short = option.short { line += " -s \(short)" }
            line += " -l \(option.long)"
            if option.value != nil {
                switch option.kind {
                case .file: line += " -r -F"
                case .directory: line += " -x -a '(__fish_complete_directories)'"
                case let .choice(words): line += " -x -a \(fishQuoted(words.joined(separator: " ")))"
                case .number, .text: line += " -x"
                }
            }
            return line + " -d \(fishQuoted(summary(option.help)))"
        }
        // Each command's own options only: after 'worker' no --output or --trim.
        let subcommandNames = CommandList.subcommands.map { $0.name }.joined(separator: " ")
        let lines = MergeCommand.table.map { line($0, condition: "not __fish_seen_subcommand_from \(subcommandNames)") }
        let subcommandLines = CommandList.subcommands.flatMap { subcommand in
            subcommand.table.map { line($0, condition: "__fish_seen_subcommand_from \(subcommand.name)") }
        }
        let videos = videoExtensions.joined(separator: "|")
        return #"""
            # fish completion for vmerge(1), generated by 'vmerge --print-completion fish': do not edit.

            # Inputs: the video files and folders matching the current word, or any file when there are none.
            function __vmerge_inputs
                set -l token (commandline -ct)
                set -l paths (complete -C "__vmerge_no_such_command $token")
                set -l preferred (string match -r --entire -- '(?i)^[^\t]*(?:\.(?:\#(videos))|/)(?:\t.*)?$' $paths)
                if set -q preferred[1]
                    printf '%s\n' $preferred
                else
                    printf '%s\n' $paths
                end
            end

            complete -c vmerge -f -n 'not __fish_seen_subcommand_from \#(subcommandNames)' -a '(__vmerge_inputs)'
            \#(fishPositionals.joined(separator: "\n"))
            \#(lines.joined(separator: "\n"))
            \#(subcommandLines.joined(separator: "\n"))

            """#
    }
}
