import Foundation
import TestSupport
import VMerge
import VMergeCore
import XCTest

@testable import VMergeRemote

/// `vmerge ... -o s3://bucket/key.mp4`: the set uploaded poster first and video last, faststart,
/// never over an object it did not look at, a re-run a no-op, nothing staged left behind.
final class RemoteOutputTests: S3TestCase {
    var temporary: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        temporary = try makeTemporaryFolder("vmerge-remote-tmp")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporary)
        try super.tearDownWithError()
    }

    var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey,
            "AWS_ENDPOINT_URL": s3.endpoint.absoluteString,
            "AWS_REGION": s3.region, "TMPDIR": temporary.path,
        ]
    }

    func upload(_ bucket: String) throws {
        try s3.createBucket(bucket)
        for clip in ["a_", "b_"] {
            try s3.put(
                bucket: bucket, key: "in/" + Fixtures.url(clip).lastPathComponent,
                bytes: Data(contentsOf: Fixtures.url(clip)))
        }
    }

    func vmerge(_ arguments: [String]) throws -> RunResult {
        try VMergeBinary.run(arguments, in: makeScratchDirectory(), environment: environment)
    }

    func testABucketToBucketMergePublishesThePosterThenTheVideoFaststart() throws {
        try upload("out-set")
        let run = try vmerge(["s3://out-set/in/", "-o", "s3://out-set/trip/day.mp4", "--poster", "day.jpg"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("vmerge: wrote s3://out-set/trip/day.mp4 (2 clips"), run.stderr)
        let video = try XCTUnwrap(try s3.object(bucket: "out-set", key: "trip/day.mp4"))
        let file = temporary.appendingPathComponent("check.mp4")
        try video.write(to: file)
        XCTAssertEqual(try topLevelBoxes(file.path).prefix(2), ["ftyp", "moov"])
        let poster = try XCTUnwrap(try s3.object(bucket: "out-set", key: "trip/day.jpg"))
        XCTAssertEqual(Array(poster.prefix(2)), [0xFF, 0xD8])
        let puts = try s3.requests().filter { $0.method == "PUT" }.map(\.path)
        XCTAssertEqual(puts, ["/out-set/trip/day.jpg", "/out-set/trip/day.mp4"])
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0 != "check.mp4" }, [],
            "nothing staged is left")
    }

    func testAnObjectIsNeverReplacedWithoutYesAndARerunIsANoOp() throws {
        try upload("out-exists")
        try s3.put(bucket: "out-exists", key: "theirs.mp4", bytes: Data("someone else's".utf8))
        let refused = try vmerge(["s3://out-exists/in/", "-o", "s3://out-exists/theirs.mp4"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "vmerge: s3://out-exists/theirs.mp4: output exists (use -y to overwrite)\n")
        XCTAssertEqual(try s3.object(bucket: "out-exists", key: "theirs.mp4"), Data("someone else's".utf8))
        XCTAssertEqual(try vmerge(["s3://out-exists/in/", "-o", "s3://out-exists/ours.mp4"]).status, 0)
        try s3.clearRequests()
        let again = try vmerge(["s3://out-exists/in/", "-o", "s3://out-exists/ours.mp4"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("up to date"), again.stderr)
        XCTAssertEqual(try s3.requests().filter { $0.method == "PUT" || $0.method == "POST" }.count, 0)
        let replaced = try vmerge(["s3://out-exists/in/", "-o", "s3://out-exists/theirs.mp4", "-y"])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertNotEqual(try s3.object(bucket: "out-exists", key: "theirs.mp4"), Data("someone else's".utf8))
    }

    func testAFailedVideoUploadTakesItsPosterBackAndSaysWhy() throws {
        try upload("out-fails")
        try s3.inject([.status(500, method: "PUT", key: "out-fails/trip.mp4", times: 50)])
        let run = try vmerge(["s3://out-fails/in/", "-o", "s3://out-fails/trip.mp4", "--poster", "trip.jpg"])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr, "vmerge: s3://out-fails/trip.mp4: the server failed (HTTP 500, InternalError)\n")
        XCTAssertEqual(try s3.keys(bucket: "out-fails").filter { !$0.hasPrefix("in/") }, [])
    }

    func testAnObjectIsNeverBothInputAndOutput() throws {
        try upload("out-same")
        let key = "in/" + Fixtures.url("a_").lastPathComponent
        let same = try vmerge(["s3://out-same/" + key, "-o", "s3://out-same/" + key, "-y"])
        XCTAssertEqual(same.status, 2, same.stderr)
        XCTAssertTrue(same.stderr.contains("output is also an input"), same.stderr)
        // An output under the input prefix: the second run finds it among the inputs, and refuses.
        XCTAssertEqual(try vmerge(["s3://out-same/in/", "-o", "s3://out-same/in/merged.mp4"]).status, 0)
        let again = try vmerge(["s3://out-same/in/", "-o", "s3://out-same/in/merged.mp4", "-y"])
        XCTAssertNotEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("s3://out-same/in/merged.mp4: output is also an input"), again.stderr)
        XCTAssertEqual(try s3.object(bucket: "out-same", key: key), try Data(contentsOf: Fixtures.url("a_")))
    }

    func testAPosterLeftByAKilledRunOfTheJobIsItsOwnToReplace() throws {
        try upload("out-poster")
        var environment = self.environment
        environment["VMERGE_TEST_KILL_AT"] = "after-companions"
        let arguments = ["s3://out-poster/in/", "-o", "s3://out-poster/trip.mp4", "--poster", "trip.jpg"]
        let killed = try VMergeBinary.run(arguments, in: makeScratchDirectory(), environment: environment)
        XCTAssertEqual(killed.status, SIGKILL, killed.stderr)
        XCTAssertEqual(try s3.keys(bucket: "out-poster").filter { !$0.hasPrefix("in/") }, ["trip.jpg"])
        let again = try vmerge(arguments)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try s3.keys(bucket: "out-poster").filter { !$0.hasPrefix("in/") }, ["trip.jpg", "trip.mp4"])
        // Someone else's poster under the name is not replaced without -y.
        try s3.put(bucket: "out-poster", key: "other.jpg", bytes: Data("theirs".utf8))
        let refused = try vmerge(["s3://out-poster/in/", "-o", "s3://out-poster/other.mp4", "--poster", "other.jpg"])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(try s3.object(bucket: "out-poster", key: "other.jpg"), Data("theirs".utf8))
        XCTAssertFalse(try s3.keys(bucket: "out-poster").contains("other.mp4"))
    }

    func testDeletingSourcesAcrossABucketDeletesWhatTheObjectHoldsAndARerunNeverRemakesIt() throws {
        try upload("out-delete")
        let arguments = ["s3://out-delete/in/", "-o", "s3://out-delete/trip.mp4", "--delete-sources"]
        let run = try vmerge(arguments)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try s3.keys(bucket: "out-delete"), ["trip.mp4"])
        for clip in ["a_", "b_"] {
            let name = "s3://out-delete/in/" + Fixtures.url(clip).lastPathComponent
            XCTAssertTrue(
                run.stderrLines.contains("vmerge: \(name): deleted (--delete-sources: the output holds all of it)"),
                run.stderr)
        }
        // Each DELETE is conditional on the object read (its ETag), after a HEAD.
        let deletes = try s3.requests().filter { $0.method == "DELETE" }
        XCTAssertEqual(deletes.count, 2)
        XCTAssertTrue(deletes.allSatisfy { $0.ifMatch?.isEmpty == false && $0.status == 204 }, "\(deletes)")
        let made = try XCTUnwrap(try s3.object(bucket: "out-delete", key: "trip.mp4"))
        // The object is the only copy now: a re-run (even -y, with one input put back) keeps it.
        let first = Fixtures.url("a_")
        try s3.put(bucket: "out-delete", key: "in/" + first.lastPathComponent, bytes: Data(contentsOf: first))
        let again = try vmerge(arguments + ["-y"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("so it is not made again"), again.stderr)
        XCTAssertEqual(try s3.object(bucket: "out-delete", key: "trip.mp4"), made)
        XCTAssertEqual(try s3.keys(bucket: "out-delete"), ["in/" + first.lastPathComponent, "trip.mp4"])
    }

    /// The Swift API takes s3:// (and https://) clips and an s3:// output as the command line does;
    /// with `allowedRemotePrefixes`, only under them.
    func testTheSwiftAPIMergesObjectsIntoAnObjectUnderItsPrefixesOnly() async throws {
        try upload("api-set")
        // The API reads credentials from the process's environment, as the AWS SDKs do.
        let saved = environment.keys.map { ($0, ProcessInfo.processInfo.environment[$0]) }
        for (name, value) in environment where name != "TMPDIR" { setenv(name, value, 1) }
        defer { for (name, value) in saved { if let value { setenv(name, value, 1) } else { unsetenv(name) } } }
        let clips = ["a_", "b_"].map {
            MergeJob.Clip(URL(string: "s3://api-set/in/" + Fixtures.url($0).lastPathComponent)!)
        }
        var job = MergeJob(clips: clips, output: URL(string: "s3://api-set/out/trip.mp4")!)
        job.allowedRemotePrefixes = [FileLocation(URL(string: "s3://api-set/in/")!)]
        job.reportFile = FileLocation(URL(string: "s3://api-set/in/trip.json")!)
        do {
            _ = try await MergeSession(job).run()
            XCTFail("wrote outside the allowed prefixes")
        } catch let error as MergeError {
            XCTAssertEqual(error.file, job.output, error.description)
            XCTAssertTrue(error.message.contains("is not under a prefix the operator allows"), error.message)
        }
        XCTAssertFalse(try s3.keys(bucket: "api-set").contains("out/trip.mp4"))
        XCTAssertEqual(try report("api-set", "in/trip.json")["status"] as? String, "failed")
        job.allowedRemotePrefixes?.append(FileLocation(URL(string: "s3://api-set/out/")!))
        let report = try await MergeSession(job).run()
        XCTAssertEqual(report.output?.file, job.output)
        XCTAssertEqual(report.output?.isWritten, true)
        XCTAssertEqual(report.clips.map(\.file), clips.map(\.file))
        XCTAssertNil(report.clips[0].file.fileSystemPath)
        XCTAssertEqual(report.clips[0].file.description, "s3://api-set/in/" + Fixtures.url("a_").lastPathComponent)
        let video = try XCTUnwrap(try s3.object(bucket: "api-set", key: "out/trip.mp4"))
        let file = temporary.appendingPathComponent("api.mp4")
        try video.write(to: file)
        XCTAssertEqual(try topLevelBoxes(file.path).prefix(2), ["ftyp", "moov"])
        XCTAssertEqual(try self.report("api-set", "in/trip.json")["status"] as? String, "ok")
    }

    /// A file made from objects that were then deleted is their only copy: its tag records each
    /// object (name, size, ETag), so a re-run never makes it again from what is left.
    func testAFileMadeFromDeletedObjectsIsNeverRemadeFromWhatIsLeft() throws {
        try upload("file-delete")
        let folder = try makeScratchDirectory()
        let arguments = ["s3://file-delete/in/", "-o", "trip.mp4", "--delete-sources"]
        let run = try VMergeBinary.run(arguments, in: folder, environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try s3.keys(bucket: "file-delete"), [])
        let made = try Data(contentsOf: folder.appendingPathComponent("trip.mp4"))
        let first = Fixtures.url("a_")
        try s3.put(bucket: "file-delete", key: "in/" + first.lastPathComponent, bytes: Data(contentsOf: first))
        let again = try VMergeBinary.run(arguments + ["-y"], in: folder, environment: environment)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("it is the only copy of them"), again.stderr)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("trip.mp4")), made)
        // The one put back is the very object the file holds (same size and ETag): it goes.
        XCTAssertEqual(try s3.keys(bucket: "file-delete"), [], again.stderr)
    }

    func testAnObjectReplacedAfterItWasReadIsNotDeleted() throws {
        try upload("delete-changed")
        let name = "s3://delete-changed/in/" + Fixtures.url("a_").lastPathComponent
        let connector = RemoteConnector(environment: environment)
        let inputs = RemoteInputs(connector: connector)
        _ = try inputs.resolve([JobInput(FileName(name))])
        // Someone puts a newer recording under the name after the job read it.
        try s3.put(
            bucket: "delete-changed", key: "in/" + Fixtures.url("a_").lastPathComponent, bytes: Data("newer".utf8))
        let reason = try XCTUnwrap(connector.deleteObject(named: name, version: inputs.version(named: name)))
        XCTAssertTrue(reason.contains("not the object that was merged"), reason)
        XCTAssertEqual(
            try s3.object(bucket: "delete-changed", key: "in/" + Fixtures.url("a_").lastPathComponent),
            Data("newer".utf8))
        // The one that is still the object read goes.
        let other = "s3://delete-changed/in/" + Fixtures.url("b_").lastPathComponent
        _ = try inputs.resolve([JobInput(FileName(other))])
        XCTAssertNil(connector.deleteObject(named: other, version: inputs.version(named: other)))
        XCTAssertNil(try s3.object(bucket: "delete-changed", key: "in/" + Fixtures.url("b_").lastPathComponent))
    }

    func testAnUploadKilledMidwayLeavesNoObjectAndTheNextRunCleansUpAndPublishes() throws {
        try s3.createBucket("out-killed")
        let folder = try makeScratchDirectory()
        // Big enough to go up in two parts of 5 MiB: lossless, from a noisy picture.
        try runFFmpeg(
            [
                "-f", "lavfi", "-i", "testsrc2=size=640x480:rate=30:duration=3,noise=alls=60:allf=t", "-f", "lavfi",
                "-i",
                "sine=duration=3", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "18", "-c:a", "aac", "-shortest",
                "noisy.mov",
            ], in: folder)
        let arguments = ["noisy.mov", "-o", "s3://out-killed/trip.mp4", "--crf", "0", "--min-duration", "0"]
        var environment = self.environment
        environment["VMERGE_TEST_UPLOAD_PART"] = String(5 << 20)
        environment["VMERGE_TEST_KILL_AT"] = "mid-upload"
        let killed = try VMergeBinary.run(arguments, in: folder, environment: environment)
        XCTAssertEqual(killed.status, SIGKILL, "killed by its signal: \(killed.stderr)")
        XCTAssertEqual(try s3.keys(bucket: "out-killed"), [], "no object is visible")
        XCTAssertEqual(try uploadsInProgress("out-killed"), 1, "the killed run's upload is left, unseen")
        XCTAssertEqual(listing(temporary).filter { $0.hasPrefix("vmerge-upload.") }.count, 1)
        environment["VMERGE_TEST_KILL_AT"] = nil
        let again = try VMergeBinary.run(arguments, in: folder, environment: environment)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try s3.keys(bucket: "out-killed"), ["trip.mp4"])
        XCTAssertGreaterThan(try XCTUnwrap(try s3.object(bucket: "out-killed", key: "trip.mp4")).count, 5 << 20)
        XCTAssertEqual(try uploadsInProgress("out-killed"), 0, "the next run aborted the killed one's upload")
        XCTAssertEqual(listing(temporary), [], "the killed run's staging folder is gone")
    }

    /// The README's own bucket-to-bucket line, word for word, with the keys in the environment
    /// as a person's shell would have them.
    func testTheReadmesBucketToBucketMergeRunsAsWritten() throws {
        let line = try XCTUnwrap(
            try Documentation.section("A first merge").split(separator: "\n").first { $0.hasPrefix("vmerge s3://") })
        let words = line.prefix { $0 != "#" }.split(separator: " ").map(String.init)
        let input = try XCTUnwrap(S3Address(words[1])), output = try XCTUnwrap(S3Address(words[3]))
        XCTAssertEqual(words[2], "-o")
        try? s3.createBucket(input.bucket)
        try? s3.createBucket(output.bucket)
        for clip in ["a_", "b_"] {
            try s3.put(
                bucket: input.bucket, key: input.key + Fixtures.url(clip).lastPathComponent,
                bytes: Data(contentsOf: Fixtures.url(clip)))
        }
        let run = try VMergeBinary.run(Array(words.dropFirst()), in: makeScratchDirectory(), environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try s3.keys(bucket: output.bucket), [output.key])
    }
}
