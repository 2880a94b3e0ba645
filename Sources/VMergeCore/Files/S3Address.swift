import Foundation

/// One object in a bucket, as `s3://bucket/key` names it. The key is kept as its text (S3 keys are
/// UTF-8); a key ending in "/" names a prefix (a folder's worth of objects).
package struct S3Address: Sendable, Hashable, CustomStringConvertible {
    package var bucket: String
    package var key: String

    package init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// Parses `s3://bucket/key`; nil for anything else (and for a bucket name S3 would refuse, so
    /// a name cannot smuggle a host or a path into the request's URL).
    package init?(_ text: String) {
        guard text.hasPrefix("s3://") else { return nil }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        guard S3Address.isValidBucket(bucket) else { return nil }
        let key = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        // No control character: a key is printed in messages, and one would drive the terminal.
        guard key.utf8.count <= 1024, !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        self.init(bucket: bucket, key: key)
    }

    /// S3's rules for a bucket's name: 3 to 63 lowercase letters, digits, dots and hyphens,
    /// starting and ending with a letter or digit.
    package static func isValidBucket(_ name: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-")
        guard (3...63).contains(name.count), name.allSatisfy(allowed.contains),
            let first = name.first, let last = name.last, first.isLetter || first.isNumber,
            last.isLetter || last.isNumber
        else { return false }
        return !name.contains("..")
    }

    /// Names a prefix (ends in "/", or is the whole bucket).
    package var isPrefix: Bool { key.isEmpty || key.hasSuffix("/") }

    package var description: String { "s3://\(bucket)/\(key)" }

    /// The key as it goes in a request's path: each segment percent-encoded with only RFC 3986's
    /// unreserved characters left as they are (what SigV4's canonical URI for S3 expects).
    package var encodedKey: String {
        key.split(separator: "/", omittingEmptySubsequences: false).map { S3Address.encode(String($0)) }.joined(
            separator: "/")
    }

    package static func encode(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
