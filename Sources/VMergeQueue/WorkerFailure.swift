import VMergeCore

/// How a worker words and weighs a job's failure for the queue.
extension Worker {
    /// Output-side errors (a write error, a full disk, a missing output folder) may pass and are
    /// tried again after a backoff; a bad input never will, nor a file under the output's name
    /// that the job did not write (a queued job never replaces one).
    static func isRetryable(_ error: VMergeError, output: String, inputs: [FileName] = []) -> Bool {
        error.isOnOutputSide(of: output, inputs: inputs)
    }

    /// The error as the queue records it: the output-exists message names -y, which a queued
    /// job has not got.
    static func message(for error: VMergeError) -> String {
        if case let .outputExists(file) = error {
            return "\(file): output exists and is not this job's; a queued job never replaces it: move it away and "
                + "'vmerge queue retry' the job"
        }
        return error.description
    }
}

/// Why a worker stopped: the database refused it for good.
struct WorkerRefused: Error, CustomStringConvertible {
    let description: String
}
