import Foundation
import VMergeCore

/// Whether the inputs of jobs being queued are there, as the adder sees them: a missing one
/// would fail its job only when a worker reaches it, hours later in a long queue. Only what
/// says "not there" counts (ENOENT, ENOTDIR): an input the adder may not look at (EACCES) may
/// be the workers' to read.
package enum QueuedInputs {
    /// An input of `job` that does not exist here.
    package struct Missing: Sendable, Equatable {
        package var job: String
        package var path: String
    }

    /// The missing inputs of `jobs`, in order, as they would be queued (absolute paths).
    package static func missing(in jobs: [Job]) -> [Missing] {
        jobs.flatMap { job in
            JobSpec.absolute(job).inputs.compactMap { input -> Missing? in
                // An object is the workers' to look up, with their credentials.
                if RemoteName.looksRemote(input.path.escaped) { return nil }
                var info = stat()
                guard POSIX.stat(input.path, &info) != 0, errno == ENOENT || errno == ENOTDIR else { return nil }
                return Missing(job: job.name, path: input.path.escaped)
            }
        }
    }

    /// Refuses `jobs` when an input is missing: one line naming the first, and how many more.
    package static func check(_ jobs: [Job]) throws {
        let missing = missing(in: jobs)
        guard let first = missing.first else { return }
        let more = missing.count > 1 ? ", and \(missing.count - 1) more input\(missing.count > 2 ? "s" : "")" : ""
        throw VMergeError.invalidInput(
            file: first.path,
            reason: "no such file or folder (an input of job \(VisibleText.of(first.job))\(more)); nothing added "
                + "('--inputs-elsewhere' if the workers see another tree)")
    }
}
