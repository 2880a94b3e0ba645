import Foundation
import VMergeAV
import VMergeCore

/// Entry point of the `vmerge` executable: the process is set up once, before any command runs.
package func main() -> Never {
    VMergeProcess.prepare()
    exit(run(arguments(), console: Console()))
}

/// The command line as given: each argument's bytes kept (`FileName`), where
/// `CommandLine.arguments` turns a byte that is not UTF-8 into U+FFFD and so names another file.
private func arguments() -> [String] {
    (1..<Int(CommandLine.argc)).compactMap { CommandLine.unsafeArgv[$0].map { FileName.decode(cString: $0) } }
}

/// Runs one command line; returns the exit status. Every command ends in an `Exit`, and this is
/// the one place it becomes a number.
package func run(_ arguments: [String], console: Console) -> Int32 {
    execute(arguments, console: console).status
}

private func execute(_ arguments: [String], console: Console) -> Exit {
    let command: Command
    do {
        let hooks = TestHooks(environment: console.environment)
        CrashPoint.armed = hooks.killPoint
        CrashPoint.pause = hooks.pausePoint.flatMap { point in hooks.pauseFile.map { (point, $0) } }
        command = try hooks.applied(to: ArgumentParser.parse(arguments))
    } catch {
        // Before the options are known: said at the default verbosity (errors always are).
        let form = ArgumentParser.messageForm(of: arguments)
        let printer = MessagePrinter(console: console, verbosity: .normal, form: form)
        let exit = CommandRunner.fail(error, printer: printer, usageLine: ArgumentParser.usageLine(for: arguments.first))
        // Whatever a parse refuses is the command line's mistake.
        return exit == .failure ? .usage : exit
    }
    switch command {
    case .help:
        console.output(Help.text(width: console.helpWidth))
    case .version:
        var text = "vmerge \(Help.version)\nFFmpeg \(FFmpegVersions.release)\n"
        for (name, version) in FFmpegVersions.libraries { text += "  \(name) \(version)\n" }
        console.output(text)
    case let .run(command):
        return CommandRunner.run(command, console: console)
    case let .subcommandHelp(name):
        console.output(Help.text(for: CommandList.command(for: name), width: console.helpWidth))
    case .manPage:
        console.output(ManPage.text)
    case let .completion(shell):
        console.output(Completions.script(for: shell))
    }
    return .success
}

/// vmerge's commands, listed once, as swift-argument-parser's `CommandConfiguration.subcommands`:
/// parsing, usage lines, help, the man page, the completion scripts and dispatch all read this
/// list, so a command added here is in every one of them.
enum CommandList {
    /// Run when the first word names no other command: `vmerge a.mov b.mov -o out.mp4`.
    static var defaultCommand: any CommandSpec.Type { MergeCommand.self }

    /// Named by the word after `vmerge`, in the order help, the man page and completions list them.
    static var subcommands: [any CommandSpec.Type] {
        [BatchCommand.self, WatchCommand.self, QueueCommand.self, WorkerCommand.self, DashboardCommand.self]
    }

    /// Every command, the default first.
    static var all: [any CommandSpec.Type] { [defaultCommand] + subcommands }

    /// The subcommand `word` names, if any.
    static func subcommand(named word: String?) -> (any CommandSpec.Type)? {
        subcommands.first { $0.name == word }
    }

    /// The command a command line starting with `word` runs.
    static func command(for word: String?) -> any CommandSpec.Type {
        subcommand(named: word) ?? defaultCommand
    }
}
