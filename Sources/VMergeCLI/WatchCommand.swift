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
        let watch = WatchFolder(
            settings: request.watch, log: printer.workerLog("watch"),
            onDiagnostic: { printer.diagnostic($0) })
        defer { printer.sayDeletedCount() }
        do {
            try watch.run()
        } catch {
            printer.print(.error, file: nil, VMergeError.message(of: error))
            return .failure
        }
        if request.watch.once {
            return watch.jobsFailed == 0 && watch.jobsNotDone == 0 ? .success : .failure
        }
        return .success
    }
}
