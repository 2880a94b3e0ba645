import Foundation
import VMergeCore

/// --poster: the JPEG beside the job's video, made from a picture the encoder already has, and a
/// done job's poster made again when it is missing.
extension Merger {
    /// --poster's JPEG, written and synced under a temporary name and added to `set`. A kept
    /// video's poster stays as it is when it is the job's own (`MergeContext.keepsOwnVideo`).
    /// - Parameter picture: the own picture's frame at the poster's time; nil when --max-size ended
    ///   the file before it (then decoded back from the file, at the same place in what it holds).
    func addPoster(
        for output: String, picture: Frame?, of target: OutputTarget, lasting micros: Int64, in folder: OutputFolder,
        to set: inout PublishSet
    ) throws {
        guard let path = posterPath(for: output),
            !(context.keepsOwnVideo && jobKey != nil && PosterKey.key(of: path) == jobKey)
        else { return }
        let frame =
            try picture
            ?? Poster.frame(
                ofOutput: target.temporaryPath, atMicros: options.posterMicros(outputDurationMicros: micros))
        let jpeg = try Poster.jpeg(of: frame, file: path, key: jobKey)
        // Always beside the output (a poster's name has no folder): in its folder.
        let file = try folder.temporaryFile(for: path, tag: temporaryTag)
        try file.write(jpeg)
        try file.sync()
        set.add(file, replace: posterPolicy, poster: true) { [options] video in
            options.posterPath(forOutput: video) ?? path
        }
    }

    /// For a job found done: its poster made again from the output, under a temporary name,
    /// when the poster's name is empty or holds another job's poster (a -y run of another job
    /// killed between its poster and its video); nil when there is nothing to do (a file that is
    /// not a vmerge poster is left alone). The caller publishes it.
    package func remadePoster(forOutput output: String) throws -> RemadePoster? {
        guard let path = posterPath(for: output), let jobKey else { return nil }
        let kind = FileKind.at(FileName(path))
        let found = PosterKey.key(of: path)
        // Another job's poster is made again only when it is this user's: another user's file is
        // never replaced, whatever key it carries.
        guard kind == .missing || (SafeFile.isOurs(path) && found != nil && found != jobKey) else { return nil }
        let clip = try Probe.clip(at: output).0
        let frame = try Poster.frame(
            ofOutput: output, atMicros: options.posterMicros(outputDurationMicros: clip.durationMicros))
        let file = try TemporaryFile(beside: path, tag: temporaryTag)
        try file.write(try Poster.jpeg(of: frame, file: path, key: jobKey))
        try file.sync()
        return RemadePoster(
            file: file, replace: found.map { .ifPosterOfJob($0) } ?? .never,
            note: kind == .missing
                ? "its poster was missing: made again from it" : "its poster was another job's: made again from it")
    }

}

/// A done job's poster made again (see `Merger.remadePoster(forOutput:)`): written and synced
/// under its temporary name, to be published replacing only what `replace` allows.
package struct RemadePoster {
    package let file: TemporaryFile
    package let replace: ReplacePolicy
    /// What was done, for a note.
    package let note: String
}
