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

    /// Publishes the finished temporary file under the output name.
    func commit(overwrite: Bool) throws {
        try temporary.sync()
        committedSize = temporary.size
        try temporary.publish(replace: overwrite ? .always : .never)
    }

    func discard() { temporary.discard() }
}
