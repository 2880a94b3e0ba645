import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// `vmerge watch`: the watch folder, its log lines and its exit status.
struct WatchCommand {
    let request: WatchRequest
    let console: Console

    func run() -> Int32 {
        let printer = MessagePrinter.forRun(console: console, verbosity: request.verbosity)
        var settings = WatchSettings(inbox: request.inbox, outbox: request.outbox, options: request.options)
        settings.settle = request.settle
        settings.marker = request.marker
        settings.deleteSources = request.deleteSources
        settings.retries = request.retries
        settings.poll = request.poll
        settings.once = request.once
        settings.statusFile = request.statusFile
        settings.minFree = request.minFree
        let (values, flags) = (request.sharedValues, request.sharedFlags)
        settings.jobOptions = { object, _ in
            do {
                return try ArgumentParser.jobOptions(
                    JobList.arguments(from: object), sharedValues: values, sharedFlags: flags
                ).0
            } catch let error as UsageError {
                throw VMergeError.invalidInput(file: "job.json", reason: error.description)
            }
        }
        // One line per job event on stderr; with -q only failures.
        let watch = WatchFolder(
            settings: settings,
            log: { line in
                printer.print(line.hasPrefix("failed") ? .error : .info, file: nil, "watch: " + line)
            },
            onDiagnostic: { printer.diagnostic($0) })
        do {
            try watch.run()
        } catch {
            printer.print(.error, file: nil, (error as? VMergeError)?.description ?? "\(error)")
            return ExitStatus.failure
        }
        if request.once { return watch.jobsFailed == 0 ? ExitStatus.success : ExitStatus.failure }
        return ExitStatus.success
    }
}
