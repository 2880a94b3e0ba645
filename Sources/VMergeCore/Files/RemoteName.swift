import Foundation

/// A file that is not on this machine, named by a URL: an object in a bucket (`s3://bucket/key`) or
/// an https resource. The one type such a name travels in, beside `FileName` for local ones; its
/// `description` is what may be printed (an https URL without its user, password or query: a
/// presigned URL's query is a secret, shown as `?…`).
package enum RemoteName: Hashable, Sendable, CustomStringConvertible {
    case s3(S3Address)
    case https(URL)

    /// Parses an `s3://` or `https://` name; nil for anything else (a local name).
    package init?(_ text: String) {
        if text.hasPrefix("s3://") {
            guard let address = S3Address(text), !RemoteName.hasDotSegment(address.key) else { return nil }
            self = .s3(address)
        } else if text.lowercased().hasPrefix("https://") {
            guard let url = URL(string: text), url.host?.isEmpty == false, url.fragment == nil, url.user == nil,
                !RemoteName.hasDotSegment(url.path),
                !RemoteName.hasDotSegment(url.absoluteString.removingPercentEncoding ?? "..")
            else { return nil }
            self = .https(url)
        } else {
            return nil
        }
    }

    /// A "." or ".." segment (written plainly or percent-encoded): libcurl and many servers resolve
    /// them, so "allowed/../secret" would leave a listed prefix. Refused rather than resolved.
    private static func hasDotSegment(_ path: String) -> Bool {
        let decoded = path.removingPercentEncoding ?? path
        return decoded.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." }
    }

    /// Whether `text` is meant as a remote name (even one that does not parse): such a word is
    /// never taken for a local file called "s3:".
    package static func looksRemote(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("s3://") || lower.hasPrefix("https://") || lower.hasPrefix("http://")
    }

    /// `text` as one spelling for one object: an object's address as S3 reads it (the leading
    /// slashes of its key dropped); anything else as it is.
    package static func canonical(_ text: String) -> String {
        if case let .s3(address)? = RemoteName(text) { return address.description }
        return text
    }

    /// Whether `a` and `b` name the same object (however spelt).
    package static func sameObject(_ a: String, _ b: String) -> Bool {
        guard case let .s3(first)? = RemoteName(a), case let .s3(second)? = RemoteName(b) else { return false }
        return first == second
    }

    /// Names a prefix of objects (a folder's worth), not one object.
    package var isPrefix: Bool {
        if case let .s3(address) = self { return address.isPrefix }
        return false
    }

    package var description: String {
        switch self {
        case let .s3(address): return address.description
        case let .https(url): return RemoteName.redacted(url)
        }
    }

    /// A name as it may be printed (a report's field, a page, an event): a remote one shown
    /// (`shown`: an https URL's query as `?…`), a local one as it is.
    package static func printable(_ name: String) -> String { looksRemote(name) ? shown(name) : name }

    /// A word meant as a remote name, as it may be shown even when it does not parse.
    package static func shown(_ text: String) -> String {
        if let name = RemoteName(text) { return name.description }
        if let url = URL(string: text), url.scheme != nil, url.host != nil { return redacted(url) }
        // Unparsable: its scheme alone (a user:password@ or a query may follow it).
        guard let end = text.range(of: "://") else { return "…" }
        return String(text[..<end.upperBound]) + "…"
    }

    /// The URL as it may be shown: no user or password, and a query as `?…`.
    package static func redacted(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "https://…" }
        parts.user = nil
        parts.password = nil
        parts.fragment = nil
        let hadQuery = parts.percentEncodedQuery != nil
        parts.percentEncodedQuery = nil
        return (parts.string ?? "https://…") + (hadQuery ? "?…" : "")
    }
}
