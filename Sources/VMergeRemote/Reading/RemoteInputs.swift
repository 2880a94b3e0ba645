import Foundation
import VMergeCore

/// A job's inputs that are objects in a bucket or https resources: prefixes expanded into their
/// videos, each object looked up once (size and tag) and read through one cache for the whole job
/// (probe, decode, loudness). From here on an input goes by its shown name (an https URL's query is
/// `?…`), so nothing after this step can print a presigned URL's secret; the real URL stays here.
package final class RemoteInputs: InputSources, @unchecked Sendable {
    private let connector: RemoteConnector
    private let lock = NSLock()
    private var readers: [String: Result<RemoteObjectReader, VMergeError>] = [:]
    private var names: [String] = []

    package init(connector: RemoteConnector) { self.connector = connector }

    /// Whether any input is named by a URL.
    package static func anyRemote(_ inputs: [JobInput]) -> Bool {
        inputs.contains { RemoteName.looksRemote($0.path.escaped) }
    }

    /// The inputs with every remote one resolved: a prefix (`s3://bucket/trip/`) becomes its
    /// videos in name order, as a folder does; each object is looked up (a failure is kept for the
    /// probe to report, so `--skip-invalid` skips it like a bad file). Local names pass as they are.
    package func resolve(_ inputs: [JobInput], access: RemoteAccess = .commandLine) throws -> [JobInput] {
        var resolved: [JobInput] = []
        for input in inputs {
            let text = input.path.escaped
            guard RemoteName.looksRemote(text) else {
                resolved.append(input)
                continue
            }
            guard let name = RemoteName(text) else {
                throw VMergeError.invalidInput(
                    file: RemoteName.shown(text), reason: "not an s3://bucket/key or https:// name vmerge can read")
            }
            if let problem = access.problem(with: name) {
                throw VMergeError.invalidInput(file: name.description, reason: problem)
            }
            if name.isPrefix {
                if input.edit != .whole {
                    throw VMergeError.invalidInput(
                        file: name.description, reason: "is a prefix; a trim or a title applies to one video")
                }
                for object in try videos(under: name) {
                    resolved.append(JobInput(FileName(lookUp(object, access: access))))
                }
            } else {
                resolved.append(JobInput(FileName(lookUp(name, access: access)), edit: input.edit))
            }
        }
        return resolved
    }

    /// The videos under a prefix (not its sub-prefixes' "folders" markers), in natural name order.
    private func videos(under prefix: RemoteName) throws -> [RemoteName] {
        guard case let .s3(address) = prefix else { return [prefix] }
        let listed: [S3Object]
        do { listed = try connector.s3Client().list(address, folderOnly: true) } catch let failure as CredentialFailure
        {
            throw VMergeError.invalidInput(file: prefix.description, reason: failure.message)
        } catch let failure as S3Failure {
            throw failure.isTransient
                ? VMergeError.io(file: prefix.description, message: failure.message)
                : VMergeError.invalidInput(file: prefix.description, reason: failure.message)
        }
        let videos = listed.filter { object in
            let last = object.address.key.split(separator: "/").last.map(String.init) ?? ""
            // A key ending in "/" is a folder marker, not a video, whatever its name says.
            return !object.address.key.hasSuffix("/") && !last.hasPrefix(".")
                && InputList.videoExtensions.contains(FileName(last).pathExtension.lowercased())
        }
        if let bad = videos.first(where: { S3Address($0.address.description) == nil }) {
            throw VMergeError.invalidInput(
                file: prefix.description,
                reason: "holds \(VisibleText.of(bad.address.key)), whose name has a control character; rename it")
        }
        guard !videos.isEmpty else {
            throw VMergeError.invalidInput(
                file: prefix.description, reason: "prefix has no video files (.mov, .mp4, .m4v, .3gp)")
        }
        return InputList.naturallySorted(videos) { $0.address.key }.map { .s3($0.address) }
    }

    /// Looks the object up once and returns the name it goes by from now on.
    private func lookUp(_ name: RemoteName, access: RemoteAccess) -> String {
        let shown = name.description
        lock.withLock {
            guard readers[shown] == nil else { return }
            names.append(shown)
            do {
                readers[shown] = .success(try RemoteObjectReader(connector.fetcher(for: name, access: access)))
            } catch let failure as RemoteReadFailure {
                // Refused keys or no credentials are the run's, not the clip's: --skip-invalid
                // must not merge the rest without it.
                let runs = failure.isTransient || failure.credentials
                readers[shown] = .failure(runs ? .io(file: shown, message: failure.reason) : failure.asVMergeError)
            } catch {
                readers[shown] = .failure(.io(file: shown, message: "\(error)"))
            }
        }
        return shown
    }

    package func source(named name: String) throws -> (any RandomAccessSource)? {
        guard let found = lock.withLock({ readers[name] }) else { return nil }
        return try found.get()
    }

    package func keyState(named name: String) -> String? {
        guard let found = lock.withLock({ readers[name] }) else { return nil }
        guard case let .success(reader) = found else { return "-1\tunreadable" }
        return "\(reader.size)\t\(reader.object.tag ?? "")"
    }

    /// The version of the object `name` the job read (see `ObjectVersion`): nil for an https
    /// resource, or one that could not be read.
    package func version(named name: String) -> ObjectVersion? {
        guard case let .success(reader)? = lock.withLock({ readers[name] }), reader.fetcher is S3Fetcher else {
            return nil
        }
        return ObjectVersion(tag: reader.object.tag ?? "", size: reader.size)
    }

    /// What was fetched of each object, in the order the job named them: the report's "fetched".
    package var fetched: [(name: String, size: Int64, bytes: Int64, requests: Int)] {
        lock.withLock {
            names.compactMap { name in
                guard case let .success(reader)? = readers[name] else { return nil }
                let fetched = reader.fetched
                return (name, reader.size, fetched.bytes, fetched.requests)
            }
        }
    }
}
