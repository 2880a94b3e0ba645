import Foundation
import VMergeCore

/// Uploads of a finished local file: one PUT up to `singlePartLimit`, else a multipart upload whose
/// every part carries its SHA-256 (S3 refuses a part whose bytes do not match it). Either way the
/// object appears whole or not at all: a multipart upload that fails is aborted, and one left by a
/// killed run is found and aborted by the next run of the same output.
extension S3Client {
    /// Past this size a file goes up in parts (S3 takes at most 5 GiB in one PUT).
    static let singlePartLimit: Int64 = 64 << 20
    /// Each part but the last (S3's smallest is 5 MiB; 10,000 parts make 160 GiB).
    static let partSize: Int64 = 16 << 20

    /// Uploads `length` bytes of `descriptor` to `address` under `condition`, with `metadata`
    /// (x-amz-meta-*); returns the ETag S3 gives it.
    func upload(
        _ descriptor: Int32, length: Int64, to address: S3Address, condition: WriteCondition,
        metadata: [String: String] = [:],
        contentType: String? = nil
    ) throws -> String {
        // Whatever this upload's size: a killed run's multipart upload of the key is aborted first.
        abandonedUploads(of: address)
        // Marks this very write, so that a retry refused because it is there knows it for its own.
        let write = S3Client.writeMark()
        let extra =
            (metadata.merging([S3Client.writeField: write]) { $1 }).sorted { $0.key < $1.key }.map {
                ("x-amz-meta-" + $0.key, $0.value)
            }
            + (contentType.map { [("Content-Type", $0)] } ?? [])
        if length <= uploadSizes.singlePart {
            let (hex, base64) = try S3Client.checksum(descriptor, range: 0..<length, of: address)
            let headers =
                condition.headers + extra + [("x-amz-checksum-sha256", base64), ("x-amz-content-sha256", hex)]
            let request = HTTPRequest(
                .put, endpoint.url(address), headers: headers,
                body: .file(descriptor: descriptor, offset: 0, length: length), signing: signing)
            return try ownWriteIfRefused(address, mark: write, size: length) {
                try conditional(condition, address) { try send(request, about: address).headers["ETag"] ?? "" }
            }
        }
        return try uploadInParts(
            descriptor, length: length, to: address, condition: condition, headers: extra, mark: write)
    }

    /// A multipart upload: started with `headers`, each part checked, completed under `condition`;
    /// aborted on any failure.
    private func uploadInParts(
        _ descriptor: Int32, length: Int64, to address: S3Address, condition: WriteCondition,
        headers extra: [(name: String, value: String)], mark write: String
    ) throws -> String {
        let create = HTTPRequest(
            .post, endpoint.url(address, query: [("uploads", "")]),
            headers: extra + [("x-amz-checksum-algorithm", "SHA256")], signing: signing)
        guard let uploadID = S3XML.parse(try send(create, about: address).body)?["UploadId"]?.text else {
            throw S3Failure(address, .unreadableAnswer, "the server's answer to starting an upload could not be read")
        }
        do {
            var parts: [(number: Int, etag: String, checksum: String)] = []
            var offset: Int64 = 0
            while offset < length {
                let size = min(uploadSizes.part, length - offset)
                let number = parts.count + 1
                let (hex, base64) = try S3Client.checksum(descriptor, range: offset..<offset + size, of: address)
                let query = [("partNumber", String(number)), ("uploadId", uploadID)]
                let request = HTTPRequest(
                    .put, endpoint.url(address, query: query),
                    headers: [("x-amz-checksum-sha256", base64), ("x-amz-content-sha256", hex)],
                    body: .file(descriptor: descriptor, offset: offset, length: size), signing: signing)
                let etag = try send(request, about: address).headers["ETag"] ?? ""
                parts.append((number, etag, base64))
                offset += size
                CrashPoint.here("mid-upload")
            }
            let body =
                "<CompleteMultipartUpload>"
                + parts.map {
                    "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(S3Client.escapeXML($0.etag))</ETag><ChecksumSHA256>\($0.checksum)</ChecksumSHA256></Part>"
                }.joined()
                + "</CompleteMultipartUpload>"
            let complete = HTTPRequest(
                .post, endpoint.url(address, query: [("uploadId", uploadID)]),
                headers: condition.headers + [("Content-Type", "application/xml")],
                body: .bytes(Data(body.utf8)),
                signing: signing)
            return try ownWriteIfRefused(address, mark: write, size: length) {
                let answer = try conditional(condition, address) { try send(complete, about: address) }
                // S3 may answer 200 and put the failure in the body of a CompleteMultipartUpload.
                if let xml = S3XML.parse(answer.body), xml.name == "Error" {
                    throw S3Failure(
                        address, .server, "the upload could not be completed (\(xml["Code"]?.text ?? "unknown error"))")
                }
                return S3XML.parse(answer.body)?["ETag"]?.text ?? answer.headers["ETag"] ?? ""
            }
        } catch {
            // Aborted even when the run was stopped: a stopped client would not send the abort.
            withoutStopping().abort(uploadID, of: address)
            throw error
        }
    }

    /// Aborts the multipart uploads under exactly this key that a killed run left (they cost
    /// storage and are never seen as objects); a failure to list them is no reason to stop.
    func abandonedUploads(of address: S3Address) {
        let bucket = S3Address(bucket: address.bucket, key: "")
        let request = HTTPRequest(
            .get, endpoint.url(bucket, query: [("uploads", ""), ("prefix", address.key)]), signing: signing)
        guard let answer = try? send(request, about: address), let xml = S3XML.parse(answer.body) else { return }
        for upload in xml.all("Upload") where upload["Key"]?.text == address.key {
            if let id = upload["UploadId"]?.text { abort(id, of: address) }
        }
    }

    func abort(_ uploadID: String, of address: S3Address) {
        _ = try? send(
            HTTPRequest(.delete, endpoint.url(address, query: [("uploadId", uploadID)]), signing: signing),
            about: address)
    }

    /// The metadata field that marks one write (`writeMark`).
    static let writeField = "vmerge-write"

    /// A mark no other write carries: 128 random bits.
    static func writeMark() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// The ETag `body` gives; or, when it was refused because the name is taken (412, after a
    /// retry; a completed upload's retry reads NoSuchUpload) and the object there is this very
    /// write (its mark and size), that object's: S3 did the first try, and its answer was lost.
    func ownWriteIfRefused(_ address: S3Address, mark: String, size: Int64, _ body: () throws -> String) throws
        -> String
    {
        do { return try body() } catch let failure as S3Failure
            where [.exists, .preconditionFailed, .noSuchObject].contains(failure.kind)
        {
            guard let object = try? withoutStopping().head(address), object.size == size,
                object.metadata[S3Client.writeField] == mark
            else { throw failure }
            return object.etag
        }
    }

    private func conditional<T>(_ condition: WriteCondition, _ address: S3Address, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let failure as S3Failure where failure.kind == .preconditionFailed {
            switch condition {
            case .absent: throw S3Failure(address, .exists, "output exists (use -y to overwrite)")
            case .unchanged:
                throw S3Failure(address, .preconditionFailed, "output changed since it was looked at; not replaced")
            case .any: throw failure
            }
        }
    }

    /// The SHA-256 of a part of the file, as hex (the signed payload hash) and base64 (S3's
    /// checksum header).
    static func checksum(_ descriptor: Int32, range: Range<Int64>, of address: S3Address) throws -> (
        hex: String, base64: String
    ) {
        let running = SHA256.Running()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let wanted = Int(min(Int64(buffer.count), range.upperBound - offset))
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(offset)) }
            guard count > 0 else {
                throw S3Failure(address, .other, "the file to upload could not be read (it shrank or failed)")
            }
            buffer.withUnsafeBytes { running.add(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            offset += Int64(count)
        }
        let digest = running.finish()
        return (digest.map { String(format: "%02x", $0) }.joined(), Data(digest).base64EncodedString())
    }

    static func escapeXML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
