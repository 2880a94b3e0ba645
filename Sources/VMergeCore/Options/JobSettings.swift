import Foundation

/// What a job asks for beyond its inputs and output: the merge options and the run's own
/// free-space floor. Built only through `JobOption` rows, so every way of describing a job (the
/// command line, a job list line, a job.json) gets the same checks and defaults.
package struct JobSettings: Sendable, Equatable {
    package var merge = MergeOptions()
    /// Free space the output folder must have; nil: 1 MiB plus an estimate of the output.
    package var minFree: Int64?

    package init() {}

    /// Rules between options, checked once all are read, said with the options named as the
    /// door that set them names them.
    package func validate(naming: OptionNaming = .commandLine) throws(JobOptionError) {
        if let maxDuration = merge.maxDuration, maxDuration * merge.frameRate.doubleValue < 1 {
            throw JobOptionError(naming.invalid("\(maxDuration)", for: "max-duration", "shorter than one frame"))
        }
        if let problem = merge.outputSizeProblem(naming: naming) { throw JobOptionError(problem) }
    }
}

/// How a door names a job option in a message: the command line (and job files, which take its
/// names) as "'--width'", the Swift API by its property, "width" or "frameRate".
package struct OptionNaming: Sendable {
    private let name: @Sendable (String) -> String
    private let quoted: Bool

    /// - Parameter name: the option's name as the door calls it, from its command-line name.
    package init(quoted: Bool, name: @escaping @Sendable (String) -> String) {
        self.quoted = quoted
        self.name = name
    }

    package static let commandLine = OptionNaming(quoted: true) { "--" + $0 }

    /// The option's name: "'--width'", "width".
    package func callAsFunction(_ option: String) -> String { quoted ? "'\(name(option))'" : name(option) }

    /// The option as a word in running text, unquoted: "--strict", "isStrict".
    package func word(_ option: String) -> String { name(option) }

    /// The option with its value: "'--width 17'", "width 17".
    package func callAsFunction(_ option: String, _ value: String) -> String {
        quoted ? "'\(name(option)) \(value)'" : "\(name(option)) \(value)"
    }

    /// A refused value: "invalid value '17' for '--width': expected ...", "invalid value 17 for width: ...".
    package func invalid(_ value: String, for option: String, _ why: String) -> String {
        "invalid value \(quoted ? "'\(value)'" : value) for \(self(option)): \(why)"
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
