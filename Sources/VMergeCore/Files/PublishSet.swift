import Foundation

/// The output file's life cycle: written to a fresh temporary file beside it (created with
/// O_EXCL|O_NOFOLLOW, written through its descriptor only), published under its name only once
/// complete (see `PublishSet`), without replacing anything unless overwriting was asked for;
/// removed on failure.
///
/// Every rule for an output's name lives here, where the file is made, not at the doors a job
/// comes in by (the command line, a job list, a job.json, a queue spec that anyone with the table
/// may edit, the Swift API): a door may check early to say so sooner, but none can skip it.
package final class OutputTarget {
    package let path: String
    /// What it may replace when published without -y (a video: nothing, or this job's own file).
    package let replace: ReplacePolicy
    /// The folder the whole set is published in, opened once (see `OutputFolder`).
    package let folder: OutputFolder
    package let temporary: TemporaryFile
    package fileprivate(set) var committedSize: Int64 = 0
    /// Where the file was published (the output name, or with `alternative` the next free one).
    package fileprivate(set) var publishedPath: String

    package var temporaryPath: String { temporary.path }

    /// - Parameters: inputs: the job's inputs, which the output may not be; folder: the only folder
    ///   the job may write in (watch: OUTBOX), nil for anywhere; tag: names the temporary file, so
    ///   a watch worker that died can have its leftovers found by claim; default: this machine and
    ///   process; directory: the folder `path` lies in, opened when the job started.
    package init(
        path: String, inputs: [String], replace: ReplacePolicy, folder: String?, tag: String? = nil,
        in directory: OutputFolder
    ) throws {
        try OutputTarget.check(path, inputs: inputs, replace: replace, folder: folder)
        self.path = path
        self.replace = replace
        publishedPath = path
        self.folder = directory
        temporary = try directory.temporaryFile(for: path, tag: tag)
    }

    /// Refuses, before any work, an output that is one of the inputs, that exists (without
    /// overwrite), that is not a regular file (a link, FIFO, device: never replaced), or whose
    /// folder is missing or read-only.
    package static func check(_ path: String, inputs: [String], overwrite: Bool, folder: String? = nil) throws {
        try check(path, inputs: inputs, replace: overwrite ? .always : .never, folder: folder)
    }

    package static func check(
        _ path: String, inputs: [String], replace: ReplacePolicy, kind: Kind = .video, folder: String? = nil
    ) throws {
        try checkName(path, kind: kind, folder: folder)
        try checkAgainstInputs(path, inputs: inputs)
        // An object in a bucket is looked at by its own request (RemoteOutput), and never
        // replaced but under a condition: no local folder to check.
        if case .s3? = RemoteName(path) { return }
        try SafeFile.checkTarget(path, replace: replace)
    }

    /// What a published file is, for the rule on its name.
    package enum Kind { case video, companion }

    /// The name rule: a video's name ends in .mp4/.m4v/.mov (the container follows the name: an
    /// MP4 is never written under another one), and every file of a job lies in `folder` when the
    /// job is held to one (checked by identity: "out/../out/x.mp4" is in out, a link to elsewhere
    /// is not).
    package static func checkName(_ path: String, kind: Kind, folder: String?) throws {
        if kind == .video, let problem = OutputContainer.problem(withName: path) {
            throw VMergeError.badOutputName(file: path, reason: problem)
        }
        if let folder, PathIdentity.of(FileName(SafeFile.split(path).folder)) != PathIdentity.of(FileName(folder)) {
            throw VMergeError.badOutputName(
                file: path, reason: "is outside \(folder), the only folder this job may write in")
        }
    }

    private static func checkAgainstInputs(_ path: String, inputs: [String]) throws {
        let output = PathIdentity.of(FileName(path))
        if case .file = output, inputs.contains(where: { PathIdentity.of(FileName($0)) == output }) {
            throw VMergeError.outputIsInput(file: path)
        }
    }

    package func discard() { temporary.discard() }
}

/// A job's files (the poster, the report, the video), published as one. Every member is written
/// and synced under its temporary name first; then the others are published, each file it
/// replaces kept aside, and the video last: its name is what says the job is done (a keyed job's
/// output carries its key). A failure on the way puts every name back as it was, so a run leaves
/// the old set or the whole new one; with -y the old video stays in place until the new set is
/// complete. A crash on the way can leave members published without their video: a keyed job's
/// poster carries its key, so the next run of that job takes it as its own; a report is vmerge's
/// own by its first bytes.
package struct PublishSet {
    private struct Member {
        let file: TemporaryFile
        let replace: ReplacePolicy
        /// Its path for the path the video is published under (watch may give it another name).
        let path: (String) -> String
        var isPoster: Bool
        /// A --rendition's video: its name follows the video rule.
        var isRendition = false
    }

    package let video: OutputTarget
    /// The only folder the set may be published in (see `OutputTarget.checkName`).
    package let folder: String?
    /// The video under the output's name is this job's, found there, and stays: only the other
    /// members are published (as one: all or none), and the video's temporary is dropped.
    package let keepsVideo: Bool
    private var members: [Member] = []
    /// Where the poster went, once published.
    package private(set) var posterPath: String?
    /// Where each rendition went, once published, in the order they were added.
    package private(set) var renditionPaths: [String] = []

    package init(video: OutputTarget, folder: String?, keepsVideo: Bool = false) {
        self.video = video
        self.folder = folder
        self.keepsVideo = keepsVideo
    }

    /// - Parameters: poster: the poster (its published path is reported); path: its path for the
    ///   video's (nil: its own target, whatever the video's name).
    package mutating func add(
        _ file: TemporaryFile, replace: ReplacePolicy, poster: Bool = false, path: ((String) -> String)? = nil
    ) {
        members.append(Member(file: file, replace: replace, path: path ?? { _ in file.target }, isPoster: poster))
    }

    /// Adds a --rendition's video; `path` gives its name for the video's.
    package mutating func addRendition(
        _ file: TemporaryFile, replace: ReplacePolicy, path: @escaping (String) -> String
    ) {
        members.append(Member(file: file, replace: replace, path: path, isPoster: false, isRendition: true))
    }

    /// Publishes the set under the video's name; if a name of it was taken meanwhile and
    /// `alternative` names others (n = 2, 3...), under the first whose names are all free.
    package mutating func publish(overwrite: Bool, alternative: (@Sendable (Int) -> String)? = nil) throws {
        try video.temporary.sync()
        video.committedSize = video.temporary.size
        if keepsVideo {
            var info = stat()
            if POSIX.stat(FileName(video.path), &info) == 0 { video.committedSize = Int64(info.st_size) }
        }
        var candidates = [video.path]
        if let alternative, !keepsVideo { candidates += (2...1000).map(alternative) }
        for candidate in candidates {
            if candidate != video.path && video.folder.kind(of: SafeFile.split(candidate).name) != .missing { continue }
            var published: [Member] = []
            do {
                try checkNames(forVideo: candidate)
                for member in members {
                    try member.file.publishUndoably(
                        as: SafeFile.split(member.path(candidate)).name, replace: member.replace)
                    published.append(member)
                }
                CrashPoint.here("before-video")
                if keepsVideo {
                    // Still this job's, or the members go back: a name taken meanwhile by
                    // another file is not a set.
                    try OutputTarget.check(video.path, inputs: [], replace: video.replace, folder: folder)
                    video.temporary.discard()
                } else {
                    try video.temporary.publish(
                        as: SafeFile.split(candidate).name, replace: overwrite ? .always : video.replace)
                }
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
                if member.isRendition { renditionPaths.append(member.path(candidate)) }
            }
            video.publishedPath = candidate
            return
        }
        throw VMergeError.outputExists(file: video.path)
    }

    /// The name rule for each file of the set under the video's name `candidate`, and no two of
    /// them one file (a report or a poster never takes the video's place, nor each other's).
    private func checkNames(forVideo candidate: String) throws {
        try OutputTarget.checkName(candidate, kind: .video, folder: folder)
        var taken = [PathIdentity.of(FileName(candidate))]
        for member in members {
            let path = member.path(candidate)
            try OutputTarget.checkName(path, kind: member.isRendition ? .video : .companion, folder: folder)
            let identity = PathIdentity.of(FileName(path))
            if taken.contains(identity) {
                throw VMergeError.badOutputName(file: path, reason: "would take the place of another file of this job")
            }
            taken.append(identity)
        }
    }

    /// Removes every temporary that was not published.
    package func discard() {
        video.discard()
        members.forEach { $0.file.discard() }
    }
}
