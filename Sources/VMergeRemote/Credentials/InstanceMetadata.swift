import Foundation
import VMergeCore

/// The EC2 instance's role credentials through IMDSv2 (a session token first, then the role's
/// keys). `AWS_EC2_METADATA_SERVICE_ENDPOINT` moves it (a test's on loopback). One second to answer:
/// off EC2 nothing is there, and the chain must not hang on it.
struct InstanceMetadata {
    var endpoint: String

    /// The role's keys, or nil when no metadata service answers.
    func credentials(settings: HTTPClient.Settings) throws(CredentialFailure) -> AWSCredentials? {
        var settings = settings
        settings.allowPlainHTTP = true
        settings.connectTimeout = 1
        settings.stallTimeout = 2
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        guard let tokenURL = URL(string: base + "/latest/api/token"), let client = try? HTTPClient(settings) else {
            return nil
        }
        guard
            let tokenAnswer = try? client.send(
                HTTPRequest(
                    .put, tokenURL, headers: [("X-aws-ec2-metadata-token-ttl-seconds", "21600")], body: .bytes(Data()))),
            tokenAnswer.isSuccess
        else { return nil }
        let token = [("X-aws-ec2-metadata-token", String(decoding: tokenAnswer.body, as: UTF8.self))]
        let rolesURL = URL(string: base + "/latest/meta-data/iam/security-credentials/")!
        guard let roles = try? client.send(HTTPRequest(.get, rolesURL, headers: token)), roles.isSuccess,
            let role = String(decoding: roles.body, as: UTF8.self).split(whereSeparator: \.isNewline).first,
            let roleURL = URL(
                string: base + "/latest/meta-data/iam/security-credentials/" + S3Address.encode(String(role)))
        else { return nil }
        guard let answer = try? client.send(HTTPRequest(.get, roleURL, headers: token)), answer.isSuccess,
            let fields = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
            let key = fields["AccessKeyId"] as? String, let secret = fields["SecretAccessKey"] as? String
        else { throw CredentialFailure(message: "the instance metadata service gave no credentials for role \(role)") }
        let expiry = (fields["Expiration"] as? String).flatMap(AWSCredentials.date)
        return AWSCredentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: fields["Token"] as? String,
            source: "instance metadata (role \(role))",
            expiration: expiry)
    }
}
