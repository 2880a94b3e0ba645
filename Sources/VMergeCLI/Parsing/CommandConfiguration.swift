import VMergeCore

/// What a command says of itself beside its options, as swift-argument-parser's
/// `CommandConfiguration`: the word that names it, what help says of it, its exit statuses and
/// what its words other than options are. Help, the man page, usage errors and the completion
/// scripts read it from each command of `CommandList`.
struct CommandConfiguration: Sendable {
    /// The word after `vmerge` that names it ("" for the merge, the default command).
    let name: String
    /// One line, for the completion scripts' menu of commands.
    let abstract: String
    /// Help's OVERVIEW, and the text of its section of the man page.
    let overview: String
    /// Help's USAGE, also said after a usage error.
    let usage: String
    let examples: [Help.Example]
    /// Its table of exit statuses (`Exit.table`).
    let exits: Exit.Command
    let positionals: Positionals
    /// A subcommand's line among the main help's examples, which points to its own help.
    var mainHelpExample: String? = nil
}

/// What a command's words other than options are, as the completion scripts offer them.
enum Positionals: Sendable, Equatable {
    /// Video files and folders, else any file: the merge's inputs.
    case inputs
    /// One path: any file or folder, or (`foldersOnly`) a folder. `label` names it in zsh's
    /// menu, `phrase` in a comment of the fish script.
    case path(foldersOnly: Bool, label: String, phrase: String)
    /// An action word, then a path after the action `pathAfter` (ids after the others, not
    /// completed). `label` names the words after the action in zsh's menu, `phrase` the path.
    case actions([String], pathAfter: String, label: String, phrase: String)
    /// None: the command's work comes from elsewhere.
    case none
}
