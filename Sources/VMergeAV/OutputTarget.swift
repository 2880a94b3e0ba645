import Foundation
import VMergeCore

/// The output file's life cycle: written to a fresh temporary file beside it (created with
/// O_EXCL|O_NOFOLLOW, written through its descriptor only), published under its name only once
/// complete, without replacing anything unless overwriting was asked for; removed on failure.
final class OutputTarget {
    let path: String
    let temporary: TemporaryFile
    private(set) var committedSize: Int64 = 0

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
        let output = PathIdentity.of(path)
        if case .file = output, inputs.contains(where: { PathIdentity.of($0) == output }) {
            throw VMergeError.outputIsInput(file: path)
        }
        try SafeFile.checkTarget(path, replace: overwrite ? .always : .never)
    }

    /// Where the file was published (the output name, or with `alternative` the next free one).
    private(set) var publishedPath: String

    /// Publishes the finished temporary file under the output name; if that was taken meanwhile
    /// and `alternative` names others (n = 2, 3...), under the first free one of those.
    func commit(overwrite: Bool, alternative: (@Sendable (Int) -> String)? = nil) throws {
        try temporary.sync()
        committedSize = temporary.size
        do {
            try temporary.publish(replace: overwrite ? .always : .never)
        } catch VMergeError.outputExists where alternative != nil {
            for n in 2...1000 {
                guard let candidate = alternative?(n), FileKind.at(candidate) == .missing else { continue }
                do {
                    try temporary.publish(as: SafeFile.split(candidate).name, replace: .never)
                    publishedPath = candidate
                    return
                } catch VMergeError.outputExists {
                    continue
                }
            }
            throw VMergeError.outputExists(file: path)
        }
    }

    func discard() { temporary.discard() }
}

/// --poster's JPEG, written to a fresh temporary file beside its name and published under it
/// (replacing only a regular file, and only with -y); can be taken back while it is still ours.
struct PublishedPoster {
    let path: String
    private let identity: PathIdentity

    init(_ jpeg: [UInt8], at path: String, overwrite: Bool, tag: String?) throws {
        let file = try TemporaryFile(beside: path, tag: tag)
        do {
            try file.write(jpeg)
            try file.sync()
            try file.publish(replace: overwrite ? .always : .never)
        } catch {
            file.discard()
            throw error
        }
        self.path = path
        identity = PathIdentity.of(path)
    }

    /// Removes the poster, if the name still holds the file published here.
    func withdraw() {
        if PathIdentity.of(path) == identity { unlink(path) }
    }
}
