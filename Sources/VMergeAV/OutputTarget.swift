import Foundation
import VMergeCore

/// The output file's life cycle: written to a fresh temporary file beside it (created with
/// O_EXCL|O_NOFOLLOW, written through its descriptor only), published under its name only once
/// complete (see `PublishSet`), without replacing anything unless overwriting was asked for;
/// removed on failure.
final class OutputTarget {
    let path: String
    let temporary: TemporaryFile
    fileprivate(set) var committedSize: Int64 = 0
    /// Where the file was published (the output name, or with `alternative` the next free one).
    fileprivate(set) var publishedPath: String

    var temporaryPath: String { temporary.path }

    /// - Parameter tag: names the temporary file, so a watch worker that died can have its
    ///   leftovers found by claim; default: this machine and process.
    init(path: String, tag: String? = nil) throws {
        self.path = path
        publishedPath = path
        temporary = try TemporaryFile(beside: path, tag: tag)
    }

    /// Refuses, before any work, an output that is one of the inputs, that exists (without
    /// overwrite), that is not a regular file (a link, FIFO, device: never replaced), or whose
    /// folder is missing or read-only.
    static func check(_ path: String, inputs: [String], overwrite: Bool) throws {
        try check(path, inputs: inputs, replace: overwrite ? .always : .never)
    }

    static func check(_ path: String, inputs: [String], replace: ReplacePolicy) throws {
        let output = PathIdentity.of(path)
        if case .file = output, inputs.contains(where: { PathIdentity.of($0) == output }) {
            throw VMergeError.outputIsInput(file: path)
        }
        try SafeFile.checkTarget(path, replace: replace)
    }

    func discard() { temporary.discard() }
}

/// A job's files (the poster, the report, the video), published as one. Every member is written
/// and synced under its temporary name first; then the others are published, each file it
/// replaces kept aside, and the video last: its name is what says the job is done (a keyed job's
/// output carries its key). A failure on the way puts every name back as it was, so a run leaves
/// the old set or the whole new one; with -y the old video stays in place until the new set is
/// complete. A crash on the way can leave members published without their video: a keyed job's
/// poster carries its key, so the next run of that job takes it as its own; a report is vmerge's
/// own by its first bytes.
struct PublishSet {
    private struct Member {
        let file: TemporaryFile
        let replace: ReplacePolicy
        /// Its path for the path the video is published under (watch may give it another name).
        let path: (String) -> String
        var isPoster: Bool
    }

    let video: OutputTarget
    private var members: [Member] = []
    /// Where the poster went, once published.
    private(set) var posterPath: String?

    init(video: OutputTarget) { self.video = video }

    /// - Parameters: poster: the poster (its published path is reported); path: its path for the
    ///   video's (nil: its own target, whatever the video's name).
    mutating func add(
        _ file: TemporaryFile, replace: ReplacePolicy, poster: Bool = false, path: ((String) -> String)? = nil
    ) {
        members.append(Member(file: file, replace: replace, path: path ?? { _ in file.target }, isPoster: poster))
    }

    /// Publishes the set under the video's name; if a name of it was taken meanwhile and
    /// `alternative` names others (n = 2, 3...), under the first whose names are all free.
    mutating func publish(overwrite: Bool, alternative: (@Sendable (Int) -> String)? = nil) throws {
        try video.temporary.sync()
        video.committedSize = video.temporary.size
        var candidates = [video.path]
        if let alternative { candidates += (2...1000).map(alternative) }
        for candidate in candidates {
            if candidate != video.path && FileKind.at(candidate) != .missing { continue }
            var published: [Member] = []
            do {
                for member in members {
                    try member.file.publishUndoably(as: SafeFile.split(member.path(candidate)).name, replace: member.replace)
                    published.append(member)
                }
                CrashPoint.here("before-video")
                try video.temporary.publish(
                    as: SafeFile.split(candidate).name, replace: overwrite ? .always : .never)
            } catch VMergeError.outputExists where alternative != nil {
                published.reversed().forEach { $0.file.undoPublish() }
                continue
            } catch {
                published.reversed().forEach { $0.file.undoPublish() }
                throw error
            }
            for member in members {
                member.file.keepPublished()
                if member.isPoster { posterPath = member.path(candidate) }
            }
            video.publishedPath = candidate
            return
        }
        throw VMergeError.outputExists(file: video.path)
    }

    /// Removes every temporary that was not published.
    func discard() {
        video.discard()
        members.forEach { $0.file.discard() }
    }
}
