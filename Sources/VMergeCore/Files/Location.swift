/// Where a command reads or writes bytes that are not a video: a file, or the process's own
/// standard input or output, which the command line names "-" (an input list on stdin, a report
/// to stdout). The standard streams are cases of their own, never a name that happens to be "-"
/// (`./-` is a file). An object in a bucket is one more case (a report written to
/// `s3://bucket/key.json`): one shape for a place, whichever kind it is.
package enum Location: Hashable, Sendable, CustomStringConvertible {
    case file(FileName)
    case standardInput
    case standardOutput
    case remote(RemoteName)

    /// What the command line's `word` names where the command reads: "-" is standard input.
    package static func reading(_ word: String) -> Location { word == "-" ? .standardInput : .file(FileName(word)) }

    /// What the command line's `word` names where the command writes: "-" is standard output.
    package static func writing(_ word: String) -> Location { word == "-" ? .standardOutput : .file(FileName(word)) }

    /// The file, when it is one.
    package var file: FileName? {
        if case let .file(name) = self { return name }
        return nil
    }

    /// As the command line names it, in the lossless form (a report's field, a message's
    /// subject): a file's name, "-" for a standard stream.
    package var named: String {
        switch self {
        case let .file(name): name.escaped
        case .standardInput, .standardOutput: "-"
        case let .remote(name): name.description
        }
    }

    /// The name a file or an object is written under; nil for a standard stream.
    package var writtenName: String? {
        switch self {
        case .file, .remote: named
        case .standardInput, .standardOutput: nil
        }
    }

    /// As a person reads it (`VisibleText`).
    package var description: String {
        switch self {
        case let .file(name): name.description
        case .standardInput, .standardOutput: "-"
        case let .remote(name): name.description
        }
    }
}
