import Foundation
import VMergeCore

/// S3's requests that vmerge makes, each signed by libcurl and tried again with backoff when the
/// answer says it may help (5xx, throttling, a cut connection). Errors name the object and say why
/// in words, with where the credentials came from when they were refused; never a key.
final class S3Client {
    let endpoint: S3Endpoint
    let credentials: AWSCredentials
    let retries: RetrySchedule
    /// Where an upload goes multipart, and its parts' size (tests make them small).
    var uploadSizes = (singlePart: S3Client.singlePartLimit, part: S3Client.partSize)
    private let http: HTTPClient

    init(
        endpoint: S3Endpoint, credentials: AWSCredentials, settings: HTTPClient.Settings = .init(),
        retries: RetrySchedule = .init()
    )
        throws(HTTPFailure)
    {
        var settings = settings
        settings.allowPlainHTTP = endpoint.allowsPlainHTTP
        settings.caFile = settings.awsCAFile ?? settings.caFile
        self.endpoint = endpoint
        self.credentials = credentials
        self.retries = retries
        http = try HTTPClient(settings)
    }

    var signing: AWSSigning { AWSSigning(region: endpoint.region, service: "s3", credentials: credentials) }

    /// This client's twin that a cancelled run does not stop: what must still be done after a
    /// stop (an upload aborted, a poster taken back, the run's report written) is bounded by the
    /// client's timeouts and retries instead.
    func withoutStopping() -> S3Client {
        var settings = http.settings
        settings.shouldStop = { false }
        guard
            let twin = try? S3Client(endpoint: endpoint, credentials: credentials, settings: settings, retries: retries)
        else { return self }
        twin.uploadSizes = uploadSizes
        return twin
    }

    /// The object's size and tags; `S3Failure.noSuchObject` when there is none.
    func head(_ address: S3Address) throws(S3Failure) -> S3Object {
        let request = HTTPRequest(
            .head, endpoint.url(address), headers: [("x-amz-checksum-mode", "ENABLED")], signing: signing)
        do {
            let response = try send(request, about: address)
            return object(address, response.headers, size: Int64(response.headers["Content-Length"] ?? "") ?? 0)
        } catch  where error.kind == .accessDenied || error.http?.kind == .status(400, code: nil) {
            // A HEAD's refusal has no body to say why (a wrong secret and a missing permission
            // both read 403, a bad session token 400): one byte asked for with GET carries S3's
            // error code.
            try read(address, range: 0..<1, ifMatch: nil) { _ in true }
            throw error
        }
    }

    /// The object under `address`, or nil when there is none in a bucket that is there. A HEAD's
    /// 404 has no body, so a missing bucket reads like a missing key: one byte asked for with GET
    /// then carries S3's error code (NoSuchBucket is thrown, NoSuchKey is nil).
    func lookUp(_ address: S3Address) throws(S3Failure) -> S3Object? {
        do { return try head(address) } catch  where error.kind == .noSuchObject {
            do {
                try read(address, range: 0..<1, ifMatch: nil) { _ in true }
            } catch  where error.kind == .noSuchObject {
                return nil
            }
            // Put there between the two requests: there now, and looked at again when written.
            return nil
        }
    }

    /// Bytes `range` of the object, handed to `receive` as they come; refused with
    /// `S3Failure.changed` when the object is no longer `etag`.
    func read(
        _ address: S3Address, range: Range<Int64>, ifMatch etag: String?,
        receive: @escaping (UnsafeRawBufferPointer) -> Bool
    )
        throws(S3Failure)
    {
        var headers = [("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")]
        if let etag { headers.append(("If-Match", etag)) }
        let request = HTTPRequest(.get, endpoint.url(address), headers: headers, signing: signing)
        // The server's condition is checked again here: a store that ignores If-Match must not
        // hand over another version's bytes.
        let accept: (HTTPHeaders) -> String? = { headers in
            guard let etag, let sent = headers["ETag"], sent != etag else { return nil }
            return "changed since it was seen"
        }
        _ = try send(request, about: address, receive: receive, accept: accept, once: true)
    }

    /// Stores `bytes` under `address`, with their SHA-256 (S3 refuses a body that does not match it)
    /// and `metadata` (x-amz-meta-*). `condition` says what may be there: nothing (`If-None-Match:
    /// *`), or exactly the object seen (`If-Match`). Returns the ETag S3 gives it.
    @discardableResult
    func put(
        _ address: S3Address, bytes: Data, condition: WriteCondition, metadata: [String: String] = [:],
        contentType: String? = nil
    )
        throws(S3Failure) -> String
    {
        let digest = SHA256.digest(Array(bytes))
        let checksum = Data(digest).base64EncodedString()
        let write = S3Client.writeMark()
        let marked = metadata.merging([S3Client.writeField: write]) { $1 }
        var headers =
            condition.headers + marked.sorted { $0.key < $1.key }.map { ("x-amz-meta-" + $0.key, $0.value) } + [
                ("x-amz-checksum-sha256", checksum),
                ("x-amz-content-sha256", digest.map { String(format: "%02x", $0) }.joined()),
            ]
        if let contentType { headers.append(("Content-Type", contentType)) }
        let request = HTTPRequest(.put, endpoint.url(address), headers: headers, body: .bytes(bytes), signing: signing)
        do {
            return try send(request, about: address).headers["ETag"] ?? ""
        } catch  where error.kind == .preconditionFailed {
            // This very write, its answer lost and its retry refused: done.
            if let object = try? withoutStopping().head(address), object.size == Int64(bytes.count),
                object.metadata[S3Client.writeField] == write
            {
                return object.etag
            }
            guard case .absent = condition else { throw error }
            throw S3Failure(address, .exists, "an object exists under this name")
        }
    }

    /// Removes the object, only if it is still `etag` where the server checks that (S3 does for
    /// If-Match on DELETE since 2024); callers HEAD first where it does not.
    func delete(_ address: S3Address, ifMatch etag: String?) throws(S3Failure) {
        let headers = etag.map { [("If-Match", $0)] } ?? []
        _ = try send(HTTPRequest(.delete, endpoint.url(address), headers: headers, signing: signing), about: address)
    }

    /// Every object under a prefix, in S3's order (by key's bytes), following continuation tokens;
    /// with `folderOnly`, only those directly under it (as a folder's files, not its subfolders').
    func list(_ prefix: S3Address, folderOnly: Bool = false) throws(S3Failure) -> [S3Object] {
        var found: [S3Object] = []
        try listingPages(of: prefix, delimited: folderOnly) { xml in
            for entry in xml.all("Contents") {
                guard let key = entry["Key"]?.text.removingPercentEncoding,
                    let size = entry["Size"].flatMap({ Int64($0.text) })
                else { continue }
                found.append(
                    S3Object(
                        address: S3Address(bucket: prefix.bucket, key: key), size: size,
                        etag: entry["ETag"]?.text ?? "", versionID: nil))
            }
        }
        return found
    }

    /// The "folders" directly under a prefix (S3's CommonPrefixes with "/" as delimiter): each
    /// one's last segment, in S3's order.
    func subPrefixes(of prefix: S3Address) throws(S3Failure) -> [String] {
        var found: [String] = []
        try listingPages(of: prefix, delimited: true) { xml in
            for common in xml.all("CommonPrefixes") {
                guard let full = common["Prefix"]?.text.removingPercentEncoding, full.hasPrefix(prefix.key) else {
                    continue
                }
                let name = String(full.dropFirst(prefix.key.count).dropLast(full.hasSuffix("/") ? 1 : 0))
                if !name.isEmpty { found.append(name) }
            }
        }
        return found
    }

    /// Each page of ListObjectsV2 under `prefix`, following continuation tokens.
    private func listingPages(of prefix: S3Address, delimited: Bool, _ page: (S3XML) -> Void) throws(S3Failure) {
        var token: String?
        repeat {
            // Keys come URL-encoded: one with a control character would make the XML unreadable.
            var query = [("list-type", "2"), ("prefix", prefix.key), ("encoding-type", "url")]
            if delimited { query.append(("delimiter", "/")) }
            if let token { query.append(("continuation-token", token)) }
            let bucket = S3Address(bucket: prefix.bucket, key: "")
            let response = try send(
                HTTPRequest(.get, endpoint.url(bucket, query: query), signing: signing), about: prefix)
            guard let xml = S3XML.parse(response.body), xml.name == "ListBucketResult" else {
                throw S3Failure(prefix, .unreadableAnswer, "the listing could not be read")
            }
            page(xml)
            token = xml["IsTruncated"]?.text == "true" ? xml["NextContinuationToken"]?.text : nil
        } while token != nil
    }

    func send(
        _ request: HTTPRequest, about address: S3Address, receive: ((UnsafeRawBufferPointer) -> Bool)? = nil,
        accept: ((HTTPHeaders) -> String?)? = nil, once: Bool = false
    ) throws(S3Failure) -> HTTPResponse {
        var attempt = 0
        while true {
            attempt += 1
            let failure: S3Failure
            do {
                let response = try http.send(request, receive: receive, accept: accept)
                if response.isSuccess { return response }
                failure = S3Failure(address, answer: response, credentials: credentials, method: request.method)
            } catch {
                failure = S3Failure(address, error)
            }
            // A streamed body cannot be taken back: its reader tries again from where it got to.
            guard failure.isTransient, !once || failure.http?.kind != .network,
                let wait = retries.wait(after: attempt, asked: failure.retryAfter),
                !http.settings.shouldStop()
            else { throw failure }
            retries.sleep(wait, unless: http.settings.shouldStop)
        }
    }

    private func object(_ address: S3Address, _ headers: HTTPHeaders, size: Int64) -> S3Object {
        var metadata: [String: String] = [:]
        for field in headers.fields where field.name.lowercased().hasPrefix("x-amz-meta-") {
            metadata[String(field.name.lowercased().dropFirst("x-amz-meta-".count))] = field.value
        }
        return S3Object(
            address: address, size: size, etag: headers["ETag"] ?? "", versionID: headers["x-amz-version-id"],
            checksumSHA256: headers["x-amz-checksum-sha256"], metadata: metadata)
    }
}

/// What a write may find under its name.
enum WriteCondition: Sendable {
    /// Nothing: an existing object is never replaced.
    case absent
    /// Exactly the object that was seen (its ETag): `-y` replaces what it looked at, nothing newer.
    case unchanged(etag: String)
    /// Anything (vmerge's own temporaries only).
    case any

    var headers: [(String, String)] {
        switch self {
        case .absent: [("If-None-Match", "*")]
        case let .unchanged(etag): [("If-Match", etag)]
        case .any: []
        }
    }
}
