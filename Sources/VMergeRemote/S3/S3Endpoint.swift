import Foundation
import VMergeCore

/// Where a bucket's requests go and how they are signed: AWS's own endpoints (virtual-hosted
/// addressing, `bucket.s3.REGION.amazonaws.com`), or the one an operator names for MinIO, Ceph, R2
/// and the like (`AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, or the profile's `endpoint_url`), which
/// are addressed path-style (`endpoint/bucket/key`), as the AWS tools do with a custom endpoint.
struct S3Endpoint: Sendable {
    var region: String
    /// The operator's endpoint, or nil for AWS's.
    var custom: URL?

    /// Requests to a custom endpoint may be plain http (an operator's choice); AWS's never are.
    var allowsPlainHTTP: Bool { custom?.scheme?.lowercased() == "http" }

    /// The URL of a request for `address` with a query already in canonical form (names sorted,
    /// values percent-encoded, each with "="): libcurl 7.88's SigV4 signs the query as it is given.
    func url(_ address: S3Address, query: [(String, String)] = []) -> URL {
        let queryText = S3Endpoint.canonicalQuery(query)
        let suffix = queryText.isEmpty ? "" : "?" + queryText
        let path = "/" + address.encodedKey
        if let custom {
            let base =
                custom.absoluteString.hasSuffix("/") ? String(custom.absoluteString.dropLast()) : custom.absoluteString
            return URL(string: base + "/" + address.bucket + path + suffix)!
        }
        // A bucket with dots cannot be a host name under AWS's wildcard certificate.
        if address.bucket.contains(".") {
            return URL(string: "https://s3.\(region).amazonaws.com/\(address.bucket)\(path)\(suffix)")!
        }
        return URL(string: "https://\(address.bucket).s3.\(region).amazonaws.com\(path)\(suffix)")!
    }

    static func canonicalQuery(_ query: [(String, String)]) -> String {
        let encoded: [(name: String, value: String)] = query.map { (S3Address.encode($0.0), S3Address.encode($0.1)) }
        let sorted = encoded.sorted { $0.name == $1.name ? $0.value < $1.value : $0.name < $1.name }
        return sorted.map { $0.name + "=" + $0.value }.joined(separator: "&")
    }
}
