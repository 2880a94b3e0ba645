import Foundation

/// What a job asks for beyond its inputs and output: the merge options and the run's own
/// free-space floor. Built only through `JobOption` rows, so every way of describing a job (the
/// command line, a job list line, a job.json) gets the same checks and defaults.
package struct JobSettings: Sendable, Equatable {
    package var merge = MergeOptions()
    /// Free space the output folder must have; nil: 1 MiB plus an estimate of the output.
    package var minFree: Int64?

    package init() {}

    /// Rules between options, checked once all are read.
    package func validate() throws(JobOptionError) {
        if let maxDuration = merge.maxDuration, maxDuration * merge.frameRate.doubleValue < 1 {
            throw JobOptionError(
                "invalid value '\(maxDuration)' for '--max-duration': shorter than one frame")
        }
        if let problem = merge.outputSizeProblem { throw JobOptionError(problem) }
    }
}

/// A value a job option refuses: "invalid value 'x' for '--width': expected ...".
package struct JobOptionError: Error, Sendable, Equatable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }

    /// The one wording of a refused value, for the command line's options and job files alike.
    package static func invalidValue(_ text: String, for option: String, expected: String) -> JobOptionError {
        JobOptionError("invalid value '\(text)' for '--\(option)': expected \(expected)")
    }

    /// "a, b or c": the words a value may be.
    package static func oneOf(_ words: [String]) -> String { listed(words, last: "or") }

    /// "a, b and c" (or "or"): several names in a message.
    package static func listed(_ words: [String], last: String = "and") -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " \(last) " + words.last!
    }
}
