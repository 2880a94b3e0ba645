import Foundation
import VMergeCore

/// A job's output in a bucket (`-o s3://bucket/trip.mp4`). Faststart needs a file to move the index
/// to the front of, so the set (video, renditions, poster) is written and published in a private
/// staging folder first, as on disk; then uploaded in vmerge's order, the renditions and the poster
/// before the video, the video last and under a condition: `If-None-Match: *` (never over an
/// object), or `If-Match` the object looked at before the job (never over a newer one) with `-y` or
/// when it records this very job (a run that stopped before its video, or a job that names a
/// rendition its object lacks). "Written" is said only after a HEAD shows each video's size. A
/// failure leaves no new object: what was uploaded for a video that then failed is taken back.
package final class RemoteOutput: @unchecked Sendable {
    package let address: S3Address
    /// The private folder the set is staged in (removed with this object).
    package let staging: String
    private let client: S3Client
    /// Says which signal stopped the run, when a transfer was stopped.
    private let stopSignal: @Sendable () -> Int32
    /// What the name held when it was looked at (nil: nothing).
    private var seen: S3Object?
    private var looked = false
    /// What each companion's name held when the job began (`checkReplace`): with -y only that
    /// object is replaced, never one put there since.
    private var companionsSeen: [S3Address: S3Object?] = [:]

    package static let jobKeyField = "vmerge-job-key"
    /// Recorded by a job that may delete its sources: the names it was made from (see
    /// `recordedJob(at:connector:)`).
    package static let jobNamesField = "vmerge-job-names"

    package init(_ address: S3Address, connector: RemoteConnector) throws {
        guard OutputContainer.problem(withName: address.key) == nil else {
            throw VMergeError.badOutputName(
                file: address.description, reason: OutputContainer.problem(withName: address.key) ?? "")
        }
        do { client = try connector.s3Client() } catch {
            throw VMergeError.io(file: address.description, message: "\(error)")
        }
        self.address = address
        stopSignal = connector.stopSignal
        RemoteOutput.sweepStaging()
        var template = Array((NSTemporaryDirectory() + "/\(RemoteOutput.stagingPrefix)\(getpid()).XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw VMergeError.io(
                file: address.description, message: "cannot make a staging folder: \(String(cString: strerror(errno)))")
        }
        staging = String(cString: made)
    }

    /// Staging folders are named `vmerge-upload.<pid>.XXXXXX`: one whose process is gone was left
    /// by a run killed before it could remove it (SIGKILL, a power cut), and holds a finished
    /// video nobody will upload. The next run to a bucket on this machine removes it.
    static let stagingPrefix = "vmerge-upload."

    static func sweepStaging() {
        let folder = NSTemporaryDirectory()
        let parent = FileDescriptor(POSIX.open(FileName(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard parent.raw >= 0, let names = SafeFile.names(in: parent) else { return }
        for name in names where name.hasPrefix(stagingPrefix) {
            let fields = name.dropFirst(stagingPrefix.count).split(separator: ".")
            guard fields.count == 2, let pid = Int32(fields[0]), pid > 0, pid != getpid() else { continue }
            // Only a process that is certainly gone (not one of another user's, EPERM).
            if kill(pid, 0) == -1 && errno == ESRCH { SafeFile.removeTree(name, in: parent) }
        }
    }

    deinit {
        // Only what this job staged is in the folder (made by mkdtemp, mode 0700).
        let (parent, name) = SafeFile.split(staging)
        let folder = FileDescriptor(POSIX.open(FileName(parent), O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        if folder.raw >= 0 { SafeFile.removeTree(name, in: folder) }
    }

    /// The job key the object under the name records, nil when there is none (or no object).
    package func recordedKey() throws -> String? {
        try look()?.metadata[RemoteOutput.jobKeyField]
    }

    /// What the object under `address` records of the job that uploaded it; nil when there is no
    /// object or it cannot be looked at (the job's own steps then say why).
    package static func recordedJob(at address: S3Address, connector: RemoteConnector) -> (
        key: String?, names: String?
    )? {
        guard let client = try? connector.s3Client(), let object = try? client.head(address) else { return nil }
        return (object.metadata[jobKeyField], object.metadata[jobNamesField])
    }

    /// Where the set's file `name` (its last component) is staged.
    package func staged(_ name: String) -> String { staging + "/" + SafeFile.split(name).name }

    /// Refuses, before any work, an existing object under the video's name or a companion's
    /// unless `overwrite` or it records the key it would record (this very job's: `jobKey` for the
    /// video); remembers what each held, for the upload.
    package func checkReplace(overwrite: Bool, jobKey: String? = nil, companions: [Companion] = []) throws {
        for companion in companions {
            let found: S3Object?
            do { found = try client.lookUp(companion.address) } catch let failure {
                throw VMergeError.io(file: companion.address.description, message: failure.message)
            }
            companionsSeen[companion.address] = .some(found)
            if let found, !overwrite, companion.key == nil || found.metadata[RemoteOutput.jobKeyField] != companion.key
            {
                throw VMergeError.outputExists(file: companion.address.description)
            }
        }
        guard let seen = try look(), !overwrite else { return }
        if jobKey == nil || seen.metadata[RemoteOutput.jobKeyField] != jobKey {
            throw VMergeError.outputExists(file: address.description)
        }
    }

    /// A staged file uploaded beside the video: a rendition (a video, checked like it) or the poster.
    package struct Companion {
        package var staged: String
        package var address: S3Address
        /// The key its object records: a rendition's own, the poster the job's.
        package var key: String?
        package var isVideo: Bool
        package init(staged: String, address: S3Address, key: String?, isVideo: Bool) {
            self.staged = staged
            self.address = address
            self.key = key
            self.isVideo = isVideo
        }
    }

    private func look() throws -> S3Object? {
        if looked { return seen }
        do {
            seen = try client.lookUp(address)
        } catch let failure {
            throw VMergeError.io(file: address.description, message: failure.message)
        }
        looked = true
        return seen
    }

    /// Uploads the staged set: `companions` first, then the video, each video verified. Returns
    /// the video's size as S3 holds it.
    /// `jobNames`, given by a job that may delete its sources, keeps a later run from making the
    /// object again from what is left of them.
    /// `ownVideo`: whether an object recording `jobKey` is this job's to replace (a job that checks
    /// whether it is done found it without a rendition; a plain merge replaces nothing without -y).
    package func publish(
        video: String, companions: [Companion], jobKey: String?, jobNames: String? = nil, overwrite: Bool,
        ownVideo: Bool = false
    ) throws -> Int64 {
        var uploaded: [(S3Address, String)] = []
        do {
            var metadata: [String: String] = [:]
            if let jobNames { metadata[RemoteOutput.jobNamesField] = jobNames }
            for companion in companions {
                // What the name held when the job began (else now): with -y only that object is
                // replaced. One that records this very file's key (a run killed before its video
                // left it, or the video was found without another rendition) is this file, made
                // from the same inputs with the same settings: left as it is, not uploaded again,
                // so a failure now cannot take it away.
                let seen = companionsSeen[companion.address] ?? (try? client.head(companion.address))
                if companion.key != nil, let seen, seen.metadata[RemoteOutput.jobKeyField] == companion.key {
                    continue
                }
                let condition: WriteCondition =
                    if let seen, overwrite { .unchanged(etag: seen.etag) } else { .absent }
                var fields = metadata
                fields[RemoteOutput.jobKeyField] = companion.key
                let etag = try upload(companion.staged, to: companion.address, condition: condition, metadata: fields)
                uploaded.append((companion.address, etag))
                if companion.isVideo { try verify(companion.address, holds: companion.staged) }
            }
            CrashPoint.here("after-companions")
            let ours = ownVideo && jobKey != nil && seen?.metadata[RemoteOutput.jobKeyField] == jobKey
            let condition: WriteCondition =
                if let seen, overwrite || ours { .unchanged(etag: seen.etag) } else { .absent }
            metadata[RemoteOutput.jobKeyField] = jobKey
            _ = try upload(video, to: address, condition: condition, metadata: metadata)
            return try verify(address, holds: video)
        } catch {
            // Taken back even when the run was stopped (a stopped client would send nothing).
            let cleanup = client.withoutStopping()
            var left: [String] = []
            for (companion, etag) in uploaded.reversed() {
                do { try cleanup.delete(companion, ifMatch: etag) } catch { left.append(companion.description) }
            }
            let ended = ending(by: error, overwrite: overwrite)
            // What could not be taken back is said, never left in silence (the next run of the job
            // takes it as its own: it records the job's key).
            let file: String
            switch ended as? VMergeError {
            case let .io(named, _)?, let .outputExists(named)?: file = named
            default: throw ended
            }
            guard !left.isEmpty else { throw ended }
            throw VMergeError.io(
                file: file,
                message: VMergeError.reason(of: ended) + "; uploaded for it and not taken back: "
                    + left.joined(separator: ", "))
        }
    }

    /// What a failed upload of the set is, said of the object it concerns.
    private func ending(by error: any Error, overwrite: Bool) -> any Error {
        guard let failure = error as? S3Failure else { return error }
        switch failure.kind {
        case .cancelled where stopSignal() != 0: return VMergeError.cancelled(signal: stopSignal())
        case .exists where overwrite:
            return VMergeError.io(
                file: failure.address.description,
                message: "an object was put under this name while the job ran; not replaced")
        case .exists: return VMergeError.outputExists(file: failure.address.description)
        default: return VMergeError.io(file: failure.address.description, message: failure.message)
        }
    }

    /// The object's size as a HEAD shows it, which must be the staged file's; returned.
    @discardableResult
    private func verify(_ target: S3Address, holds staged: String) throws -> Int64 {
        let held = try client.head(target)
        var info = stat()
        let size = POSIX.stat(FileName(staged), &info) == 0 ? Int64(info.st_size) : -1
        guard held.size == size else {
            throw S3Failure(target, .other, "the uploaded object holds \(held.size) bytes, not the \(size) written")
        }
        return held.size
    }

    private func upload(_ staged: String, to target: S3Address, condition: WriteCondition, metadata: [String: String])
        throws -> String
    {
        let file = FileDescriptor(POSIX.open(FileName(staged), O_RDONLY | O_CLOEXEC | O_NOFOLLOW))
        guard file.raw >= 0, let info = file.info else {
            throw VMergeError.io(
                file: target.description, message: "the staged file cannot be read: \(SafeFile.errorText())")
        }
        let descriptor = file.raw
        let type =
            target.key.lowercased().hasSuffix(".jpg")
            ? "image/jpeg" : target.key.lowercased().hasSuffix(".json") ? "application/json" : "video/mp4"
        return try withExtendedLifetime(file) {
            try client.upload(
                descriptor, length: Int64(info.st_size), to: target, condition: condition, metadata: metadata,
                contentType: type)
        }
    }
}
