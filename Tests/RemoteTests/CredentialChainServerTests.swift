import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeRemote

/// Keys the chain finds (a profile, STS's web identity exchange, the EC2 metadata service) sign
/// real requests to the S3 server, which also serves STS and a fake IMDSv2, all on loopback.
final class CredentialChainServerTests: S3TestCase {
    var home: CredentialHome!
    let webToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ2bWVyZ2UtdGVzdCJ9.c2lnbmF0dXJlLXZtZXJnZQ"

    override func setUpWithError() throws {
        try super.setUpWithError()
        home = try CredentialHome()
        try s3.serveInstanceRole(nil)
    }

    override func tearDown() {
        home.remove()
        super.tearDown()
    }

    /// Every secret a message must never show: the server's, and the web identity token.
    var secrets: [String] { [s3.secretKey, s3.deniedSecretKey, webToken] }

    func client(_ chain: CredentialChain) throws -> S3Client {
        try S3Client(
            endpoint: chain.endpoint(), credentials: chain.credentials(),
            retries: RetrySchedule(attempts: 2, base: 0.01, cap: 0.02))
    }

    func object(_ bucket: String) throws -> S3Address {
        try s3.createBucket(bucket)
        try s3.put(bucket: bucket, key: "k.mov", bytes: patternBytes(10))
        return S3Address("s3://\(bucket)/k.mov")!
    }

    func testKeysFromAProfileSignAndAWrongSecretNamesTheProfile() throws {
        let target = try object("creds-profile")
        try home.write(
            ".aws/credentials", "[ci]\naws_access_key_id = \(s3.accessKey)\naws_secret_access_key = \(s3.secretKey)\n")
        try home.write(".aws/config", "[profile ci]\nregion = \(s3.region)\n")
        let chain = home.chain(["AWS_PROFILE": "ci", "AWS_ENDPOINT_URL": s3.endpoint.absoluteString])
        XCTAssertEqual(try client(chain).head(target).size, 10)
        try home.write(
            ".aws/credentials",
            "[ci]\naws_access_key_id = \(s3.accessKey)\naws_secret_access_key = \(s3.deniedSecretKey)\n")
        let refused = failureMessage(hiding: secrets) { _ = try client(chain).head(target) }
        XCTAssertEqual(
            refused, "s3://creds-profile/k.mov: the secret key was refused (credentials from AWS_PROFILE=ci)")
    }

    func webIdentityChain(_ variables: [String: String] = [:]) throws -> CredentialChain {
        let tokenFile = try home.write("eks/token", webToken + "\n")
        let base = [
            "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile, "AWS_ROLE_ARN": s3.webIdentityRole,
            "AWS_ROLE_SESSION_NAME": "vmerge-test",
            "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
        ]
        return home.chain(base.merging(variables) { $1 })
    }

    func testAWebIdentityTokenIsExchangedForKeysThatSign() throws {
        let target = try object("creds-web")
        let found = try webIdentityChain().credentials()
        XCTAssertEqual(found.source, "web identity (AWS_ROLE_ARN)")
        XCTAssertTrue(found.accessKeyID.hasPrefix("ASIA"), found.accessKeyID)
        XCTAssertFalse(found.sessionToken?.isEmpty ?? true)
        XCTAssertNotNil(found.expiration, "STS's Expiration is read")
        let exchange = try s3.requests().first
        XCTAssertEqual(
            [exchange?.method, exchange?.path, exchange?.query], ["POST", "/", ""],
            "the token is in the body, not the URL")
        let client = try S3Client(
            endpoint: S3Endpoint(region: s3.region, custom: s3.endpoint), credentials: found,
            retries: RetrySchedule(attempts: 2))
        XCTAssertEqual(try client.head(target).size, 10, "the role's keys and session token sign")
        var wrongToken = found
        wrongToken.sessionToken = "not-the-session-token"
        let refused = failureMessage(hiding: secrets + [found.secretAccessKey, found.sessionToken ?? ""]) {
            // A GET: S3 names InvalidToken in a body, which a HEAD's answer has not.
            _ = try S3Client(
                endpoint: S3Endpoint(region: s3.region, custom: s3.endpoint), credentials: wrongToken,
                retries: RetrySchedule(attempts: 1)
            )
            .list(S3Address("s3://creds-web/")!)
        }
        XCTAssertTrue(refused.contains("the session token was refused"), refused)
        XCTAssertTrue(refused.hasSuffix("(credentials from web identity (AWS_ROLE_ARN))"), refused)
        // The profile's web_identity_token_file and role_arn, the same way.
        try home.write(
            ".aws/config",
            "[profile eks]\nweb_identity_token_file = \(home.folder.path)/eks/token\nrole_arn = \(s3.webIdentityRole)\n"
        )
        let profile = try home.chain(["AWS_PROFILE": "eks", "AWS_ENDPOINT_URL": s3.endpoint.absoluteString])
            .credentials()
        XCTAssertEqual(profile.source, "web identity (AWS_PROFILE=eks)")
        XCTAssertNotNil(profile.sessionToken)
    }

    func testWebIdentityFailuresNameTheFileOrTheRoleAndNeverTheToken() throws {
        let missing = home.folder.appendingPathComponent("eks/none").path
        let noFile = failureMessage(hiding: secrets) {
            _ = try webIdentityChain(["AWS_WEB_IDENTITY_TOKEN_FILE": missing]).credentials()
        }
        XCTAssertEqual(noFile, "\(missing): the web identity token file cannot be read")
        try s3.inject([S3TestServer.Fault(method: "POST", status: 400, code: "InvalidIdentityToken", sts: true)])
        let refused = failureMessage(hiding: secrets) { _ = try webIdentityChain().credentials() }
        XCTAssertEqual(
            refused,
            "web identity (AWS_ROLE_ARN): STS refused the token for \(s3.webIdentityRole) (InvalidIdentityToken)")
        // AWS_ENDPOINT_URL_STS before AWS_ENDPOINT_URL: a port where nothing listens.
        let dead = failureMessage(hiding: secrets) {
            _ = try webIdentityChain(["AWS_ENDPOINT_URL_STS": "http://127.0.0.1:9/"]).credentials()
        }
        XCTAssertTrue(dead.hasPrefix("web identity (AWS_ROLE_ARN): STS did not answer: "), dead)
        XCTAssertEqual(try s3.requests().count, 1, "only the refused exchange reached the server")
    }

    func testTheMetadataServiceGivesTheInstanceRolesKeysAfterAToken() throws {
        let target = try object("creds-imds")
        let served = try s3.serveInstanceRole("vmerge-instance")
        let hidden = secrets + [served["SecretAccessKey"] ?? "?", served["Token"] ?? "?"]
        let chain = home.chain([
            "AWS_EC2_METADATA_SERVICE_ENDPOINT": s3.endpoint.absoluteString,
            "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
        ])
        let found = try chain.credentials()
        XCTAssertEqual(
            [found.accessKeyID, found.secretAccessKey, found.sessionToken],
            [served["AccessKeyId"], served["SecretAccessKey"], served["Token"]])
        XCTAssertEqual(found.source, "instance metadata (role vmerge-instance)")
        XCTAssertEqual(found.expiration, served["Expiration"].flatMap(ISO8601DateFormatter().date))
        let asked = try s3.requests().map { "\($0.method) \($0.path) \($0.status)" }
        let roles = "/latest/meta-data/iam/security-credentials/"
        XCTAssertEqual(asked, ["PUT /latest/api/token 200", "GET \(roles) 200", "GET \(roles)vmerge-instance 200"])
        // The fake is IMDSv2 only: a GET without the session token is refused.
        let bare = try controlRequest("GET", URL(string: s3.endpoint.absoluteString + roles)!)
        XCTAssertEqual(bare.status, 401)
        XCTAssertEqual(try client(chain).head(target).size, 10, "the role's temporary keys sign")
        // A user's keys (no session token) sign too; a wrong secret names the role.
        try s3.serveInstanceRole("vmerge-instance", key: s3.accessKey, secret: s3.secretKey)
        XCTAssertNil(try chain.credentials().sessionToken)
        XCTAssertEqual(try client(chain).head(target).size, 10)
        try s3.serveInstanceRole("vmerge-instance", key: s3.accessKey, secret: s3.deniedSecretKey)
        let refused = failureMessage(hiding: hidden) { _ = try client(chain).head(target) }
        XCTAssertEqual(
            refused,
            "s3://creds-imds/k.mov: the secret key was refused (credentials from instance metadata (role vmerge-instance))"
        )
    }

    func testAMetadataServiceWithNoRoleOrTurnedOffGivesNothing() throws {
        try s3.serveInstanceRole(nil)
        let endpoint = s3.endpoint.absoluteString
        let noRole = failureMessage(hiding: secrets) {
            _ = try home.chain(["AWS_EC2_METADATA_SERVICE_ENDPOINT": endpoint]).credentials()
        }
        XCTAssertTrue(noRole.hasPrefix("no AWS credentials: "), noRole)
        XCTAssertEqual(try s3.requests().map(\.status), [200, 404])
        try s3.clearRequests()
        try s3.serveInstanceRole("vmerge-instance")
        for disabled in ["true", "TRUE"] {
            let chain = home.chain([
                "AWS_EC2_METADATA_SERVICE_ENDPOINT": endpoint, "AWS_EC2_METADATA_DISABLED": disabled,
            ])
            let off = failureMessage(hiding: secrets) { _ = try chain.credentials() }
            XCTAssertTrue(off.hasPrefix("no AWS credentials: "), off)
        }
        XCTAssertEqual(
            try s3.requests().filter { $0.path.hasPrefix("/latest/") }.count, 0, "the metadata service was not asked")
    }
}
