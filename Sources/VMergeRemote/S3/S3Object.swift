import Foundation
import VMergeCore

/// What S3 says of one object: its size, and the tags that tell whether it is still the same one.
struct S3Object: Sendable, Equatable {
    var address: S3Address
    var size: Int64
    /// The entity tag, quotes included, as sent back in If-Match.
    var etag: String
    var versionID: String?
    /// The SHA-256 S3 holds for it (base64), when it was stored with one.
    var checksumSHA256: String?
    /// Its user metadata (`x-amz-meta-NAME`), by NAME in lower case.
    var metadata: [String: String] = [:]
}
