import Foundation
import VMergeCore

/// What one remote object is when first seen: enough to read it by ranges and to tell later whether
/// it is still the same one.
struct RemoteObjectInfo: Sendable, Equatable {
    var size: Int64
    /// The ETag (or, for an https server that sends none, its Last-Modified date).
    var tag: String?
    var tagIsDate = false
}

/// Fetches byte ranges of one remote object, refusing (`RemoteReadFailure.changed`) when the object
/// is no longer the one first seen: the request carries the tag as a condition, so a change between
/// two ranges can never splice two versions into one file.
protocol RemoteFetcher: Sendable {
    var name: RemoteName { get }
    func info() throws -> RemoteObjectInfo
    /// Bytes `range`, to `receive` as they come. Throws after the bytes received so far were handed
    /// over, so the caller can go on from where it got to.
    func fetch(_ range: Range<Int64>, of object: RemoteObjectInfo, receive: @escaping (UnsafeRawBufferPointer) -> Bool)
        throws
}

/// Why a remote read failed, as it is said (`vmerge: s3://b/k: <reason>`), and whether another try
/// from where it stopped may help.
struct RemoteReadFailure: Error, Sendable, CustomStringConvertible {
    var name: RemoteName
    var reason: String
    var isTransient: Bool
    var changed = false
    /// The credentials were refused or missing: the run's problem, not the clip's.
    var credentials = false

    var description: String { "\(name): \(reason)" }

    var asVMergeError: VMergeError { .invalidInput(file: name.description, reason: reason) }
}

/// An object in a bucket, read with S3's ranged GETs.
struct S3Fetcher: RemoteFetcher, @unchecked Sendable {
    let address: S3Address
    let client: S3Client
    var name: RemoteName { .s3(address) }

    func info() throws -> RemoteObjectInfo {
        do {
            let object = try head()
            return RemoteObjectInfo(size: object.size, tag: object.etag.isEmpty ? nil : object.etag)
        } catch {
            var failure = RemoteReadFailure(name: name, reason: error.message, isTransient: error.isTransient)
            failure.credentials = [.secretRefused, .unknownAccessKey, .noSuchBucket].contains(error.kind)
            throw failure
        }
    }

    /// The object's HEAD. Its 404 has no body, so a missing bucket reads like a missing key: one
    /// byte asked for with GET then carries S3's error code (NoSuchBucket or NoSuchKey).
    private func head() throws(S3Failure) -> S3Object {
        do { return try client.head(address) } catch {
            guard error.kind == .noSuchObject else { throw error }
            try client.read(address, range: 0..<1, ifMatch: nil) { _ in true }
            throw error
        }
    }

    func fetch(_ range: Range<Int64>, of object: RemoteObjectInfo, receive: @escaping (UnsafeRawBufferPointer) -> Bool)
        throws
    {
        do {
            try client.read(address, range: range, ifMatch: object.tag, receive: receive)
        } catch  where error.kind == .preconditionFailed {
            throw RemoteReadFailure(
                name: name, reason: "changed while it was read (its ETag is no longer \(object.tag ?? "the same"))",
                isTransient: false, changed: true)
        } catch {
            throw RemoteReadFailure(name: name, reason: error.message, isTransient: error.isTransient)
        }
    }
}

/// An https resource, read with ranged GETs (If-Match its ETag, or If-Unmodified-Since its date).
struct HTTPSFetcher: RemoteFetcher, @unchecked Sendable {
    let url: URL
    let client: HTTPClient
    var name: RemoteName { .https(url) }

    func info() throws -> RemoteObjectInfo {
        let response: HTTPResponse
        do { response = try client.send(HTTPRequest(.head, url)) } catch {
            throw RemoteReadFailure(name: name, reason: error.message, isTransient: error.isTransient)
        }
        guard response.isSuccess else { throw failure(response.status) }
        guard let size = response.headers["Content-Length"].flatMap(Int64.init) else {
            throw RemoteReadFailure(name: name, reason: "the server did not say its size", isTransient: false)
        }
        if let etag = response.headers["ETag"], !etag.hasPrefix("W/") { return RemoteObjectInfo(size: size, tag: etag) }
        guard let date = response.headers["Last-Modified"] else {
            // Nothing to tell one version from the next: two could be spliced into one clip.
            throw RemoteReadFailure(
                name: name,
                reason:
                    "the server gives neither an ETag nor a Last-Modified date, so a change while it is read could not be told; not read",
                isTransient: false)
        }
        return RemoteObjectInfo(size: size, tag: date, tagIsDate: true)
    }

    func fetch(_ range: Range<Int64>, of object: RemoteObjectInfo, receive: @escaping (UnsafeRawBufferPointer) -> Bool)
        throws
    {
        var headers = [("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")]
        if let tag = object.tag { headers.append((object.tagIsDate ? "If-Unmodified-Since" : "If-Match", tag)) }
        // Checked again here, before a byte is taken: a server that ignores the condition must not
        // hand over another version (its validator or its whole size differs).
        let accept: (HTTPHeaders) -> String? = { headers in
            let validator = object.tagIsDate ? headers["Last-Modified"] : headers["ETag"]
            let total = headers["Content-Range"].flatMap { $0.split(separator: "/").last }.flatMap { Int64($0) }
            return validator != object.tag || (total != nil && total != object.size) ? "changed while it was read" : nil
        }
        let response: HTTPResponse
        do {
            response = try client.send(HTTPRequest(.get, url, headers: headers), receive: receive, accept: accept)
        } catch {
            if error.kind == .rejected {
                throw RemoteReadFailure(
                    name: name, reason: "changed while it was read", isTransient: false, changed: true)
            }
            throw RemoteReadFailure(name: name, reason: error.message, isTransient: error.isTransient)
        }
        if response.status == 412 {
            throw RemoteReadFailure(name: name, reason: "changed while it was read", isTransient: false, changed: true)
        }
        if response.status == 200 {
            throw RemoteReadFailure(
                name: name, reason: "the server ignored the byte range asked for", isTransient: false)
        }
        guard response.status == 206 else { throw failure(response.status) }
    }

    private func failure(_ status: Int) -> RemoteReadFailure {
        let reason: String =
            switch status {
            case 404, 410: "no such file (HTTP \(status))"
            case 401, 403: "access denied (HTTP \(status))"
            default: "the server answered HTTP \(status)"
            }
        return RemoteReadFailure(name: name, reason: reason, isTransient: status >= 500 || status == 429)
    }
}
