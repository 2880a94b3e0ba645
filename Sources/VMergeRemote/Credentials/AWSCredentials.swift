import Foundation

/// AWS keys for signing, and where they came from (said in errors: "credentials from
/// AWS_PROFILE=ci"). Its description never shows the secret or the session token.
struct AWSCredentials: Sendable, CustomStringConvertible {
    var accessKeyID: String
    var secretAccessKey: String
    var sessionToken: String?
    /// Where these were found, fit for a message.
    var source: String
    /// When temporary credentials stop working (web identity, instance metadata).
    var expiration: Date?

    init(
        accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, source: String,
        expiration: Date? = nil
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.source = source
        self.expiration = expiration
    }

    var description: String { "credentials from \(source)" }

    /// An expiration time as STS and the metadata service write it: ISO 8601, with or without
    /// fractional seconds (STS-compatible servers such as moto send microseconds, which the plain
    /// formatter rejects, losing the time).
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        return formatter.date(from: text)
    }
}

/// Why no credentials could be had, in a line ("no AWS credentials: set AWS_ACCESS_KEY_ID ...").
struct CredentialFailure: Error, Sendable, CustomStringConvertible {
    var message: String
    var description: String { message }
}
