import Foundation
import VMergeCore

/// A report named where it would take the place of the output, an input or the poster: a usage
/// error, found before any work.
package struct ReportClash: Error, CustomStringConvertible {
    /// The report's path, and what it would take the place of.
    package let file: String
    package let reason: String
    package var description: String { "\(file): \(reason)" }
}

/// A JSON report (a merge's --report, the API's report URL, a batch's --report), one owner for
/// its whole life and one temporary file: its name checked and its temporary made before any
/// work (so a report that cannot be written is known before an hour of encoding); then either
/// published with the video as one set (`join`) and, once the sources are deleted, written again
/// to name them (`rewrite`), or published on its own (`publish`), or dropped (`discard`).
///
/// Never onto the output, an input or a job list; over an existing file only if it is an earlier
/// vmerge report (or with -y), and never over a link, FIFO or device.
package final class ReportFile: @unchecked Sendable {
    package let path: String
    /// What it may replace.
    let replace: ReplacePolicy
    /// Its folder, opened once: every write of it goes there, whatever the name leads to later.
    private let folder: OutputFolder
    /// Its one temporary; made again only when the set it joined failed to publish (the set
    /// took it away) and the run's report must still be written.
    private var temporary: TemporaryFile
    /// Published with the video, as a member of its set.
    private(set) var joined = false

    /// Refuses (a usage error, `ReportClash`) a report that would take the place of one of
    /// `others` (each with what it is: "the output video"), then checks its name as a target and
    /// makes its temporary file.
    package init(_ path: String, against others: [(path: FileName, role: String)], overwrite: Bool) throws {
        let identity = PathIdentity.of(FileName(path))
        if let clash = others.first(where: { PathIdentity.of($0.path) == identity }) {
            throw ReportClash(file: path, reason: "the report would overwrite \(clash.role)")
        }
        self.path = path
        replace = overwrite ? .always : .ifStartsWith(RunReport.signatures)
        do {
            try SafeFile.checkTarget(path, replace: replace)
            // A run killed with -9 left its report's temporary behind.
            let (folderPath, name) = SafeFile.split(path)
            TemporaryFile.sweep(folder: folderPath, target: name)
            folder = try OutputFolder(of: path)
            temporary = try folder.temporaryFile(for: path)
        } catch let error as VMergeError {
            throw VMergeError.io(file: path, message: "cannot write the report: \(error.reason)")
        }
    }

    /// Writes the report into its temporary and makes it a member of the video's set: published
    /// with it, before it (a run leaves the old pair or the new one).
    func join(_ encoded: EncodedOutput, _ json: JSON) throws {
        try fill(json)
        try temporary.sync()
        encoded.add(temporary, replace: replace)
        joined = true
    }

    /// Writes the published report again (to name the sources deleted or kept after the set was
    /// published), in its folder, over nothing but a vmerge report.
    func rewrite(_ json: JSON) throws {
        do {
            try SafeFile.write(
                json.text(pretty: true) + "\n", to: path, replace: .ifStartsWith(RunReport.signatures),
                in: folder.descriptor)
        } catch {
            throw VMergeError.io(file: path, message: "cannot write the report: \(VMergeError.reason(of: error))")
        }
    }

    /// Publishes the report on its own: a run that published no video (it failed, found its
    /// output done, or was a dry run), or a batch's.
    package func publish(_ json: JSON) throws {
        do {
            if joined {
                temporary = try folder.temporaryFile(for: path)
                joined = false
            }
            try fill(json)
            try temporary.publish(replace: replace)
        } catch let error as VMergeError {
            throw VMergeError.io(file: path, message: "cannot write the report: \(error.reason)")
        }
    }

    /// Removes the temporary, unless it was published.
    package func discard() { temporary.discard() }

    private func fill(_ json: JSON) throws {
        try temporary.write(Array((json.text(pretty: true) + "\n").utf8))
    }
}
