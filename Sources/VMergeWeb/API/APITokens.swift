import Foundation
import VMergeCore

/// What a caller of the job API may do. `read`: the jobs and their reports; `submit`: add jobs;
/// `operate`: cancel, retry, pause and resume.
package enum APIScope: String, Sendable, CaseIterable, Comparable {
    case read, submit, operate

    package static func < (a: APIScope, b: APIScope) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// Who called the API: the token's name (what the job log and the idempotency keys record),
/// and what it may do.
package struct APICaller: Sendable, Equatable {
    package let name: String
    package let scopes: Set<APIScope>

    /// The dashboard's own token (--token-file): every scope.
    package static let dashboardName = "dashboard"
}

/// The API's named tokens (`--api-tokens FILE`): one a line, `NAME SCOPES TOKEN`, scopes
/// comma-separated (`ci read,submit 9vV1...`); `#` starts a comment. Kept as SHA-256 digests
/// only, so a token is compared in time that does not depend on where it differs, and the
/// tokens themselves are not in the process's memory after reading.
package struct APITokens: Sendable {
    struct Entry: Sendable {
        let caller: APICaller
        let digest: [UInt8]
    }

    let entries: [Entry]

    package init() { entries = [] }

    init(entries: [Entry]) { self.entries = entries }

    /// Reads `file`; refused (naming the line) when a line is malformed, a name or a token is
    /// used twice, a scope is unknown, or a token is shorter than 16 characters.
    package static func read(_ file: String) throws -> APITokens {
        let text = String(decoding: try SafeFile.read(file, limit: 1 << 20), as: UTF8.self)
        var entries: [Entry] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fail = { (why: String) in VMergeError.invalidInput(file: file, reason: "line \(index + 1): \(why)") }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard fields.count == 3 else { throw fail("expected NAME SCOPES TOKEN (scopes: read,submit,operate)") }
            let (name, scopeText, token) = (fields[0], fields[1], fields[2])
            guard (1...64).contains(name.count),
                name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
            else { throw fail("a name is 1 to 64 letters, digits, '.', '_' or '-'") }
            guard name != APICaller.dashboardName else { throw fail("'dashboard' names --token-file's token") }
            var scopes: Set<APIScope> = []
            for word in scopeText.split(separator: ",") {
                guard let scope = APIScope(rawValue: String(word)) else {
                    throw fail("unknown scope '\(word)' (read, submit, operate)")
                }
                scopes.insert(scope)
            }
            guard !scopes.isEmpty else { throw fail("no scope") }
            guard token.utf8.count >= 16, token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw fail("a token is 16 printable ASCII characters at least (head -c 24 /dev/urandom | base64)")
            }
            let digest = SHA256.digest(Array(token.utf8))
            if entries.contains(where: { $0.caller.name == name }) { throw fail("the name \(name) is used twice") }
            if entries.contains(where: { $0.digest == digest }) { throw fail("a token is used twice") }
            entries.append(Entry(caller: APICaller(name: name, scopes: scopes), digest: digest))
        }
        return APITokens(entries: entries)
    }

    package var isEmpty: Bool { entries.isEmpty }
}
