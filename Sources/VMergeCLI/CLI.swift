import Foundation
import VMergeAV
import VMergeCore

/// Exit statuses, one table shared by help, README and code.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 2
    public static let nothingToMerge: Int32 = 3
}

/// Entry point of the `vmerge` executable.
public func main() -> Never {
    Merger.prepareProcess()
    exit(run(Array(CommandLine.arguments.dropFirst()), console: Console()))
}

/// Runs one command line; returns the exit status.
public func run(_ arguments: [String], console: Console) -> Int32 {
    let command: Command
    do {
        command = try ArgumentParser.parse(arguments)
    } catch let error as UsageError {
        console.error("vmerge: \(error.description)")
        switch arguments.first {
        case "batch":
            console.error(
                "Usage: vmerge batch <jobs.jsonl | folder> [--out <dir>] [options]   (see 'vmerge batch --help')")
        case "watch": console.error("Usage: vmerge watch <inbox> --out <dir> [options]   (see 'vmerge watch --help')")
        default: console.error("Usage: vmerge [options] <input>... -o <output>   (see 'vmerge --help')")
        }
        return ExitStatus.usage
    } catch {
        console.error("vmerge: \(error)")
        return ExitStatus.usage
    }
    switch command {
    case .help:
        console.output(Help.text)
        return ExitStatus.success
    case .version:
        var text = "vmerge \(Help.version)\nFFmpeg \(FFmpegVersions.release)\n"
        for (name, version) in FFmpegVersions.libraries { text += "  \(name) \(version)\n" }
        console.output(text)
        return ExitStatus.success
    case let .merge(request):
        return merge(request, console: console)
    case let .batch(request):
        return BatchCommand(request: request, console: console).run()
    case let .watch(request):
        return WatchCommand(request: request, console: console).run()
    case let .subcommandHelp(name):
        console.output(name == "batch" ? Help.batchText : Help.watchText)
        return ExitStatus.success
    case .manPage:
        console.output(ManPage.text)
        return ExitStatus.success
    case let .completion(shell):
        console.output(Completions.script(for: shell))
        return ExitStatus.success
    }
}

private func merge(_ request: MergeRequest, console: Console) -> Int32 {
    MergeCommand(request: request, console: console).run()
}
