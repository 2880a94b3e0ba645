import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// A report named where it would take the place of the output, an input or the poster: a usage
/// error, found before any work.
package struct ReportClash: Error, CustomStringConvertible {
    /// The report's path, and what it would take the place of.
    package let file: String
    package let reason: String
    package var description: String { "\(file): \(reason)" }
}

/// A JSON report (a merge's --report, the API's report URL, a batch's --report), one owner for
/// its whole life: its name checked (and on disk its one temporary file made) before any work, so
/// a report that cannot be written is known before an hour of encoding; then either published
/// with the video as one set (`join`) and, once the sources are deleted, written again to name
/// them (`rewrite`), or published on its own (`publish`), or dropped (`discard`).
///
/// On disk: never onto the output, an input or a job list; over an existing file only if it is an
/// earlier vmerge report (or with -y), and never over a link, FIFO or device. In a bucket
/// (`s3://bucket/key.json`): the same rule over objects (`RemoteReport`); beside a video in a
/// bucket it is uploaded before the video, and beside a local one after the run.
package final class ReportFile: @unchecked Sendable {
    /// As it was named: a path, or an `s3://` name.
    package let path: String
    private var place: Place
    /// Published with the video, as a member of its set.
    private(set) var joined = false
    /// A bucket's report joined to a video bound for a bucket: uploaded just before the video.
    private var pending: String?

    private enum Place {
        /// Its folder, opened once: every write of it goes there, whatever the name leads to
        /// later; and its one temporary, made again only when the set it joined failed to
        /// publish (the set took it away) and the run's report must still be written.
        case disk(folder: OutputFolder, temporary: TemporaryFile, replace: ReplacePolicy)
        case bucket(RemoteReport)
    }

    /// Refuses (a usage error, `ReportClash`) a report that would take the place of one of
    /// `others` (each with what it is: "the output video"), then checks its name as a target and
    /// makes its temporary file. An `s3://` name is reached through `connector`, when `access`
    /// allows it (nil: a name the operator typed, reached as the command line's run would).
    package init(
        _ path: String, against others: [(path: FileName, role: String)], overwrite: Bool,
        remote: (connector: RemoteConnector, access: RemoteAccess)? = nil
    ) throws {
        self.path = path
        if let clash = others.first(where: { ReportFile.same(path, $0.path) }) {
            throw ReportClash(
                file: RemoteName.printable(path),
                reason: "the report would overwrite \(clash.role)")
        }
        if RemoteName.looksRemote(path) {
            let remote = remote ?? (JobRunner.connector(for: MergeContext()), .commandLine)
            guard case let .s3(address)? = RemoteName(path) else {
                throw VMergeError.io(
                    file: RemoteName.shown(path),
                    message: "cannot write the report: a report goes to s3://bucket/key.json or a local file")
            }
            if let problem = remote.access.problem(with: .s3(address)) {
                throw VMergeError.io(file: address.description, message: "cannot write the report: \(problem)")
            }
            place = .bucket(try RemoteReport(address, connector: remote.connector, overwrite: overwrite))
            return
        }
        let replace: ReplacePolicy = overwrite ? .always : .ifStartsWith(RunReport.signatures)
        do {
            try SafeFile.checkTarget(path, replace: replace)
            // A run killed with -9 left its report's temporary behind.
            let (folderPath, name) = SafeFile.split(path)
            TemporaryFile.sweep(folder: folderPath, target: name)
            let folder = try OutputFolder(of: path)
            place = .disk(folder: folder, temporary: try folder.temporaryFile(for: path), replace: replace)
        } catch let error as VMergeError {
            throw VMergeError.io(file: path, message: "cannot write the report: \(error.reason)")
        }
    }

    /// Whether the report is named `other` (a file that is the same file, or the same object).
    package func lands(on other: FileName) -> Bool { ReportFile.same(path, other) }

    /// In a bucket: nothing to sweep or compare on this machine's disk.
    package var isRemote: Bool { if case .bucket = place { true } else { false } }

    private static func same(_ path: String, _ other: FileName) -> Bool {
        if RemoteName.looksRemote(path) || RemoteName.looksRemote(other.escaped) {
            guard let name = RemoteName(path), let otherName = RemoteName(other.escaped) else { return false }
            return name == otherName
        }
        return PathIdentity.of(FileName(path)) == PathIdentity.of(other)
    }

    /// Writes the report into its temporary and makes it a member of the video's set: published
    /// with it, before it (a run leaves the old pair or the new one). A bucket's report joins a
    /// video bound for a bucket (`uploadJoined`); beside a local video it is written after the run.
    func join(_ encoded: EncodedOutput, _ json: JSON, outputIsRemote: Bool) throws {
        switch place {
        case let .disk(_, temporary, replace):
            try temporary.write(ReportFile.bytes(json))
            try temporary.sync()
            encoded.add(temporary, replace: replace)
            joined = true
        case .bucket:
            guard outputIsRemote else { return }
            pending = json.text(pretty: true) + "\n"
        }
    }

    /// Uploads a bucket's report that joined a video bound for a bucket: the step before the
    /// video's upload.
    func uploadJoined() throws {
        guard case let .bucket(remote) = place, let pending else { return }
        try remote.write(pending)
        joined = true
    }

    /// Writes the published report again (to name the sources deleted or kept after the set was
    /// published), in its folder, over nothing but a vmerge report (or what this run wrote).
    func rewrite(_ json: JSON) throws {
        switch place {
        case let .disk(folder, _, _):
            do {
                try SafeFile.write(
                    json.text(pretty: true) + "\n", to: path, replace: .ifStartsWith(RunReport.signatures),
                    in: folder.descriptor)
            } catch {
                throw VMergeError.io(file: path, message: "cannot write the report: \(VMergeError.reason(of: error))")
            }
        case let .bucket(remote): try remote.write(json.text(pretty: true) + "\n")
        }
    }

    /// Publishes the report on its own: a run that published no video (it failed, found its
    /// output done, or was a dry run), or a batch's.
    package func publish(_ json: JSON) throws {
        switch place {
        case let .disk(folder, temporary, replace):
            do {
                var temporary = temporary
                if joined {
                    temporary = try folder.temporaryFile(for: path)
                    place = .disk(folder: folder, temporary: temporary, replace: replace)
                    joined = false
                }
                try temporary.write(ReportFile.bytes(json))
                try temporary.publish(replace: replace)
            } catch let error as VMergeError {
                throw VMergeError.io(file: path, message: "cannot write the report: \(error.reason)")
            }
        case let .bucket(remote): try remote.write(json.text(pretty: true) + "\n")
        }
    }

    /// Removes the temporary, unless it was published.
    package func discard() {
        if case let .disk(_, temporary, _) = place { temporary.discard() }
    }

    private static func bytes(_ json: JSON) -> [UInt8] { Array((json.text(pretty: true) + "\n").utf8) }
}
