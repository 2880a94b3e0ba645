import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// `vmerge watch`: the watch folder, its log lines and its exit status.
struct WatchCommand {
    let request: WatchRequest
    let console: Console

    func run() -> Exit {
        let printer = MessagePrinter.forRun(console: console, verbosity: request.verbosity)
        // One line per job event on stderr; with -q only failures.
        let watch = WatchFolder(
            settings: request.watch,
            log: { line in printer.print(line.level == .problem ? .error : .info, file: nil, "watch: " + line.text) },
            onDiagnostic: { printer.diagnostic($0) })
        do {
            try watch.run()
        } catch {
            printer.print(.error, file: nil, (error as? VMergeError)?.description ?? "\(error)")
            return .failure
        }
        if request.watch.once {
            return watch.jobsFailed == 0 && watch.jobsNotDone == 0 ? .success : .failure
        }
        return .success
    }
}
