// merge-clips: the README's "Use from Swift" example, built on the public API alone.
//
//     vmerge-example first.mov second.mov out.mp4
//
// Merges the clips into out.mp4 (320x240 H.264/AAC, overwriting it), prints progress, and stops
// cleanly on Ctrl-C: the task is cancelled and no part of out.mp4 is left.
import Dispatch
import Foundation
import VMerge

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: vmerge-example <clip>... <output.mp4>\n".utf8))
    exit(2)
}

var job = MergeJob(
    inputs: arguments.dropLast().map { URL(fileURLWithPath: $0) },
    output: URL(fileURLWithPath: arguments.last!))
job.overwrites = true
let session = MergeSession(job)

/// One line on stdout, written at once (also into a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let merge = Task {
    try await session.run()
}

// Ctrl-C cancels the task; the session stops the merge and removes what it had written.
signal(SIGINT, SIG_IGN)
let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
interrupt.setEventHandler { merge.cancel() }
interrupt.resume()

let printer = Task {
    for await step in session.progress {
        say(String(format: "%@ %3.0f%%  clip %d/%d", step.phase.rawValue, step.fractionCompleted * 100, step.clip, step.clipCount))
    }
}

do {
    let report = try await merge.value
    await printer.value
    for warning in report.warnings { say("warning: \(warning)") }
    if let output = report.output {
        say("wrote \(output.file): \(output.width)x\(output.height), \(output.duration) s, \(output.bytes ?? 0) bytes")
    }
} catch is CancellationError {
    say("cancelled; nothing was written")
    exit(130)
} catch let error as MergeError {
    FileHandle.standardError.write(Data("vmerge-example: \(error)\n".utf8))
    exit(1)
}
