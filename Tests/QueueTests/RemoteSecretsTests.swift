import Foundation
import TestSupport
import XCTest

/// No secret of a remote job is printed anywhere a person or a program reads: the worker's log,
/// the queue's status (text and JSON), every page of the dashboard and its metrics. The secrets:
/// the AWS secret key, a session token, and a presigned URL's signature in a queued spec.
final class RemoteSecretsTests: DashboardTestCase {
    nonisolated(unsafe) static var s3: S3TestServer?

    override class func tearDown() {
        s3?.stop()
        s3 = nil
        super.tearDown()
    }

    func testNoSecretIsInTheLogsTheQueueOrTheDashboard() throws {
        let s3 = try Self.s3 ?? S3TestServer()
        Self.s3 = s3
        try s3.createBucket("secrets")
        for clip in ["a_", "b_"] {
            try s3.put(
                bucket: "secrets", key: "in/" + Fixtures.url(clip).lastPathComponent,
                bytes: Data(contentsOf: Fixtures.url(clip)))
        }
        let signature = "X-Amz-Signature=SIGNATURE0123456789abcdef"
        let token = "SESSIONTOKEN0123456789abcdef"
        let jobs = [
            [
                "name": "one", "inputs": ["s3://secrets/in/"], "output": "s3://secrets/out/one.mp4",
                "options": ["poster": "one.jpg"],
            ],
            [
                "name": "two", "inputs": ["https://127.0.0.1:9/x.mov?\(signature)"],
                "output": "s3://secrets/out/two.mp4",
            ],
        ]
        let list = folder.appendingPathComponent("remote.jsonl")
        try Data(
            jobs.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }.joined(
                separator: "\n"
            ).utf8
        )
        .write(to: list)
        XCTAssertEqual(vmerge(["queue", "add", "--db", database, list.path]).status, 0)
        var environment = [
            "AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey,
            "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
            "AWS_EC2_METADATA_DISABLED": "true", "VMERGE_DB": database!,
        ]
        let first = try WorkerProcess(
            ["worker", "--once", "--name", "w1", "--allow-remote", "s3://secrets/"],
            log: folder.appendingPathComponent("w1.log"),
            environment: environment)
        // 1: a job of its failed (job 2, on purpose).
        XCTAssertEqual(first.waitForExit(seconds: 120), 1, first.log)
        // A third job run with a session token the server does not know: refused, and said so.
        let third = folder.appendingPathComponent("third.jsonl")
        try Data(#"{"name": "three", "inputs": ["s3://secrets/in/"], "output": "s3://secrets/out/three.mp4"}"#.utf8)
            .write(to: third)
        XCTAssertEqual(vmerge(["queue", "add", "--db", database, third.path]).status, 0)
        environment["AWS_SESSION_TOKEN"] = token
        let second = try WorkerProcess(
            ["worker", "--once", "--name", "w2", "--allow-remote", "s3://secrets/"],
            log: folder.appendingPathComponent("w2.log"),
            environment: environment)
        XCTAssertEqual(second.waitForExit(seconds: 120), 1, second.log)
        XCTAssertTrue(first.log.contains("job 1 one: done -> s3://secrets/out/one.mp4"), first.log)
        XCTAssertTrue(first.log.contains("job 2 two: failed"), first.log)
        XCTAssertTrue(second.log.contains("job 3 three: failed"), second.log)

        var seen = [first.log, second.log]
        seen.append(vmerge(["queue", "status", "--db", database]).stdout)
        seen.append(vmerge(["queue", "status", "--db", database, "--json"]).stdout)
        // The dashboard reads a poster beside an object from its bucket, with its own credentials.
        environment["AWS_SESSION_TOKEN"] = nil
        let (_, port) = try startDashboard(
            arguments: ["dashboard", "--db", database, "--listen", "127.0.0.1:0"], environment: environment)
        let poster = try RawHTTP(port: port).request("GET", "/jobs/1/poster")
        XCTAssertEqual(poster.status, 200)
        XCTAssertEqual(poster.headers["content-type"], "image/jpeg")
        XCTAssertEqual(poster.body, try XCTUnwrap(try s3.object(bucket: "secrets", key: "out/one.jpg")))
        for path in ["/", "/jobs/1", "/jobs/2", "/jobs/3", "/metrics"] {
            let page = try RawHTTP(port: port).request("GET", path)
            XCTAssertEqual(page.status, 200, path)
            seen.append(page.text)
        }
        XCTAssertTrue(seen.joined().contains("x.mov?…"), "the presigned input is shown, without its query")
        for text in seen {
            for secret in [s3.secretKey, "SIGNATURE0123456789abcdef", token] {
                if let found = text.range(of: secret) {
                    let start =
                        text.index(found.lowerBound, offsetBy: -200, limitedBy: text.startIndex) ?? text.startIndex
                    XCTFail("a secret is shown: ...\(text[start..<found.upperBound])")
                }
            }
        }
    }
}
