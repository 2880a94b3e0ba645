import Foundation
import TestSupport
import VMergeCore

@testable import VMergeRemote

extension S3TestCase {
    /// The multipart uploads the bucket holds in progress (started, never completed or aborted).
    func uploadsInProgress(_ bucket: String) throws -> Int {
        let client = try S3Client(
            endpoint: S3Endpoint(region: s3.region, custom: s3.endpoint),
            credentials: AWSCredentials(accessKeyID: s3.accessKey, secretAccessKey: s3.secretKey, source: "test"))
        let address = S3Address(bucket: bucket, key: "")
        let answer = try client.send(
            HTTPRequest(.get, client.endpoint.url(address, query: [("uploads", "")]), signing: client.signing),
            about: address)
        return S3XML.parse(answer.body)?.all("Upload").count ?? -1
    }
}
