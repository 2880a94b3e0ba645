import Foundation
import VMergeCore

/// A job's output in a bucket (`-o s3://bucket/trip.mp4`). Faststart needs a file to move the index
/// to the front of, so the set (video, poster) is written and published in a private staging
/// folder first, as on disk; then uploaded in vmerge's order, the poster before the video, the
/// video last and under a condition: `If-None-Match: *` (never over an object), or with `-y`
/// `If-Match` the object looked at before the job (never over a newer one). "Written" is said only
/// after a HEAD shows the object's size. A failure leaves no new object: the poster uploaded for a
/// video that then failed is taken back.
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

    /// Refuses an existing object unless `overwrite`, before any work.
    package func checkReplace(overwrite: Bool) throws {
        if try look() != nil && !overwrite { throw VMergeError.outputExists(file: address.description) }
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

    /// Uploads the staged set: `companions` (staged name, where it goes) first, then the video,
    /// each verified. Returns the video's size as S3 holds it.
    /// `jobNames`, given by a job that may delete its sources, keeps a later run from making the
    /// object again from what is left of them.
    package func publish(
        video: String, companions: [(staged: String, to: S3Address)], jobKey: String?, jobNames: String? = nil,
        overwrite: Bool
    ) throws -> Int64 {
        var uploaded: [(S3Address, String)] = []
        do {
            var metadata = jobKey.map { [RemoteOutput.jobKeyField: $0] } ?? [:]
            if let jobNames { metadata[RemoteOutput.jobNamesField] = jobNames }
            for companion in companions {
                // A poster this very job left (its run killed before the video went up) is its
                // own to replace, as on disk; with -y, only the object seen; else none.
                let seen = try? client.head(companion.to)
                let condition: WriteCondition =
                    if let seen, overwrite || (jobKey != nil && seen.metadata[RemoteOutput.jobKeyField] == jobKey) {
                        .unchanged(etag: seen.etag)
                    } else { .absent }
                let etag = try upload(companion.staged, to: companion.to, condition: condition, metadata: metadata)
                uploaded.append((companion.to, etag))
            }
            CrashPoint.here("after-companions")
            let condition: WriteCondition =
                if let seen, overwrite { .unchanged(etag: seen.etag) } else { .absent }
            _ = try upload(video, to: address, condition: condition, metadata: metadata)
            let held = try client.head(address)
            var info = stat()
            let size = POSIX.stat(FileName(video), &info) == 0 ? Int64(info.st_size) : -1
            guard held.size == size else {
                throw S3Failure(
                    address, .other, "the uploaded object holds \(held.size) bytes, not the \(size) written")
            }
            return held.size
        } catch {
            // Taken back even when the run was stopped (a stopped client would send nothing).
            let cleanup = client.withoutStopping()
            for (companion, etag) in uploaded.reversed() { try? cleanup.delete(companion, ifMatch: etag) }
            if let failure = error as? S3Failure {
                switch failure.kind {
                case .cancelled where stopSignal() != 0: throw VMergeError.cancelled(signal: stopSignal())
                case .exists where overwrite:
                    throw VMergeError.io(
                        file: failure.address.description,
                        message: "an object was put under this name while the job ran; not replaced")
                case .exists: throw VMergeError.outputExists(file: failure.address.description)
                default: throw VMergeError.io(file: failure.address.description, message: failure.message)
                }
            }
            throw error
        }
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
