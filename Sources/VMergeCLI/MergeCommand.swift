import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs
import VMerge

/// One merge (or dry run) from a parsed command line: resolve inputs, check the output, probe and
/// plan, check free space, write; then the summary line and the JSON report, whatever happened.
struct MergeCommand {
    let request: MergeRequest
    let console: Console

    func run() -> Exit {
        let printer = MessagePrinter.forRun(console: console, verbosity: request.verbosity)
        if let fd = request.progressFD, fcntl(fd, F_GETFD) == -1 {
            printer.print(.error, file: nil, "--progress-fd \(fd): no such open file descriptor")
            return .usage
        }
        let display = ProgressDisplays.make(
            mode: request.progress, fd: request.progressFD, verbosity: request.verbosity, console: console,
            printer: printer)
        let job = request.job
        // The same run as the Swift API's MergeSession: a report that cannot be written is found
        // out before an hour of encoding, and is published with the video.
        var run = MergeRun(job: job, reportPath: request.reportPath == "-" ? nil : request.reportPath)
        run.readStandardInput = readStandardInput
        let performed = run.perform(
            onDiagnostic: { printer.diagnostic($0) }, onProgress: { display?.show($0) },
            context: MergeContext(hooks: request.hooks))
        display?.end()
        printer.sayDeletedCount()
        let outcome: JobOutcome, reportError: VMergeError?
        switch performed {
        case let .refused(message):
            printer.print(.error, file: nil, message)
            return .usage
        case let .failedToStart(error):
            printer.print(.error, file: nil, error.description)
            return .failure
        case let .ran(ran, error): (outcome, reportError) = (ran, error)
        }
        if let conflict = outcome.vetoed {
            // No report either: it would land on a video.
            printer.print(.error, file: request.reportPath, conflict)
            return .failure
        }
        let report = outcome.report
        if let error = report.error {
            printer.print(.error, file: nil, error.message)
        } else if let result = outcome.result {
            printSummary(result, printer: printer)
        } else if job.dryRun, let plan = outcome.plan {
            printPlan(plan)
        }
        if request.reportPath == "-" {
            console.output(report.json.text(pretty: true) + "\n")
        } else if let reportError {
            printer.print(.error, file: nil, reportError.description)
            return report.exit.failingLate
        }
        return report.exit
    }

    /// All of stdin; a signal while waiting for it cancels the run like any other.
    private func readStandardInput() throws -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count > 0 {
                data += buffer[0..<count]
                // An endless stdin (a device, a runaway producer) must not eat the memory.
                if data.count > InputList.maxListBytes {
                    throw VMergeError.invalidInput(
                        file: "-",
                        reason: "the input list on stdin is larger than \(ByteSize.format(Int64(InputList.maxListBytes)))")
                }
            } else if count == 0 {
                return String(decoding: data, as: UTF8.self)
            } else if errno != EINTR {
                throw VMergeError.io(file: "-", message: "cannot read the input list from stdin")
            }
            let signal = VMergeProcess.pendingSignal
            if signal != 0 { throw VMergeError.cancelled(signal: signal) }
        }
    }

    private func printSummary(_ result: MergeResult, printer: MessagePrinter) {
        let output = result.output
        // Clips with at least part of them in the file (--max-size may end it early).
        let kept = result.plan.clips.filter { $0.startMicros < output.durationMicros }.count
        var line = String(
            format: "wrote %@ (%d clip%@, %@ s, %@ bytes) in %.1f s", request.job.output, kept, kept == 1 ? "" : "s",
            formatSeconds(Double(output.durationMicros) / 1e6), String(output.bytes), result.wallSeconds)
        switch output.truncation {
        case .maxSize?: line += "; stopped early at its --max-size"
        case .maxDuration?: line += "; cut at its --max-duration"
        case nil: break
        }
        printer.print(.info, file: nil, line)
    }

    /// The dry run's account: one line per input, then the output. On stdout, unless the
    /// report is going there.
    private func printPlan(_ plan: MergePlan) {
        var lines: [String] = []
        for input in plan.inputs {
            switch input.disposition {
            case let .kept(index):
                let p = plan.clips[index]
                let v = p.clip.video
                var line = "keep  \(input.probe.path)  "
                line += "\(formatSeconds(p.clip.durationSeconds)) s, \(v.codec) \(v.width)x\(v.height) "
                line += "\(formatSeconds(v.frameRate.doubleValue)) fps, \(orientationText(v.orientation)), "
                line += "crop \(p.crop.width)x\(p.crop.height)+\(p.crop.x)+\(p.crop.y), "
                line += p.clip.audio.map { "audio \($0.codec) \($0.sampleRate) Hz \($0.channels) ch" } ?? "no audio"
                if p.isTrimmed {
                    line += "; from \(formatSeconds(Double(p.trimStartMicros) / 1e6)) s to "
                        + "\(formatSeconds(Double(p.trimEndMicros) / 1e6)) s "
                        + "(\(formatSeconds(Double(p.trimEndMicros - p.trimStartMicros) / 1e6)) s)"
                }
                line += "; at \(formatSeconds(Double(p.startMicros) / 1e6)) s"
                if p.isCut {
                    line += ", cut at \(formatSeconds(Double(p.trimStartMicros + p.durationMicros) / 1e6)) s by --max-duration"
                }
                lines.append(line)
            case let .dropped(reason):
                lines.append("drop  \(input.probe.path)  \(reason.message)")
            case .notProbed:
                lines.append("----  \(input.probe.path)  not probed")
            }
        }
        let size = request.job.options.outputSize
        lines.append(
            "output  \(request.job.output)  \(plan.clips.count) clip\(plan.clips.count == 1 ? "" : "s"), "
                + "\(formatSeconds(Double(plan.outputDurationMicros) / 1e6)) s, \(size.width)x\(size.height) at "
                + "\(request.job.options.frameRate) fps; not written (--dry-run)")
        // Each line names files from outside: escaped line by line, so none can break into two.
        let text = lines.map(VisibleText.of).joined(separator: "\n") + "\n"
        if request.reportPath == "-" { console.writeErrText(text) } else { console.output(text) }
    }

    private func orientationText(_ orientation: Orientation) -> String {
        let turn = orientation.rotationDegrees == 0 ? "upright" : "rotate \(orientation.rotationDegrees)"
        return orientation.isMirrored ? "\(turn) + mirror" : turn
    }
}
