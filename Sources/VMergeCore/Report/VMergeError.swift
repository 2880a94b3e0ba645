import Foundation

/// Errors that stop a run. `description` reads "<file>: <what is wrong>"; the CLI prefixes
/// "vmerge: ".
package enum VMergeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An FFmpeg call failed: the file, what was being done, and av_strerror's text.
    case ffmpeg(file: String, operation: String, message: String)
    /// An input that cannot be used (missing, empty, not a video, truncated...).
    case invalidInput(file: String, reason: String)
    case nothingToMerge(dropped: Int)
    case outputExists(file: String)
    case outputIsInput(file: String)
    /// A regular file under the output's name that another user owns: whatever job tag it
    /// carries, vmerge did not write it for this user, so it is neither done nor replaced.
    case outputNotOurs(file: String, owner: UInt32)
    /// An output name the rules refuse (not .mp4/.m4v/.mov, outside the only folder the job may
    /// write in): the job's own fault, never tried again.
    case badOutputName(file: String, reason: String)
    case io(file: String, message: String)
    /// The output's folder has less free space than the job needs (not the job's fault: a watch
    /// worker puts the job back and waits).
    case noSpace(file: String, message: String)
    /// More space than the output's whole file system holds: no wait can help.
    case cannotFit(file: String, message: String)
    /// The job queue's database refused or failed: the connection string (password removed) and
    /// libpq's or the server's reason, on one line.
    case database(target: String, message: String)
    case cancelled(signal: Int32)

    package var description: String {
        switch self {
        case let .ffmpeg(file, operation, message): return "\(file): \(operation): \(message)"
        case let .invalidInput(file, reason), let .badOutputName(file, reason): return "\(file): \(reason)"
        case let .nothingToMerge(dropped):
            return dropped == 1
                ? "nothing to merge: its one input clip was dropped"
                : "nothing to merge: all \(dropped) input clips were dropped"
        case let .outputExists(file): return "\(file): output exists (use -y to overwrite)"
        case let .outputIsInput(file): return "\(file): output is also an input; refusing to overwrite it"
        case let .outputNotOurs(file, owner):
            return "\(file): output exists, not written by this user (owner uid \(owner))"
        case let .io(file, message), let .noSpace(file, message), let .cannotFit(file, message),
            let .database(file, message):
            return "\(file): \(message)"
        case let .cancelled(signal):
            let name =
                signal == 2
                ? "interrupted (SIGINT)" : signal == 15 ? "terminated (SIGTERM)" : "stopped by signal \(signal)"
            return "\(name): stopped, no output written"
        }
    }

    /// The same error about `to` instead of `from` (the temporary output is reported under the
    /// name the user gave).
    package func renamingFile(from: String, to: String) -> VMergeError {
        switch self {
        case let .ffmpeg(file, operation, message) where file == from:
            return .ffmpeg(file: to, operation: operation, message: message)
        case let .io(file, message) where file == from: return .io(file: to, message: message)
        case let .noSpace(file, message) where file == from: return .noSpace(file: to, message: message)
        case let .cannotFit(file, message) where file == from: return .cannotFit(file: to, message: message)
        case let .invalidInput(file, reason) where file == from: return .invalidInput(file: to, reason: reason)
        default: return self
        }
    }

    /// An I/O or FFmpeg error on `output` or in its folder (a write error), or too little free
    /// space there: the output's side, which may pass, unlike a bad input. An error about one of
    /// `inputs` (the files the job read) is the input's, even when it lies in the output's folder
    /// (an inbox inside the outbox, a job merging the folder it writes to).
    package func isOnOutputSide(of output: String, inputs: [FileName] = []) -> Bool {
        switch self {
        case let .io(file, _), let .ffmpeg(file, _, _):
            let named = absolutePath(file)
            if inputs.contains(where: { absolutePath($0.escaped) == named }) { return false }
            let folder = FileName(output).folder.escaped
            return file == output || file.hasPrefix(folder + "/")
        case .noSpace: return true
        default: return false
        }
    }

    /// Any error as a VMergeError: itself, or `other` made from its text (an error of the system
    /// or of Foundation, said about the file the caller names).
    package static func of(_ error: any Error, else other: (String) -> VMergeError) -> VMergeError {
        error as? VMergeError ?? other("\(error)")
    }

    /// What is wrong with any error, without the file: the one way an error becomes a message's
    /// text (a VMergeError's reason; anything else as it describes itself).
    package static func reason(of error: any Error) -> String {
        (error as? VMergeError)?.reason ?? "\(error)"
    }

    /// What is wrong, without the file.
    package var reason: String {
        switch self {
        case let .invalidInput(_, reason): return reason
        case let .io(_, message), let .noSpace(_, message), let .cannotFit(_, message), let .database(_, message),
            let .badOutputName(_, message):
            return message
        // What was attempted is part of what went wrong: "<file>: <reason>" is the description.
        case let .ffmpeg(_, operation, message): return "\(operation): \(message)"
        case .outputExists: return "output exists (use -y to overwrite)"
        case .outputIsInput: return "output is also an input; refusing to overwrite it"
        case let .outputNotOurs(_, owner): return "output exists, not written by this user (owner uid \(owner))"
        case .nothingToMerge, .cancelled: return description
        }
    }

    /// The file the error concerns, when there is one.
    package var file: String? {
        switch self {
        case let .ffmpeg(file, _, _), let .invalidInput(file, _), let .outputExists(file),
            let .outputIsInput(file), let .outputNotOurs(file, _), let .io(file, _), let .noSpace(file, _),
            let .cannotFit(file, _), let .database(file, _), let .badOutputName(file, _):
            return file
        case .nothingToMerge, .cancelled: return nil
        }
    }
}

/// Something worth telling the user that does not stop the run: a job's warning or note naming
/// its file, or a line of a worker's diary (watch, batch, the queue's workers), which names none.
/// The one shape of every message short of the error that ends a command.
package struct Diagnostic: Sendable, Equatable {
    /// `error`: something failed (a job, a claim) in a run that goes on; `info`: a worker's diary
    /// (claimed, done); `deleted`: --delete-sources deleted this file (said one line per file, or
    /// as a count with -q).
    package enum Severity: String, Sendable { case error, warning, note, info, deleted }

    /// What a message is about: a file (its name's bytes, printed through `VisibleText`), or
    /// something that is no file ("job 3", a queued job by its name).
    package enum Subject: Sendable, Equatable {
        case file(FileName)
        case label(String)

        /// As a message's text has it, in the lossless form (`VisibleText` prints it).
        package var text: String {
            switch self {
            case let .file(name): name.escaped
            case let .label(label): label
            }
        }
    }

    package var severity: Severity
    /// Whose it is, outermost first ("batch: [2/5] trip"), when several jobs speak at once:
    /// added by the sink's scopes (`DiagnosticSink.tagged`), never part of the subject.
    package var scope: [String] = []
    package var subject: Subject?
    package var message: String

    package init(_ severity: Severity, about subject: Subject?, _ message: String) {
        self.severity = severity
        self.subject = subject
        self.message = message
    }

    /// About the file named `file` in the lossless form (the layers that still carry names as
    /// text), or about nothing.
    package init(_ severity: Severity, file: String?, _ message: String) {
        self.init(severity, about: file.map { .file(FileName($0)) }, message)
    }

    /// The file it is about, when it is about one.
    package var file: FileName? {
        if case let .file(name) = subject { return name }
        return nil
    }

    /// What goes before the message: its scope and its subject ("batch: [2/5] trip: a.mov"), or
    /// nil when it has neither (a worker's own diary line).
    package var heading: String? {
        let parts = scope + (subject.map { [$0.text] } ?? [])
        return parts.isEmpty ? nil : parts.joined(separator: ": ")
    }

    /// The whole message, "<scope>: <subject>: <message>", in the lossless form.
    package var text: String { (heading.map { $0 + ": " } ?? "") + message }

    /// The same, said as `tag`'s ("batch: [2/5] trip: a.mov: ..."): whose it is, when several
    /// jobs speak at once.
    package func tagged(_ tag: String) -> Diagnostic {
        var tagged = self
        tagged.scope.insert(tag, at: 0)
        return tagged
    }
}

extension VMergeError {
    /// The one text any error is said as: a VMergeError's "<file>: <what is wrong>", else the
    /// error's own.
    package static func message(of error: any Error) -> String {
        (error as? VMergeError)?.description ?? "\(error)"
    }
}
