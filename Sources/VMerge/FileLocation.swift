import Foundation
internal import VMergeCore

/// Where a file is: the one type this API names every file by (a job's clips, its output and its
/// report; the report's clips, output, poster, deleted and kept sources and kept output; a
/// warning's file, an error's, a progress step's).
///
/// A local file is held as its path's bytes, exactly as the file system has them: on Linux a name
/// may hold any byte but "/" and NUL, and a name that is not UTF-8 (an old camera's, a Samba
/// share's) still names its own file, not one with U+FFFD in its place (Foundation's `URL` on
/// Linux repairs such bytes so). Two locations are the same when their bytes are.
///
/// Make one from a file `URL`, from a path as text (``init(path:)``) or from a path's bytes
/// (``init(fileSystemPath:)``); read it back as ``fileSystemPath`` (the bytes), ``path`` (text
/// that turns back into the same bytes), ``url`` or ``description`` (as a person reads it).
///
/// A location that is not a file, an object in a bucket (`s3://bucket/key`, its key percent-encoded
/// as a URL needs) or an `https://` resource, is a location too: a job reads clips from either and
/// writes its output to an object (see ``MergeJob/allowedRemotePrefixes``).
public struct FileLocation: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The kinds of place: a local path's bytes, or a URL that is no file's. Object storage is
    /// to become further cases here, not a second type.
    private enum Storage: Sendable, Hashable {
        case path([UInt8])
        case remote(URL)
    }

    private let storage: Storage

    /// A file URL's path, as the file system will see it (exact on Apple's platforms, where a URL
    /// can carry any byte; on Linux what Foundation kept of it), or a URL that is no file's.
    public init(_ url: URL) {
        guard url.isFileURL else {
            storage = .remote(url)
            return
        }
        storage = .path(
            url.withUnsafeFileSystemRepresentation { path in
                path.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? Array(url.path.utf8)
            })
    }

    /// A path, absolute or relative to the current folder, as text: a character of
    /// U+10FF80-U+10FFFF stands for the byte 0x80-0xFF (the form ``path`` gives and the JSON
    /// report writes), every other character for its UTF-8. Plain text is its UTF-8.
    public init(path: String) { storage = .path(FileName.bytes(of: path)) }

    /// A path, absolute or relative to the current folder, by its bytes.
    public init(fileSystemPath: [UInt8]) { storage = .path(fileSystemPath) }

    /// A path written in the source: `"out.mp4"`, as ``init(path:)``.
    public init(stringLiteral path: String) { self.init(path: path) }

    /// The path's bytes, as the file system holds them; nil for a location that is not a file.
    public var fileSystemPath: [UInt8]? {
        if case let .path(bytes) = storage { return bytes }
        return nil
    }

    /// The path as text, losing nothing: the plain path when it is UTF-8, and otherwise each byte
    /// that is not UTF-8 as the character U+10FF00 plus the byte (as the JSON report writes it),
    /// so `FileLocation(path: location.path) == location`. A location that is not a file gives its
    /// URL's text. To show it, use ``description``.
    public var path: String {
        switch storage {
        case let .path(bytes): FileName.decode(bytes)
        case let .remote(url): url.absoluteString
        }
    }

    /// A URL for it: a file URL for a path (on Linux a byte that is not UTF-8 shows as U+FFFD in
    /// it, naming another file: use ``fileSystemPath`` or the location itself to reach the file).
    public var url: URL {
        switch storage {
        case let .path(bytes): FileLocation.fileURL(bytes)
        case let .remote(url): url
        }
    }

    /// As a person reads it, as `vmerge` prints it: a byte that is not UTF-8 as `\xFF`, a control
    /// character escaped; a URL without its user, password, query or fragment (a presigned
    /// query is a secret).
    public var description: String {
        switch storage {
        case let .path(bytes): FileName(bytes: bytes).description
        case let .remote(url): VisibleText.of(FileLocation.shown(url))
        }
    }

    /// A URL without what may be secret in it.
    private static func shown(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url.scheme ?? "" }
        (parts.user, parts.password, parts.query, parts.fragment) = (nil, nil, nil, nil)
        return parts.string ?? url.scheme ?? ""
    }

    /// A file URL for a path's bytes.
    private static func fileURL(_ bytes: [UInt8]) -> URL {
        let path = bytes + [0]
        return path.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) {
                URL(fileURLWithFileSystemRepresentation: $0.baseAddress!, isDirectory: false, relativeTo: nil)
            }
        }
    }
}

extension FileLocation {
    /// A name as vmerge's own layers carry it: a String in FileName's lossless form (a report's
    /// path, a diagnostic's or an error's file, a progress step's).
    /// A name as vmerge's own layers carry it: a path, or an object's or https resource's name
    /// (`s3://bucket/key`, an https URL shown with its query as `?…`).
    init(escaped: String) {
        if RemoteName.looksRemote(escaped), let url = FileLocation.url(ofRemote: escaped) {
            self.init(url)
        } else {
            self.init(path: escaped)
        }
    }

    /// The name as vmerge's own layers take it (FileName's lossless form); nil when it is no file.
    var escaped: String? { fileSystemPath.map { FileName.decode($0) } }

    /// The name the job model takes: a path's lossless form, an object's `s3://bucket/key` (its
    /// key as S3 holds it, not percent-encoded), an https URL as given; nil for another kind of
    /// URL.
    var jobName: String? {
        switch storage {
        // A relative path that reads like a URL ("s3://b/k" as a folder "s3:") is still a path.
        case .path: return escaped.map { RemoteName.looksRemote($0) ? "./" + $0 : $0 }
        case let .remote(url):
            guard let scheme = url.scheme?.lowercased() else { return nil }
            if scheme == "https" { return url.absoluteString }
            guard scheme == "s3", let parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
                let bucket = parts.host
            else { return nil }
            return "s3://" + bucket + parts.path
        }
    }

    /// An `s3://bucket/key` as a URL (its key percent-encoded where a URL needs it), or an https
    /// URL; nil when Foundation cannot hold it as one.
    private static func url(ofRemote name: String) -> URL? {
        guard name.hasPrefix("s3://") else { return URL(string: name) }
        let rest = name.dropFirst("s3://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var parts = URLComponents()
        parts.scheme = "s3"
        parts.host = String(rest[..<slash])
        parts.path = String(rest[slash...])
        return parts.url
    }
}

// In JSON a location is a string: a path in ``path``'s form, or a URL's text. A string that starts
// as a URL does ("scheme://") is read as one, a file:// URL as its path, so the URLs the earlier
// version wrote still read; a path that would read so is written as {"path": ...}. {"pathBytes":
// [...]}, {"url": ...} and {"relative": ...} (URL's own keyed form), written before, are read too.
extension FileLocation {
    private enum CodingKeys: String, CodingKey { case path, pathBytes, url, relative }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            self.init(text: text)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let path = try container.decodeIfPresent(String.self, forKey: .path) {
            self.init(path: path)
        } else if let bytes = try container.decodeIfPresent([UInt8].self, forKey: .pathBytes) {
            self.init(fileSystemPath: bytes)
        } else if let url = try container.decodeIfPresent(URL.self, forKey: .url) {
            self.init(url)
        } else {
            self.init(text: try container.decode(String.self, forKey: .relative))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if case .path = storage, FileLocation.looksLikeURL(path) {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(path, forKey: .path)
        } else {
            var single = encoder.singleValueContainer()
            try single.encode(path)
        }
    }

    /// A string of the JSON form: a URL's text when it starts as one, else a path.
    private init(text: String) {
        if FileLocation.looksLikeURL(text), let url = URL(string: text) {
            self.init(url)
        } else {
            self.init(path: text)
        }
    }

    /// Whether `text` starts with a URL's scheme and "://" (RFC 3986: a letter, then letters,
    /// digits, "+", "-" or ".").
    private static func looksLikeURL(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return false }
        let scheme = text[..<colon]
        return scheme.first?.isASCII == true && scheme.first?.isLetter == true
            && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }
}
