import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// `vmerge watch`: the watch folder, its log lines and its exit status.
struct WatchCommand {
    let request: WatchRequest
    let console: Console

    func run() -> Int32 {
        ExitStatus.failure
    }
}
