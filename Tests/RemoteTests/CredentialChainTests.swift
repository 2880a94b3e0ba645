import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeRemote

/// A HOME of the test's own (the machine's ~/.aws is never read) and the files written in it.
/// Every chain made here has the EC2 metadata service off, or asks it on loopback.
struct CredentialHome {
    let folder: URL

    init() throws { folder = try makeTemporaryFolder("vmerge-creds") }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    /// Writes `text` at `name` under the home; its path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func chain(_ variables: [String: String]) -> CredentialChain {
        var environment = ["HOME": folder.path, "AWS_EC2_METADATA_DISABLED": "true"]
        if let metadata = variables["AWS_EC2_METADATA_SERVICE_ENDPOINT"] {
            // This machine's tests may reach loopback only, never 169.254.169.254.
            precondition(metadata.hasPrefix("http://127.0.0.1:"), "the metadata service must be on loopback")
            environment["AWS_EC2_METADATA_DISABLED"] = nil
        }
        environment.merge(variables) { $1 }
        return CredentialChain(environment: environment)
    }
}

/// The message of what `body` throws, checked to hold none of `secrets` (keys, tokens).
func failureMessage(
    hiding secrets: [String], file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
) -> String {
    do {
        try body()
        XCTFail("nothing was thrown", file: file, line: line)
        return ""
    } catch {
        let message = "\(error)"
        for secret in secrets where !secret.isEmpty {
            XCTAssertFalse(message.contains(secret), "a secret in \"\(message)\"", file: file, line: line)
        }
        return message
    }
}

/// Where the chain finds keys, region and endpoint, in the AWS tools' order (files only).
final class CredentialChainTests: XCTestCase {
    var home: CredentialHome!
    let secrets = [
        "env-secret-1", "env-token-1", "default-secret-1", "cred-file-secret-1", "config-secret-1", "config-token-1",
    ]

    override func setUpWithError() throws {
        try super.setUpWithError()
        home = try CredentialHome()
    }

    override func tearDown() {
        home.remove()
        super.tearDown()
    }

    func writeProfiles() throws {
        try home.write(
            ".aws/credentials",
            """
            [default]
            aws_access_key_id = AKIADEFAULT
            aws_secret_access_key = default-secret-1
            [ci]
            aws_access_key_id = AKIACREDFILE
            aws_secret_access_key = cred-file-secret-1

            """)
        try home.write(
            ".aws/config",
            """
            [default]
            region = eu-central-1
            [ci]
            region = ap-south-1
            [profile ci]
            aws_access_key_id = AKIACONFIG
            aws_secret_access_key = config-secret-1
            aws_session_token = config-token-1
            region = eu-west-3
            endpoint_url = http://127.0.0.1:9000
            [profile build]
            aws_access_key_id = AKIABUILD
            aws_secret_access_key = config-secret-1

            """)
    }

    func testKeysInTheEnvironmentWinOverAProfile() throws {
        try writeProfiles()
        let variables = [
            "AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "env-secret-1", "AWS_SESSION_TOKEN": "env-token-1",
        ]
        let found = try home.chain(variables.merging(["AWS_PROFILE": "ci"]) { $1 }).credentials()
        XCTAssertEqual(
            [found.accessKeyID, found.secretAccessKey, found.sessionToken], ["AKIAENV", "env-secret-1", "env-token-1"])
        XCTAssertEqual("\(found)", "credentials from AWS_ACCESS_KEY_ID")
        let profile = try home.chain([:]).credentials()
        XCTAssertEqual(
            [profile.accessKeyID, profile.secretAccessKey, profile.source],
            ["AKIADEFAULT", "default-secret-1", "profile default"])
        XCTAssertNil(profile.sessionToken)
    }

    func testAWSProfilePicksItsSectionInEachFileAndTheCredentialsFileWins() throws {
        try writeProfiles()
        let ci = try home.chain(["AWS_PROFILE": "ci"]).credentials()
        XCTAssertEqual(
            [ci.accessKeyID, ci.secretAccessKey, ci.source], ["AKIACREDFILE", "cred-file-secret-1", "AWS_PROFILE=ci"])
        // The config file's session token belongs to the config file's keys, not to these.
        XCTAssertNil(ci.sessionToken)
        let endpoint = try home.chain(["AWS_PROFILE": "ci"]).endpoint()
        XCTAssertEqual(endpoint.region, "eu-west-3")
        XCTAssertEqual(endpoint.custom?.absoluteString, "http://127.0.0.1:9000")
        let build = try home.chain(["AWS_PROFILE": "build"]).credentials()
        XCTAssertEqual([build.accessKeyID, build.source], ["AKIABUILD", "AWS_PROFILE=build"])
        let named = try home.chain(["AWS_DEFAULT_PROFILE": "ci"]).credentials()
        XCTAssertEqual([named.accessKeyID, named.source], ["AKIACREDFILE", "AWS_DEFAULT_PROFILE=ci"])
        let both = try home.chain(["AWS_PROFILE": "build", "AWS_DEFAULT_PROFILE": "ci"]).credentials()
        XCTAssertEqual(both.accessKeyID, "AKIABUILD")
        let defaulted = try home.chain([:]).endpoint()
        XCTAssertEqual(defaulted.region, "eu-central-1")
        XCTAssertNil(defaulted.custom)
        // Files named by the variables instead of ~/.aws.
        let elsewhere = try home.write(
            "elsewhere/creds", "[ci]\naws_access_key_id = AKIAELSEWHERE\naws_secret_access_key = config-secret-1\n")
        let moved = try home.chain(["AWS_PROFILE": "ci", "AWS_SHARED_CREDENTIALS_FILE": elsewhere]).credentials()
        XCTAssertEqual(moved.accessKeyID, "AKIAELSEWHERE")
        let config = try home.write("elsewhere/config", "[profile ci]\nregion = af-south-1\n")
        XCTAssertEqual(
            try home.chain(["AWS_PROFILE": "ci", "AWS_CONFIG_FILE": config]).endpoint().region, "af-south-1")
    }

    func testRegionAndEndpointVariablesComeBeforeTheProfile() throws {
        try home.write(".aws/config", "[default]\nregion = eu-west-3\nendpoint_url = http://127.0.0.1:9001\n")
        func endpoint(_ variables: [String: String]) throws -> (String, String?) {
            let found = try home.chain(variables).endpoint()
            return (found.region, found.custom?.absoluteString)
        }
        XCTAssertTrue(try endpoint([:]) == ("eu-west-3", "http://127.0.0.1:9001"))
        XCTAssertEqual(try endpoint(["AWS_DEFAULT_REGION": "ca-central-1"]).0, "ca-central-1")
        XCTAssertEqual(try endpoint(["AWS_DEFAULT_REGION": "ca-central-1", "AWS_REGION": "sa-east-1"]).0, "sa-east-1")
        XCTAssertEqual(try endpoint(["AWS_ENDPOINT_URL": "http://127.0.0.1:9002"]).1, "http://127.0.0.1:9002")
        let both = ["AWS_ENDPOINT_URL": "http://127.0.0.1:9002", "AWS_ENDPOINT_URL_S3": "https://s3.example.net"]
        XCTAssertEqual(try endpoint(both).1, "https://s3.example.net")
        try home.write(".aws/config", "")
        XCTAssertTrue(try endpoint([:]) == ("us-east-1", nil))
        let bad = failureMessage(hiding: []) {
            _ = try home.chain(["AWS_ENDPOINT_URL": "ftp://example.net"]).endpoint()
        }
        XCTAssertEqual(bad, "the S3 endpoint is not an http(s) URL of a host (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL)")
    }

    func testCommentsBlankLinesAndNestedLinesOfTheSharedFilesAreSkipped() throws {
        let config = [
            "# a comment", "; another", "", "[profile ci]", "region = eu-north-1", "s3 =",
            "  endpoint_url = http://127.0.0.1:1/nested", "\taddressing_style = path",
            "; aws_access_key_id = AKIACOMMENTED",
            "", "aws_access_key_id = AKIAREAL", "# aws_secret_access_key = commented",
            "aws_secret_access_key = config-secret-1",
            "services = mine", "[services mine]", "s3 =", "  endpoint_url = http://127.0.0.1:2",
        ]
        // Windows line ends too: the files are often edited there.
        try home.write(".aws/config", config.joined(separator: "\r\n") + "\r\n")
        let found = try home.chain(["AWS_PROFILE": "ci"]).credentials()
        XCTAssertEqual([found.accessKeyID, found.secretAccessKey], ["AKIAREAL", "config-secret-1"])
        let endpoint = try home.chain(["AWS_PROFILE": "ci"]).endpoint()
        XCTAssertEqual(endpoint.region, "eu-north-1")
        XCTAssertNil(endpoint.custom, "a services block's endpoint is not the profile's")
    }

    func testAProfileAskedForThatIsNotThereIsSaidAndNoOtherIsUsed() throws {
        try writeProfiles()
        let missing = failureMessage(hiding: secrets) { _ = try home.chain(["AWS_PROFILE": "nope"]).credentials() }
        XCTAssertEqual(missing, "AWS_PROFILE=nope: no such profile in the shared credentials or config file")
    }

    func testHalfAPairOfKeysIsSaid() throws {
        let env = failureMessage(hiding: secrets) { _ = try home.chain(["AWS_ACCESS_KEY_ID": "AKIAENV"]).credentials() }
        XCTAssertEqual(env, "AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY")
        try home.write(".aws/credentials", "[ci]\naws_access_key_id = AKIAHALF\naws_session_token = config-token-1\n")
        let profile = failureMessage(hiding: secrets) { _ = try home.chain(["AWS_PROFILE": "ci"]).credentials() }
        XCTAssertEqual(profile, "AWS_PROFILE=ci: aws_access_key_id without aws_secret_access_key in the shared files")
    }

    func testNoCredentialsAtAllIsSaid() throws {
        let none = failureMessage(hiding: secrets) { _ = try home.chain([:]).credentials() }
        XCTAssertEqual(
            none,
            "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN"
        )
    }
}
