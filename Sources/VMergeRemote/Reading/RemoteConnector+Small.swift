import Foundation
import VMergeCore

extension RemoteConnector {
    /// The whole of a small object (a poster the dashboard shows): nil when it is not there, is
    /// larger than `limit`, or cannot be read. One HEAD and one ranged GET pinned to its ETag.
    package func smallObject(at address: S3Address, limit: Int) -> Data? {
        guard !address.isPrefix, let client = try? s3Client(), let object = try? client.head(address),
            object.size > 0, object.size <= Int64(limit)
        else { return nil }
        var data = Data()
        let read: Void? = try? client.read(address, range: 0..<object.size, ifMatch: object.etag) { bytes in
            data.append(contentsOf: bytes)
            return data.count <= limit
        }
        return read != nil && data.count == Int(object.size) ? data : nil
    }
}
