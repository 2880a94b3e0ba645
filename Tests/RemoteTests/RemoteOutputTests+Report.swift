import Foundation
import TestSupport
import XCTest

/// `--report s3://bucket/key.json`: the report beside an object is uploaded before the video and
/// written again once the sources are deleted; it replaces only an earlier vmerge report (or,
/// with -y, what it looked at); a run that fails still leaves its report in the bucket.
extension RemoteOutputTests {
    func report(_ bucket: String, _ key: String) throws -> [String: Any] {
        let bytes = try XCTUnwrap(try s3.object(bucket: bucket, key: key), "no report at \(key)")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
    }

    func testAReportBesideAnObjectGoesUpBeforeTheVideoAndIsRewrittenToNameTheDeletedSources() throws {
        try upload("report-set")
        let run = try vmerge([
            "s3://report-set/in/", "-o", "s3://report-set/trip.mp4", "--poster", "trip.jpg",
            "--report", "s3://report-set/trip.json", "--delete-sources",
        ])
        XCTAssertEqual(run.status, 0, run.stderr)
        let puts = try s3.requests().filter { $0.method == "PUT" }
        XCTAssertEqual(
            puts.map(\.path),
            ["/report-set/trip.json", "/report-set/trip.jpg", "/report-set/trip.mp4", "/report-set/trip.json"])
        // The rewrite replaces only what this run wrote.
        XCTAssertEqual(puts.first?.ifMatch, nil)
        XCTAssertEqual(puts.last?.ifMatch?.isEmpty, false)
        let json = try report("report-set", "trip.json")
        XCTAssertEqual(json["status"] as? String, "ok")
        XCTAssertEqual((json["output"] as? [String: Any])?["path"] as? String, "s3://report-set/trip.mp4")
        XCTAssertEqual(
            (json["deleted_sources"] as? [String])?.sorted(),
            ["a_", "b_"].map { "s3://report-set/in/" + Fixtures.url($0).lastPathComponent }.sorted())
        XCTAssertEqual(try s3.keys(bucket: "report-set"), ["trip.jpg", "trip.json", "trip.mp4"])
    }

    func testAReportInABucketReplacesOnlyAnEarlierReportAndAFailedRunLeavesOne() throws {
        try upload("report-rule")
        try s3.put(bucket: "report-rule", key: "notes.json", bytes: Data("their notes".utf8))
        let refused = try vmerge([
            "s3://report-rule/in/", "-o", "s3://report-rule/a.mp4", "--report", "s3://report-rule/notes.json",
        ])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(
            refused.stderr,
            "vmerge: s3://report-rule/notes.json: cannot write the report: an object that is not a vmerge report "
                + "is there (use -y to replace it)\n")
        XCTAssertEqual(
            try s3.keys(bucket: "report-rule").filter { !$0.hasPrefix("in/") }, ["notes.json"], "no work done")
        XCTAssertEqual(try s3.object(bucket: "report-rule", key: "notes.json"), Data("their notes".utf8))
        // A failed run (an object that is not there) publishes its report on its own.
        let failed = try vmerge([
            "s3://report-rule/in/nothing.mov", "-o", "s3://report-rule/a.mp4", "--report", "s3://report-rule/a.json",
        ])
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertEqual(try report("report-rule", "a.json")["status"] as? String, "failed")
        // The next run replaces that report (it is vmerge's), now beside its video.
        let made = try vmerge([
            "s3://report-rule/in/", "-o", "s3://report-rule/a.mp4", "--report", "s3://report-rule/a.json",
        ])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(try report("report-rule", "a.json")["status"] as? String, "ok")
        // -y replaces what it looked at.
        let replaced = try vmerge([
            "s3://report-rule/in/", "-o", "s3://report-rule/a.mp4", "--report", "s3://report-rule/notes.json", "-y",
        ])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertNotNil(try report("report-rule", "notes.json")["status"])
        // A local video's report in a bucket is written after the run, once, naming what it deleted.
        let folder = try makeScratchDirectory()
        let local = try VMergeBinary.run(
            [
                "s3://report-rule/in/", "-o", "local.mp4", "--report", "s3://report-rule/local.json",
                "--delete-sources",
            ], in: folder,
            environment: environment)
        XCTAssertEqual(local.status, 0, local.stderr)
        XCTAssertEqual(try s3.requests().filter { $0.method == "PUT" && $0.path.hasSuffix("/local.json") }.count, 1)
        XCTAssertEqual((try report("report-rule", "local.json")["deleted_sources"] as? [String])?.count, 2)
        XCTAssertEqual(
            (try report("report-rule", "local.json")["output"] as? [String: Any])?["path"] as? String, "local.mp4")
    }

    func testAReportNamedAtAURLItCannotBeIsAUsageError() throws {
        for (word, shown) in [
            ("https://example.com/r.json?X-Amz-Signature=secret", "https://example.com/r.json?…"),
            ("s3://report-bad/runs/", "s3://report-bad/runs/"),
        ] {
            let run = try vmerge(["s3://report-bad/in/", "-o", "out.mp4", "--report", word])
            XCTAssertEqual(run.status, 2, run.stderr)
            XCTAssertTrue(run.stderr.contains("'--report \(shown)': a report is written to a local file"), run.stderr)
            XCTAssertFalse(run.stderr.contains("secret"))
        }
        // The report may not be the output object.
        let clash = try vmerge([
            "s3://report-bad/in/", "-o", "s3://report-bad/o.mp4", "--report", "s3://report-bad/o.mp4",
        ])
        XCTAssertEqual(clash.status, 2, clash.stderr)
        XCTAssertTrue(clash.stderr.contains("the report would overwrite the output video"), clash.stderr)
    }
}
