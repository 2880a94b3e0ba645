import Foundation
import VMergeCore

/// Finds credentials and the S3 endpoint the way the AWS tools do, in their order:
/// 1. `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`);
/// 2. web identity: `AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN` (EKS), or the profile's
///    `web_identity_token_file` + `role_arn`, exchanged with STS's AssumeRoleWithWebIdentity;
/// 3. the profile's keys in the shared files (`AWS_PROFILE`, else `default`);
/// 4. the instance's role from the metadata service (IMDSv2), unless `AWS_EC2_METADATA_DISABLED`.
struct CredentialChain: Sendable {
    var environment: [String: String]

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    private func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }

    /// The region and endpoint S3 requests go to.
    func endpoint() throws(CredentialFailure) -> S3Endpoint {
        let files = AWSConfigFiles(environment: environment)
        let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? files["region"] ?? "us-east-1"
        guard let text = value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL") ?? files["endpoint_url"] else {
            return S3Endpoint(region: region, custom: nil)
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            url.host != nil,
            url.user == nil, url.query == nil
        else {
            throw CredentialFailure(
                message: "the S3 endpoint is not an http(s) URL of a host (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL)")
        }
        return S3Endpoint(region: region, custom: url)
    }

    func credentials(settings: HTTPClient.Settings = .init()) throws(CredentialFailure) -> AWSCredentials {
        if let key = value("AWS_ACCESS_KEY_ID") {
            guard let secret = value("AWS_SECRET_ACCESS_KEY") else {
                throw CredentialFailure(message: "AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY")
            }
            return AWSCredentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"),
                source: "AWS_ACCESS_KEY_ID")
        }
        let files = AWSConfigFiles(environment: environment)
        if files.profileAsked, !files.profileFound {
            let named = "\(files.profileVariable)=\(files.profile)"
            throw CredentialFailure(message: "\(named): no such profile in the shared credentials or config file")
        }
        if let tokenFile = value("AWS_WEB_IDENTITY_TOKEN_FILE"), let role = value("AWS_ROLE_ARN") {
            return try WebIdentity(
                tokenFile: tokenFile, role: role, session: value("AWS_ROLE_SESSION_NAME"), chain: self
            )
            .exchange(settings: settings, source: "web identity (AWS_ROLE_ARN)")
        }
        let profileSource =
            files.profileAsked ? "\(files.profileVariable)=\(files.profile)" : "profile \(files.profile)"
        if let tokenFile = files["web_identity_token_file"], let role = files["role_arn"] {
            return try WebIdentity(tokenFile: tokenFile, role: role, session: files["role_session_name"], chain: self)
                .exchange(settings: settings, source: "web identity (\(profileSource))")
        }
        if let key = files.keys.id {
            // Half a pair is said, as botocore says it, rather than passed over for the next source.
            guard let secret = files.keys.secret else {
                throw CredentialFailure(
                    message: "\(profileSource): aws_access_key_id without aws_secret_access_key in the shared files")
            }
            return AWSCredentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: files.keys.token, source: profileSource)
        }
        if value("AWS_EC2_METADATA_DISABLED")?.lowercased() != "true" {
            let endpoint = value("AWS_EC2_METADATA_SERVICE_ENDPOINT") ?? "http://169.254.169.254"
            if let found = try InstanceMetadata(endpoint: endpoint).credentials(settings: settings) { return found }
        }
        throw CredentialFailure(
            message:
                "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN"
        )
    }

    /// Where STS is asked (AWS_ENDPOINT_URL_STS / AWS_ENDPOINT_URL, else AWS's regional STS).
    func stsEndpoint() -> URL? {
        if let text = value("AWS_ENDPOINT_URL_STS") ?? value("AWS_ENDPOINT_URL") { return URL(string: text) }
        let region =
            value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? AWSConfigFiles(environment: environment)["region"]
            ?? "us-east-1"
        return URL(string: "https://sts.\(region).amazonaws.com/")
    }
}

/// STS's AssumeRoleWithWebIdentity: the token file's JWT (as EKS mounts it) for the role's
/// temporary keys. The token goes in the POST body, never in a URL.
struct WebIdentity {
    var tokenFile: String
    var role: String
    var session: String?
    var chain: CredentialChain

    func exchange(settings: HTTPClient.Settings, source: String) throws(CredentialFailure) -> AWSCredentials {
        guard let data = try? SafeFile.read(tokenFile, limit: 64 << 10), !data.isEmpty else {
            throw CredentialFailure(message: "\(tokenFile): the web identity token file cannot be read")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let url = chain.stsEndpoint() else { throw CredentialFailure(message: "the STS endpoint is not a URL") }
        let form = S3Endpoint.canonicalQuery([
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", role),
            ("RoleSessionName", session ?? "vmerge-\(getpid())"), ("WebIdentityToken", token),
        ])
        var settings = settings
        settings.allowPlainHTTP = url.scheme?.lowercased() == "http"
        settings.caFile = settings.awsCAFile ?? settings.caFile
        let request = HTTPRequest(
            .post, url, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: .bytes(Data(form.utf8)))
        let answer: HTTPResponse
        do { answer = try HTTPClient(settings).send(request) } catch {
            throw CredentialFailure(message: "\(source): STS did not answer: \(error.message)")
        }
        let xml = S3XML.parse(answer.body)
        guard answer.isSuccess, let keys = xml?["AssumeRoleWithWebIdentityResult"]?["Credentials"],
            let key = keys["AccessKeyId"]?.text, let secret = keys["SecretAccessKey"]?.text
        else {
            let code = xml?["Error"]?["Code"]?.text ?? "HTTP \(answer.status)"
            throw CredentialFailure(message: "\(source): STS refused the token for \(role) (\(code))")
        }
        let expiry = keys["Expiration"].flatMap { AWSCredentials.date($0.text) }
        return AWSCredentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: keys["SessionToken"]?.text, source: source,
            expiration: expiry)
    }
}
