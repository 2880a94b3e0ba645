import Foundation
import TestSupport
import XCTest

/// `vmerge` itself, run on objects in the S3 server and resources on the https server: the merge
/// from a prefix, each byte fetched once, failures in one line, no secret printed anywhere.
final class RemoteMergeTests: S3TestCase {
    var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey,
            "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
            "AWS_REGION": s3.region, "AWS_PROFILE": "", "AWS_CONFIG_FILE": "/nonexistent",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        ]
    }

    let clips = ["a_none_640x480_30fps_aac44k_stereo.mov", "b_rot90_1920x1080_30fps_aac48k_mono.mov"]

    func upload(_ bucket: String, prefix: String) throws -> Int {
        if (try? s3.keys(bucket: bucket)) == nil { try s3.createBucket(bucket) }
        var total = 0
        for clip in clips {
            let bytes = try Data(contentsOf: Fixtures.url(clip))
            try s3.put(bucket: bucket, key: prefix + clip, bytes: bytes)
            total += bytes.count
        }
        return total
    }

    func testAPrefixIsMergedInNameOrderFetchingEachByteOnce() throws {
        let stored = try upload("merge-prefix", prefix: "trip/day1/")
        try s3.put(bucket: "merge-prefix", key: "trip/day1/notes.txt", bytes: Data("not a video".utf8))
        // A folder's own files only, as on disk: not a sub-prefix's, nor a "folder" marker key.
        try s3.put(bucket: "merge-prefix", key: "trip/day1/sub/c.mov", bytes: Data(contentsOf: Fixtures.url("c_")))
        try s3.put(bucket: "merge-prefix", key: "trip/day1/x.mp4/", bytes: Data())
        let folder = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            ["s3://merge-prefix/trip/day1/", "-o", "out.mp4", "--report", "report.json"], in: folder,
            environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        let video = try MediaInspector(path: folder.appendingPathComponent("out.mp4").path).streams().video
        XCTAssertEqual(video?.width, 320)
        XCTAssertEqual(video?.height, 240)
        let report = try jsonObject(at: folder.appendingPathComponent("report.json"))
        let inputs = (report["inputs"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
        XCTAssertEqual(inputs, clips.map { "s3://merge-prefix/trip/day1/" + $0 })
        let gets = try s3.requests().filter { $0.method == "GET" && !$0.query.contains("list-type") }
        XCTAssertEqual(
            gets.reduce(0) { $0 + $1.bytesSent }, stored, "each stored byte fetched once: \(gets.map(\.range))")
    }

    func testAWrongSecretIsOneLineNamingTheObjectAndTheSourceNeverTheSecret() throws {
        _ = try upload("merge-refused", prefix: "")
        let folder = try makeScratchDirectory()
        var wrong = environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-0123456789"
        let run = try VMergeBinary.run(
            ["s3://merge-refused/" + clips[0], "-o", "out.mp4"], in: folder, environment: wrong)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(
            run.stderr,
            "vmerge: s3://merge-refused/\(clips[0]): the secret key was refused (credentials from AWS_ACCESS_KEY_ID)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.mp4").path))
        // Refused keys are the run's problem, not the clip's: --skip-invalid merges nothing without it.
        try FileManager.default.copyItem(at: Fixtures.url("b_"), to: folder.appendingPathComponent("local.mov"))
        let skipping = try VMergeBinary.run(
            ["local.mov", "s3://merge-refused/" + clips[0], "-o", "out.mp4", "--skip-invalid"], in: folder,
            environment: wrong)
        XCTAssertEqual(skipping.status, 1, skipping.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.mp4").path))
    }

    func testABatchOfAPrefixTheOperatorTypedNeedsNoListing() throws {
        _ = try upload("merge-typed", prefix: "trips/day1/")
        _ = try upload("merge-typed", prefix: "trips/day2/")
        let folder = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            ["batch", "s3://merge-typed/trips/", "--out", "s3://merge-typed/out"], in: folder, environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            try s3.keys(bucket: "merge-typed").filter { $0.hasPrefix("out/") }, ["out/day1.mp4", "out/day2.mp4"])
    }

    func testABatchJobListNamesObjectsOnlyUnderTheOperatorsPrefixes() throws {
        _ = try upload("merge-batch", prefix: "allowed/")
        _ = try upload("merge-batch", prefix: "private/")
        let folder = try makeScratchDirectory()
        let lines = [
            #"{"inputs": ["s3://merge-batch/allowed/"], "output": "ok.mp4"}"#,
            #"{"inputs": ["s3://merge-batch/private/"], "output": "refused.mp4"}"#,
            #"{"inputs": ["s3://merge-batch/allowed/../private/"], "output": "escaped.mp4"}"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(
            to: folder.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(
            ["batch", "jobs.jsonl", "--out", "out", "--allow-remote", "s3://merge-batch/allowed/"], in: folder,
            environment: environment)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(
            run.stderr.contains(
                "s3://merge-batch/private/: is not under a prefix the operator allows (--allow-remote)"), run.stderr)
        XCTAssertTrue(run.stderr.contains("not an s3://bucket/key or https:// name vmerge can read"), run.stderr)
        XCTAssertEqual(listing(folder.appendingPathComponent("out")), ["ok.mp4"])
        XCTAssertFalse(
            try s3.requests().contains { $0.path.contains("/private/") }, "nothing under the refused prefix was read")
    }

    func testAMissingObjectWithSkipInvalidIsSkippedAndNamed() throws {
        _ = try upload("merge-missing", prefix: "")
        let folder = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [
                "s3://merge-missing/" + clips[0], "s3://merge-missing/gone.mov", "s3://merge-missing/" + clips[1], "-o",
                "out.mp4", "--skip-invalid",
            ],
            in: folder, environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("vmerge: s3://merge-missing/gone.mov: skipped: no such object\n"), run.stderr)
        // A bucket that is not there is the run's, not the clip's, and says so (a HEAD cannot).
        let nobucket = try VMergeBinary.run(
            ["s3://merge-nobucket/a.mov", "s3://merge-missing/" + clips[1], "-o", "out2.mp4", "--skip-invalid"],
            in: folder, environment: environment)
        XCTAssertEqual(nobucket.status, 1, nobucket.stderr)
        XCTAssertTrue(nobucket.stderr.contains("vmerge: s3://merge-nobucket/a.mov: no such bucket\n"), nobucket.stderr)
    }
}

/// An https input named by a presigned URL: read through the tests' CA, its query never printed.
final class HTTPSMergeTests: HTTPSTestCase {
    func testAPresignedURLsQueryIsInNoMessageAndNoReport() throws {
        let clip = "a_none_640x480_30fps_aac44k_stereo.mov"
        try? FileManager.default.copyItem(at: Fixtures.url(clip), to: https.folder.appendingPathComponent(clip))
        let secret = "X-Amz-Signature=0123456789abcdefSECRET"
        let url = https.baseURL.absoluteString + "/" + clip + "?" + secret
        let folder = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            [
                url, https.baseURL.absoluteString + "/missing.mov?" + secret, "-o", "out.mp4", "--skip-invalid",
                "--report", "report.json",
                "--progress", "json", "--allow-remote", https.baseURL.absoluteString + "/",
            ],
            in: folder, environment: ["SSL_CERT_FILE": https.caFile])
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        let report = try String(contentsOf: folder.appendingPathComponent("report.json"), encoding: .utf8)
        for text in [run.stdout, run.stderr, report] {
            XCTAssertFalse(text.contains("SECRET"), text)
        }
        XCTAssertTrue(report.contains(clip + "?…"), report)
        XCTAssertTrue(
            (run.stdout + run.stderr).contains("/missing.mov?…: skipped: no such file (HTTP 404)"),
            run.stdout + run.stderr)
    }

    func testALoopbackHostIsRefusedUnlessItsPrefixIsListedAndDotSegmentsAlways() throws {
        let clip = "a_none_640x480_30fps_aac44k_stereo.mov"
        try? FileManager.default.copyItem(at: Fixtures.url(clip), to: https.folder.appendingPathComponent(clip))
        let folder = try makeScratchDirectory()
        let url = https.baseURL.absoluteString + "/" + clip
        let refused = try VMergeBinary.run(
            [url, "-o", "out.mp4"], in: folder, environment: ["SSL_CERT_FILE": https.caFile])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(
            refused.stderr,
            "vmerge: \(url): its host is at a private or local address (127.0.0.1); allowed only under an --allow-remote prefix\n"
        )
        let elsewhere = try VMergeBinary.run(
            [url, "-o", "out.mp4", "--allow-remote", https.baseURL.absoluteString + "/other/"], in: folder,
            environment: ["SSL_CERT_FILE": https.caFile])
        XCTAssertEqual(elsewhere.status, 1, elsewhere.stderr)
        // A redirect on the same host may not leave the listed prefix.
        let redirected = try VMergeBinary.run(
            [
                https.baseURL.absoluteString + "/redirect-here/" + clip, "-o", "out.mp4", "--allow-remote",
                https.baseURL.absoluteString + "/redirect-here/",
            ],
            in: folder, environment: ["SSL_CERT_FILE": https.caFile])
        XCTAssertEqual(redirected.status, 1, redirected.stderr)
        XCTAssertTrue(redirected.stderr.contains(", outside the allowed prefixes: not followed"), redirected.stderr)
        // Secrets in a word that is refused are not echoed.
        let secretive = try VMergeBinary.run(
            ["https://u:PASSX@127.0.0.1:5443:1/x.mov", "-o", "https://u:PASSW@127.0.0.1/x.mp4?sig=SIGZ"], in: folder)
        XCTAssertEqual(secretive.status, 2, secretive.stderr)
        for secret in ["PASSX", "PASSW", "SIGZ"] { XCTAssertFalse(secretive.stderr.contains(secret), secretive.stderr) }
        let dotted = https.baseURL.absoluteString + "/other/../" + clip
        let escaped = try VMergeBinary.run(
            [dotted, "-o", "out.mp4", "--allow-remote", https.baseURL.absoluteString + "/other/"], in: folder,
            environment: ["SSL_CERT_FILE": https.caFile])
        // A name vmerge cannot read is the command's mistake (exit 2), like plain http.
        XCTAssertEqual(escaped.status, 2)
        XCTAssertTrue(
            escaped.stderr.hasSuffix(": not an s3://bucket/key or https:// name vmerge can read\n"), escaped.stderr)
        let plain = try VMergeBinary.run(["http://127.0.0.1/x.mov?sig=SIGQ", "-o", "out.mp4"], in: folder)
        XCTAssertEqual(plain.status, 2, plain.stderr)
        XCTAssertEqual(
            plain.stderr, "vmerge: http://127.0.0.1/x.mov?…: not an s3://bucket/key or https:// name vmerge can read\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.mp4").path))
    }
}
