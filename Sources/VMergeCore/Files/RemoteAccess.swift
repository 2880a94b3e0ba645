import Foundation

/// Which remote names a job may use, and which of them may reach private addresses. A person's own
/// command line may name any object or public https resource; a job that comes from outside (a
/// job list, a queue spec, a request) may name only what lies under a prefix the operator listed
/// with `--allow-remote`. An https name reaches a loopback, private or link-local address only
/// when it is listed, whoever named it (a URL must not make a worker read its own metadata
/// service or a neighbour's admin page).
package struct RemoteAccess: Sendable, Equatable {
    /// The operator's prefixes (`--allow-remote`), parsed.
    package private(set) var listed: [RemoteName] = []
    /// Whether a name must lie under a listed prefix.
    package var listingRequired = false

    package init(listed: [RemoteName] = [], listingRequired: Bool = false) {
        self.listed = listed
        self.listingRequired = listingRequired
    }

    /// A person's own command: anything public.
    package static let commandLine = RemoteAccess()

    /// Parses an `--allow-remote` value: an `s3://bucket/prefix/` or an `https://host[:port]/path/`;
    /// nil with the reason when it is neither.
    package static func prefix(_ text: String) -> Result<RemoteName, RemoteNameProblem> {
        guard let name = RemoteName(text) else { return .failure(RemoteNameProblem(text: text)) }
        return .success(name)
    }

    /// The first of `urls` not under a listed prefix (or no remote name at all): where a job
    /// from outside (an API body, a watch job.json) may not send events signed with the
    /// operator's secret. nil: every one is listed.
    package func firstUnlisted(_ urls: [String]) -> String? {
        urls.first { url in RemoteName(url).map { !isListed($0) } ?? true }
    }

    /// Whether `name` lies under a listed prefix: the same bucket and a key that starts with the
    /// prefix's, or the same https origin and a path under the prefix's.
    package func isListed(_ name: RemoteName) -> Bool {
        listed.contains { prefix in
            switch (prefix, name) {
            // A prefix ends at a "/": s3://b/tenant1 holds tenant1/..., never tenant10/.
            case let (.s3(p), .s3(n)):
                let folder = p.key.isEmpty || p.key.hasSuffix("/") ? p.key : p.key + "/"
                return p.bucket == n.bucket && (n.key == p.key || n.key.hasPrefix(folder))
            case let (.https(p), .https(n)):
                return RemoteAccess.origin(p) == RemoteAccess.origin(n)
                    && (n.path == p.path || n.path.hasPrefix(p.path.hasSuffix("/") ? p.path : p.path + "/"))
            default: return false
            }
        }
    }

    /// Lets names under `prefix` be used: one the operator typed as the command's own source.
    package mutating func allow(_ prefix: RemoteName) {
        if !listed.contains(prefix) { listed.append(prefix) }
    }

    /// Why `name` may not be used by this job, or nil.
    package func problem(with name: RemoteName) -> String? {
        guard listingRequired, !isListed(name) else { return nil }
        return "is not under a prefix the operator allows (--allow-remote)"
    }

    private static func origin(_ url: URL) -> String {
        "\(url.host?.lowercased() ?? ""):\(url.port ?? 443)"
    }
}

/// A word that was meant as a remote name and is not one vmerge can use.
package struct RemoteNameProblem: Error, Sendable, CustomStringConvertible {
    package var text: String
    package init(text: String) { self.text = text }
    package var description: String {
        "\(RemoteName.shown(text)): not an s3://bucket/key or https:// name vmerge can use"
    }
}
