import Foundation
import VMergeCore

/// Who may change the queue from the dashboard. Actions are off unless the operator gave a token
/// (`--token-file`). A browser signs in once with the token and gets a session: a random id in a
/// cookie that scripts cannot read (HttpOnly) and that browsers do not send with another site's
/// requests (SameSite=Strict), plus a second random value, the form token, that each action's
/// form carries and another site cannot know. A script or `curl` sends the token itself
/// (`Authorization: Bearer`), which no browser adds on its own. Every action is a POST, and one
/// that says it comes from another origin is refused whatever it carries.
package final class ActionAccess: @unchecked Sendable {
    /// A signed-in browser.
    package struct Session: Sendable {
        package let id: String
        /// The form token every action's form carries.
        package let formToken: String
        var expires: Date
        /// What the last action did, shown once on the next page.
        var notice: String?
    }

    /// Why an action was refused: a status and one line for the person.
    package struct Refusal: Error, Sendable, Equatable {
        package let status: Int
        package let reason: String
    }

    package static let cookieName = "vmerge_session"
    static let lifetime: TimeInterval = 12 * 3600
    static let maxSessions = 256
    /// Wrong tokens allowed in a minute, from everyone together, before sign-in waits a minute:
    /// 30 a minute would need far longer than the universe has to guess 128 random bits, but a
    /// token a person typed may be short.
    static let failuresPerMinute = 30

    private let token: [UInt8]?
    /// The job API's named tokens (--api-tokens), beside the dashboard's own.
    private let apiTokens: APITokens
    private let lock = NSLock()
    private var sessions: [String: Session] = [:]
    private var failures: [Date] = []

    /// `token`: nil turns actions off.
    package init(token: String?, apiTokens: APITokens = APITokens()) {
        self.token = token.map { Array($0.utf8) }
        self.apiTokens = apiTokens
    }

    package var enabled: Bool { token != nil }

    /// Whether the job API answers: some token is given.
    package var apiEnabled: Bool { token != nil || !apiTokens.isEmpty }

    /// Who calls the job API, by the `Authorization: Bearer` token: the dashboard's (every scope)
    /// or a named one. Every token is compared, each in time that depends on nothing but its
    /// length (their digests'), so neither which token nor where it differs shows in the time;
    /// wrong tokens count toward the same lockout as the page's sign-in.
    package func apiCaller(of request: HTTPRequest, now: Date = Date()) -> Result<APICaller, Refusal> {
        guard apiEnabled else {
            return .failure(Refusal(status: 403, reason: "the API is off: the dashboard was started without a token"))
        }
        guard let offered = Self.bearer(request.headers["authorization"]) else {
            return .failure(Refusal(status: 401, reason: "send a token: 'Authorization: Bearer TOKEN'"))
        }
        let digest = SHA256.digest(Array(offered.utf8))
        var found: APICaller?
        if let token, Self.equal(digest, SHA256.digest(token)) {
            found = APICaller(name: APICaller.dashboardName, scopes: Set(APIScope.allCases))
        }
        for entry in apiTokens.entries where Self.equal(digest, entry.digest) { found = entry.caller }
        lock.lock()
        defer { lock.unlock() }
        failures.removeAll { now.timeIntervalSince($0) > 60 }
        guard failures.count < Self.failuresPerMinute else {
            return .failure(Refusal(status: 429, reason: "too many wrong tokens: wait a minute"))
        }
        guard let found else {
            failures.append(now)
            return .failure(Refusal(status: 401, reason: "that is not a token of this server"))
        }
        return .success(found)
    }

    /// The token in `file`, without the line break editors add; refused when shorter than 16
    /// characters (guessable), when it holds anything but printable ASCII, or when it is not a
    /// regular file.
    package static func token(fromFile file: String) throws -> String {
        let token = String(decoding: try SafeFile.read(file, limit: 4096), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // Printable ASCII only: what a person can type into the sign-in field and a header can
        // carry (bytes that are not text would all read as U+FFFD and weaken it).
        guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw VMergeError.invalidInput(
                file: file,
                reason:
                    "a token must be printable ASCII on one line, no spaces (one is made by: head -c 24 /dev/urandom | base64)"
            )
        }
        guard token.utf8.count >= 16 else {
            throw VMergeError.invalidInput(
                file: file,
                reason: "a token must be at least 16 characters (one is made by: head -c 24 /dev/urandom | base64)")
        }
        return token
    }

    /// A new session if `offered` is the token; nil otherwise (or while wrong tokens wait).
    package func signIn(offered: String, now: Date = Date()) -> Result<Session, Refusal> {
        lock.lock()
        defer { lock.unlock() }
        guard let token else { return .failure(Self.off) }
        if let refusal = checkLocked(offered, against: token, now: now) { return .failure(refusal) }
        sessions = sessions.filter { $0.value.expires > now }
        if sessions.count >= Self.maxSessions, let oldest = sessions.min(by: { $0.value.expires < $1.value.expires }) {
            sessions[oldest.key] = nil
        }
        let session = Session(
            id: Self.randomText(), formToken: Self.randomText(), expires: now.addingTimeInterval(Self.lifetime))
        sessions[session.id] = session
        return .success(session)
    }

    package func signOut(_ request: HTTPRequest) {
        guard let id = request.cookies[Self.cookieName] else { return }
        lock.lock()
        sessions[id] = nil
        lock.unlock()
    }

    /// The request's live session, if it has one.
    package func session(of request: HTTPRequest, now: Date = Date()) -> Session? {
        guard let id = request.cookies[Self.cookieName] else { return nil }
        lock.lock()
        defer { lock.unlock() }
        guard let session = sessions[id], session.expires > now else { return nil }
        return session
    }

    /// Whether `request` may act: nil if so, else why not. The session's notice is not touched.
    package func refusal(of request: HTTPRequest, now: Date = Date()) -> Refusal? {
        guard let token else { return Self.off }
        if let refusal = Self.crossSite(request) { return refusal }
        if let offered = Self.bearer(request.headers["authorization"]) {
            return check(offered, against: token, now: now)
        }
        guard let session = session(of: request, now: now) else {
            return Refusal(status: 403, reason: "sign in with the dashboard's token first")
        }
        guard let offered = request.field("form_token"), Self.equal(Array(offered.utf8), Array(session.formToken.utf8))
        else {
            return Refusal(status: 403, reason: "the form is not this session's: reload the page and try again")
        }
        return nil
    }

    /// The token in an `Authorization: Bearer` header (the scheme in any case, as HTTP has it).
    static func bearer(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return header.dropFirst(7).trimmingCharacters(in: .whitespaces)
    }

    /// nil if `offered` is the token. Wrong tokens, signing in or in a header alike, count
    /// together: past `failuresPerMinute` in a minute every token waits, the right one too (so
    /// guessing is never faster), while signed-in sessions go on working.
    private func check(_ offered: String, against token: [UInt8], now: Date) -> Refusal? {
        lock.lock()
        defer { lock.unlock() }
        return checkLocked(offered, against: token, now: now)
    }

    private func checkLocked(_ offered: String, against token: [UInt8], now: Date) -> Refusal? {
        failures.removeAll { now.timeIntervalSince($0) > 60 }
        guard failures.count < Self.failuresPerMinute else {
            return Refusal(status: 429, reason: "too many wrong tokens: wait a minute")
        }
        guard Self.equal(Array(offered.utf8), token) else {
            failures.append(now)
            return Refusal(status: 403, reason: "that is not the dashboard's token")
        }
        return nil
    }

    /// Keeps `text` to show once on the session's next page.
    package func leave(_ text: String, for request: HTTPRequest) {
        guard let id = request.cookies[Self.cookieName] else { return }
        lock.lock()
        sessions[id]?.notice = text
        lock.unlock()
    }

    /// The session's notice, removed as it is read.
    package func takeNotice(of request: HTTPRequest) -> String? {
        guard let id = request.cookies[Self.cookieName] else { return nil }
        lock.lock()
        defer { lock.unlock() }
        let notice = sessions[id]?.notice
        sessions[id]?.notice = nil
        return notice
    }

    /// The cookie that keeps `session` (no Secure flag: the dashboard serves plain HTTP, usually
    /// on loopback; behind a TLS proxy the browser keeps it all the same).
    package static func cookie(for session: Session) -> String {
        "\(cookieName)=\(session.id); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Int(lifetime))"
    }

    package static let clearedCookie = "\(cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"

    private static let off = Refusal(
        status: 403, reason: "actions are off: the dashboard was started without --token-file")

    /// A request a browser says comes from another site. Browsers send Origin with every POST and
    /// Sec-Fetch-Site with every request; tools send neither, and are not browsers to be misled.
    static func crossSite(_ request: HTTPRequest) -> Refusal? {
        let refused = Refusal(status: 403, reason: "a request from another site is refused")
        if let site = request.headers["sec-fetch-site"], site != "same-origin", site != "none" { return refused }
        if let origin = request.headers["origin"] {
            guard let host = request.headers["host"],
                origin.lowercased() == "http://\(host.lowercased())"
                    || origin.lowercased() == "https://\(host.lowercased())"
            else { return refused }
        }
        return nil
    }

    /// Compares in time that depends on the lengths only, not on where the bytes first differ.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// 32 random bytes as hex (the system's generator: arc4random / getrandom).
    static func randomText() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
