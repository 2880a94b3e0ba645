import VMergeCore

// The completion scripts' lines for the commands' words other than options, from each command's
// `Positionals` (its `CommandConfiguration`), in `CommandList`'s order.

extension Completions {
    /// bash: the branches of `case ${COMP_WORDS[1]}` once the subcommand is typed, one per way of
    /// completing (`worker | dashboard`). Lines after a branch's first are indented 4 per level.
    static var bashPositionals: [String] {
        var branches: [(names: [String], positionals: Positionals)] = []
        for command in CommandList.subcommands {
            let positionals = command.configuration.positionals
            if let index = branches.firstIndex(where: { $0.positionals == positionals }) {
                branches[index].names.append(command.name)
            } else {
                branches.append(([command.name], positionals))
            }
        }
        return branches.flatMap { branch -> [String] in
            let pattern = branch.names.joined(separator: " | ") + ")"
            switch branch.positionals {
            case .inputs: return [pattern + #" _vmerge_inputs "$cur"; return ;;"#]
            case let .path(foldersOnly, _, _):
                return [pattern + #" _vmerge_paths \#(foldersOnly ? "-d" : "-f") "$cur"; return ;;"#]
            case let .actions(words, pathAfter, _, phrase):
                return [
                    pattern,
                    "    # The action, then \(phrase) for \(pathAfter) (ids otherwise).",
                    "    if ((COMP_CWORD == 2)); then",
                    #"        COMPREPLY=($(compgen -W \#(quoted(words.joined(separator: " "))) -- "$cur"))"#,
                    "    elif [[ ${COMP_WORDS[2]} == \(pathAfter) ]]; then",
                    #"        _vmerge_paths -f "$cur""#,
                    "    fi",
                    "    return ;;",
                ]
            case .none: return [pattern + " return ;;"]
            }
        }
    }

    /// zsh: the `_arguments` specs of one command's positionals (unquoted), after its options.
    static func zshPositionals(_ positionals: Positionals) -> [String] {
        switch positionals {
        case .inputs:
            let glob = "*.(#i)(\(videoExtensions.joined(separator: "|")))(-.)"
            return [#"*:input:_files -g "\#(glob)""#]
        case let .path(foldersOnly, label, _): return ["1:\(label):_files" + (foldersOnly ? " -/" : "")]
        case let .actions(words, _, label, _):
            return ["1:action:(\(words.joined(separator: " ")))", "*:\(label):_files"]
        case .none: return []
        }
    }

    /// fish: what follows each subcommand's word (paths, actions, nothing) and the menu of
    /// subcommands with their abstracts.
    static var fishPositionals: [String] {
        let commands = CommandList.subcommands.map { (name: $0.name, configuration: $0.configuration) }
        var lines: [String] = []
        var paths: [String] = []
        var wordless: [String] = []
        var actions: [(name: String, words: String, pathAfter: String)] = []
        for (name, configuration) in commands {
            let seen = "'__fish_seen_subcommand_from \(name)'"
            switch configuration.positionals {
            case .inputs: lines.append("complete -c vmerge -f -n \(seen) -a '(__vmerge_inputs)'")
            case let .path(foldersOnly, _, phrase):
                paths.append("\(name) \(paths.isEmpty ? "takes " : "")\(phrase)")
                lines.append(
                    foldersOnly
                        ? "complete -c vmerge -f -n \(seen) -a '(__fish_complete_directories)'"
                        : "complete -c vmerge -n \(seen) -F")
            case let .actions(words, pathAfter, _, _):
                wordless.append(name)
                actions.append((name, words.joined(separator: " "), pathAfter))
            case .none: wordless.append(name)
            }
        }
        if !paths.isEmpty { lines.insert("# " + paths.joined(separator: "; ") + ".", at: 0) }
        if !wordless.isEmpty {
            let but =
                actions.isEmpty
                ? "" : ", but for " + JobOptionError.listed(actions.map { "'\($0.name) \($0.pathAfter)'" })
            lines.append("# Words after \(JobOptionError.listed(wordless)) are no files\(but).")
            lines.append("complete -c vmerge -f -n '__fish_seen_subcommand_from \(wordless.joined(separator: " "))'")
        }
        for (name, configuration) in commands {
            lines.append(
                "complete -c vmerge -n __fish_use_subcommand -a \(name) -d \(fishQuoted(configuration.abstract))")
        }
        for action in actions {
            lines.append(
                "complete -c vmerge -n '__fish_seen_subcommand_from \(action.name); and not __fish_seen_subcommand_from "
                    + "\(action.words)' \\\n    -a '\(action.words)'")
            lines.append(
                "complete -c vmerge -n '__fish_seen_subcommand_from \(action.name); and __fish_seen_subcommand_from "
                    + "\(action.pathAfter)' -F")
        }
        return lines
    }
}
