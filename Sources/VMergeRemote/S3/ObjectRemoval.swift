import Foundation
import VMergeCore

/// The version of an object a job read: its ETag and size as the HEAD before the first byte
/// showed them. Every byte the job read came from this version (each ranged GET is pinned to it),
/// so it is what an output made from the object holds.
package struct ObjectVersion: Sendable, Hashable {
    package let tag: String
    package let size: Int64

    package init(tag: String, size: Int64) {
        self.tag = tag
        self.size = size
    }
}

/// --delete-sources of an object: deleted only while it is still the very version merged. A HEAD
/// just before shows its tag and size, and the DELETE carries that tag as `If-Match`, so a store
/// that honours the condition (S3 does) refuses to delete a newer object put there since; one that
/// ignores it leaves only the moment between the two requests. An https resource is never deleted.
/// The one rule for every door: a merge or worker deletes right after its job, a batch once every
/// job that names the object has consumed that same version.
extension RemoteConnector {
    /// Deletes the object `name` if it is still `version`; nil when deleted, else why not
    /// ("not deleted: ...").
    package func deleteObject(named name: String, version: ObjectVersion?) -> String? {
        guard case let .s3(address)? = RemoteName(name) else {
            return "not deleted: vmerge deletes objects in a bucket, not https resources"
        }
        guard let version else { return "not deleted: it was never read as one object" }
        guard !version.tag.isEmpty else {
            return "not deleted: the store gave it no ETag, so it cannot be told from an object put there since"
        }
        do {
            let client = try s3Client()
            let now = try client.head(address)
            guard now.etag == version.tag, now.size == version.size else {
                return "not deleted: it is not the object that was merged (replaced since)"
            }
            do {
                try client.delete(address, ifMatch: version.tag)
            } catch let failure {
                // It was there, the version merged, a moment ago: gone now is this DELETE's own
                // doing whose answer was lost (its retry finds nothing), or the same end.
                guard failure.kind == .noSuchObject else { throw failure }
            }
            return nil
        } catch let error as S3Failure {
            switch error.kind {
            case .noSuchObject: return "not deleted: already gone"
            case .preconditionFailed: return "not deleted: it is not the object that was merged (replaced since)"
            default: return "not deleted: \(error.message)"
            }
        } catch let error as CredentialFailure {
            return "not deleted: \(error.message)"
        } catch {
            return "not deleted: \(error)"
        }
    }
}
