import Foundation

/// A webhook receiver for the event tests (RemoteTests/Servers/webhook-receiver.py): https on
/// 127.0.0.1 with a self-signed certificate made here (`caFile` is what a client trusts), checking
/// every event's Standard Webhooks signature with Python's own hmac, not vmerge's code.
public final class WebhookReceiver {
    /// `https://127.0.0.1:PORT`.
    public let base: String
    /// The certificate to trust (SSL_CERT_FILE for vmerge).
    public let caFile: String
    public let secret: String
    public let folder: URL
    private let server: ChildServer

    public init(secret: String) throws {
        self.secret = secret
        folder = try makeTemporaryFolder("vmerge-webhooks")
        let cert = folder.appendingPathComponent("cert.pem").path
        let key = folder.appendingPathComponent("key.pem").path
        let made = try runProgram(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj",
                "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-addext",
                "basicConstraints=critical,CA:TRUE",
            ])
        guard made.status == 0 else { throw ReceiverError("openssl could not make a certificate: \(made.stderr)") }
        caFile = cert
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../RemoteTests/Servers/webhook-receiver.py").standardizedFileURL.path
        server = try ChildServer(
            "/usr/bin/python3",
            [
                script, cert, key, secret, folder.appendingPathComponent("events.jsonl").path,
                folder.appendingPathComponent("mode.json").path,
            ], log: folder.appendingPathComponent("receiver.log"), readsOutput: true)
        guard let line = server.firstLine(timeout: 10), line.hasPrefix("ready ") else {
            server.stop()
            throw ReceiverError("the webhook receiver did not start: \(server.logText)")
        }
        base = String(line.dropFirst("ready ".count))
    }

    deinit { stop() }

    public func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// What it got, in order: each POST's `path`, `id`, `timestamp`, `valid` (its signature),
    /// `status` (answered) and `body`.
    public func events() throws -> [[String: Any]] {
        let text = (try? String(contentsOf: folder.appendingPathComponent("events.jsonl"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The `type` of each event got, in order.
    public func types() throws -> [String] {
        try events().compactMap { ($0["body"] as? [String: Any])?["type"] as? String }
    }

    /// How it answers next: `{"status": 500, "times": 2}`, `{"delay": 3}`, or `{}` (200).
    public func answer(_ mode: String) throws {
        try Data(mode.utf8).write(to: folder.appendingPathComponent("mode.json"))
    }

    /// A `whsec_` secret of 32 fixed bytes.
    public static let testSecret = "whsec_" + Data((0..<32).map { UInt8($0 * 7 % 256) }).base64EncodedString()
}

struct ReceiverError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
