import Foundation
import VMergeCore

/// The secret webhooks are signed with (`--notify-secret-file`): Standard Webhooks' `whsec_`
/// followed by the key's bytes in base64. The key never appears in any output.
package struct WebhookSecret: Sendable, Equatable {
    let key: [UInt8]

    /// Reads the secret from `file` (one line; the line break editors add is dropped).
    package static func read(_ file: String) throws -> WebhookSecret {
        let text = String(decoding: try SafeFile.read(file, limit: 4096), as: UTF8.self)
        guard let secret = WebhookSecret(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw VMergeError.invalidInput(
                file: file,
                reason: "a webhook secret is whsec_ and 24 to 64 bytes in base64 "
                    + "(one is made by: echo whsec_$(head -c 32 /dev/urandom | base64))")
        }
        return secret
    }

    package init?(_ text: String) {
        guard text.hasPrefix("whsec_"), let key = Data(base64Encoded: String(text.dropFirst(6))),
            (24...64).contains(key.count)
        else { return nil }
        self.key = Array(key)
    }

    /// Standard Webhooks' `webhook-signature` value for a message: `v1,` and the base64 of the
    /// HMAC-SHA256 of `id.timestamp.body`.
    package func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        let signed = Array("\(id).\(timestamp).".utf8) + body
        return "v1," + Data(HMACSHA256.mac(key: key, message: signed)).base64EncodedString()
    }
}

/// Where events go: an https URL, reached at a private or local address only when the operator
/// listed it (`--allow-remote`). Shown with its query as `?…` (it may carry a token).
package struct NotifyTarget: Sendable, Hashable {
    package let url: URL
    let mayBePrivate: Bool

    /// `text` as a target under `access`, or why it cannot be one.
    package static func parse(_ text: String, access: RemoteAccess) -> Result<NotifyTarget, RemoteNameProblem> {
        guard case let .https(url)? = RemoteName(text) else { return .failure(RemoteNameProblem(text: text)) }
        return .success(NotifyTarget(url: url, mayBePrivate: access.isListed(.https(url))))
    }

    package var shown: String { RemoteName.redacted(url) }

    /// `targets` with each receiver once (the first time it is named): one named twice, by
    /// --notify and by a job's own `notify`, gets each event once.
    package static func unique(_ targets: [NotifyTarget]) -> [NotifyTarget] {
        var seen: Set<URL> = []
        return targets.filter { seen.insert($0.url).inserted }
    }
}

/// One event for one target, signed, with what became of it.
package struct WebhookDelivery: Sendable {
    package let id: String
    package let kind: JobEvent.Kind
    package let target: NotifyTarget
    let body: [UInt8]
    package var attempts = 0
    package var delivered = false
    package var lastError: String?
    /// The job of a batch it tells of (its position in the list).
    package let job: Int?
    /// Not tried again before then.
    var notBefore = Date.distantPast

    init(_ event: JobEvent, to target: NotifyTarget, job: Int? = nil) {
        id = WebhookSender.eventID()
        self.job = job
        kind = event.kind
        self.target = target
        body = Array(event.payload.text().utf8)
    }

    /// Sends it once; nil when the receiver took it (any 2xx), else why not.
    func attempt(with sender: WebhookSender) -> String? { sender.post(id: id, body: body, to: target) }
}

/// Posts signed events: each try signed when it is sent (receivers refuse a timestamp minutes
/// old), to a public address unless the target's prefix was listed, following no redirect.
package struct WebhookSender: Sendable {
    let secret: WebhookSecret
    let settings: HTTPClient.Settings

    /// - Parameter shouldStop: asked during each POST: true ends it at once (a signal stopping the
    ///   process must not wait on a receiver).
    package init(
        secret: WebhookSecret, environment: [String: String] = ProcessInfo.processInfo.environment,
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) {
        self.secret = secret
        var settings = HTTPClient.Settings(environment: environment)
        settings.shouldStop = shouldStop
        self.settings = settings
    }

    /// The most one POST may take, answer included.
    package static let postTimeout = 30

    /// Posts `body` as event `id`; nil when the receiver took it (any 2xx), else why not.
    package func post(id: String, body: [UInt8], to target: NotifyTarget) -> String? {
        var settings = settings
        settings.publicAddressesOnly = !target.mayBePrivate
        // A receiver may think before it answers: the whole 30 s are its, silence included.
        settings.stallTimeout = WebhookSender.postTimeout
        settings.totalTimeout = WebhookSender.postTimeout
        let timestamp = Int64(Date().timeIntervalSince1970)
        let headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("webhook-id", id), ("webhook-timestamp", "\(timestamp)"),
            ("webhook-signature", secret.signature(id: id, timestamp: timestamp, body: body)),
        ]
        do {
            let client = try HTTPClient(settings)
            let response = try client.send(HTTPRequest(.post, target.url, headers: headers, body: .bytes(Data(body))))
            if (200..<300).contains(response.status) { return nil }
            if (300..<400).contains(response.status) { return "redirected (HTTP \(response.status)): not followed" }
            return "HTTP \(response.status)"
        } catch {
            return error.message
        }
    }

    /// A new event's webhook-id: the same on every try of it.
    package static func eventID() -> String {
        "msg_" + (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}
