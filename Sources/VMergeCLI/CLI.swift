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
        console.error("Usage: vmerge [options] <input>... -o <output>   (see 'vmerge --help')")
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
    }
}

private func merge(_ request: MergeRequest, console: Console) -> Int32 {
    if request.verbosity == .verbose { Merger.prepareProcess(ffmpegLogLevel: 24) }  // AV_LOG_WARNING
    let merger = Merger(options: request.options) { diagnostic in
        guard request.verbosity != .quiet else { return }
        let file = diagnostic.file.map { "\($0): " } ?? ""
        console.error("vmerge: \(file)\(diagnostic.message)")
    }
    do {
        let result = try merger.merge(inputs: request.inputs, output: request.output)
        if request.verbosity != .quiet {
            let kept = result.plan.clips.count
            console.error(
                String(
                    format: "vmerge: wrote %@ (%d clip%@, %@ s, %@ bytes) in %.1f s",
                    request.output, kept, kept == 1 ? "" : "s", formatSeconds(Double(result.durationMicros) / 1e6),
                    String(result.bytes), result.wallSeconds))
        }
        return ExitStatus.success
    } catch let error as VMergeError {
        console.error("vmerge: \(error.description)")
        switch error {
        case .nothingToMerge: return ExitStatus.nothingToMerge
        case let .cancelled(signal): return 128 + signal
        default: return ExitStatus.failure
        }
    } catch {
        console.error("vmerge: \(error)")
        return ExitStatus.failure
    }
}

/// Where messages go: results to stdout, everything for people to stderr.
public struct Console: Sendable {
    let writeOut: @Sendable (String) -> Void
    let writeErr: @Sendable (String) -> Void

    public init() {
        writeOut = { FileHandle.standardOutput.write(Data($0.utf8)) }
        writeErr = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    }

    public init(output: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void) {
        writeOut = output
        writeErr = { error($0 + "\n") }
    }

    func output(_ text: String) { writeOut(text) }
    func error(_ line: String) { writeErr(line) }
}
