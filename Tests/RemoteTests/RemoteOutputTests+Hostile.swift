import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeRemote

/// What a hostile tester found in the object-storage doors, each now held: a poster never takes
/// an input's place, another spelling of a name is the same job, a batch's outputs are not its
/// inputs, a lost answer is not a failure, a stop is a cancellation that cleans up, a missing
/// bucket is said before any work, and -y replaces only what was looked at.
extension RemoteOutputTests {
    func testAPosterNamedAsAnInputObjectIsRefusedAndTheInputKept() throws {
        try upload("hostile-poster")
        let clip = Fixtures.url("a_")
        try s3.put(bucket: "hostile-poster", key: "out/poster.jpg", bytes: Data(contentsOf: clip))
        let run = try vmerge([
            "s3://hostile-poster/out/poster.jpg", "s3://hostile-poster/in/" + clip.lastPathComponent, "-o",
            "s3://hostile-poster/out/trip.mp4", "--poster", "poster.jpg", "-y",
        ])
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertTrue(run.stderr.contains("s3://hostile-poster/out/poster.jpg: output is also an input"), run.stderr)
        XCTAssertEqual(try s3.object(bucket: "hostile-poster", key: "out/poster.jpg"), try Data(contentsOf: clip))
    }

    func testAnotherSpellingOfTheInputsIsTheSameJobAfterItsSourcesWereDeleted() throws {
        try upload("hostile-names")
        let arguments = ["-o", "s3://hostile-names/trip.mp4", "--delete-sources"]
        XCTAssertEqual(try vmerge(["s3://hostile-names/in/"] + arguments).status, 0)
        let made = try s3.object(bucket: "hostile-names", key: "trip.mp4")
        let first = Fixtures.url("a_")
        try s3.put(bucket: "hostile-names", key: "in/" + first.lastPathComponent, bytes: Data(contentsOf: first))
        let again = try vmerge(["s3://hostile-names//in/"] + arguments + ["-y"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("so it is not made again"), again.stderr)
        XCTAssertEqual(try s3.object(bucket: "hostile-names", key: "trip.mp4"), made)
    }

    func testABatchRefusesAnOutputObjectThatIsAnotherJobsInput() throws {
        try upload("hostile-batch")
        let clip = "s3://hostile-batch/in/" + Fixtures.url("a_").lastPathComponent
        let other = "s3://hostile-batch/in/" + Fixtures.url("b_").lastPathComponent
        let folder = try makeScratchDirectory()
        let list = folder.appendingPathComponent("jobs.jsonl")
        try Data(
            """
            {"name": "one", "inputs": ["\(clip)"], "output": "\(other.replacingOccurrences(of: ".mov", with: ".mp4"))"}
            {"name": "two", "inputs": ["s3://hostile-batch/in/"], "output": "s3://hostile-batch/in/two.mp4"}

            """.utf8
        ).write(to: list)
        let run = try VMergeBinary.run(
            ["batch", list.path, "--allow-remote", "s3://hostile-batch/", "-y"], in: folder, environment: environment)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("is an input of job two"), run.stderr)
        XCTAssertEqual(try s3.keys(bucket: "hostile-batch").filter { !$0.hasPrefix("in/") || $0.hasSuffix(".mp4") }, [])
    }

    func testAnUploadWhoseAnswerWasLostIsTheRunsOwn() throws {
        try upload("hostile-lost")
        try s3.inject([.dropAnswer(key: "hostile-lost/trip.mp4"), .dropAnswer(key: "hostile-lost/trip.json")])
        let run = try vmerge([
            "s3://hostile-lost/in/", "-o", "s3://hostile-lost/trip.mp4", "--poster", "trip.jpg", "--report",
            "s3://hostile-lost/trip.json",
        ])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            try s3.keys(bucket: "hostile-lost").filter { !$0.hasPrefix("in/") }, ["trip.jpg", "trip.json", "trip.mp4"])
        let report = try self.report("hostile-lost", "trip.json")
        XCTAssertEqual(report["status"] as? String, "ok")
        // Each was stored, its answer lost, and its retry refused (412): the object was the run's own.
        for key in ["trip.mp4", "trip.json"] {
            let puts = try s3.requests().filter { $0.method == "PUT" && $0.path == "/hostile-lost/" + key }
            XCTAssertEqual(puts.map(\.status), [200, 412], key)
        }
    }

    func testAStopDuringTheUploadIsACancellationThatTakesThePosterBack() throws {
        try upload("hostile-stop")
        try s3.inject([.status(503, method: "PUT", key: "hostile-stop/trip.mp4", times: 50)])
        let arguments = [
            "s3://hostile-stop/in/", "-o", "s3://hostile-stop/trip.mp4", "--poster", "trip.jpg", "--report",
            "s3://hostile-stop/trip.json",
        ]
        let s3 = self.s3!
        let run = try VMergeBinary.run(arguments, in: makeScratchDirectory(), environment: environment) { process in
            // Stopped once the video's upload is being refused (the server asks it to slow down).
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline,
                !((try? s3.requests()) ?? []).contains(where: { $0.method == "PUT" && $0.path.hasSuffix("/trip.mp4") })
            {
                usleep(50_000)
            }
            kill(process.processIdentifier, SIGINT)
        }
        XCTAssertEqual(run.status, 130, run.stderr)
        XCTAssertEqual(try s3.keys(bucket: "hostile-stop").filter { !$0.hasPrefix("in/") }, ["trip.json"])
        XCTAssertEqual(try self.report("hostile-stop", "trip.json")["status"] as? String, "cancelled")
    }

    func testAMissingBucketForTheOutputOrTheReportIsSaidBeforeAnyWork() throws {
        try upload("hostile-nobucket")
        let output = try vmerge(["s3://hostile-nobucket/in/", "-o", "s3://hostile-gone/trip.mp4"])
        XCTAssertEqual(output.status, 1, output.stderr)
        XCTAssertEqual(output.stderr, "vmerge: s3://hostile-gone/trip.mp4: no such bucket\n")
        let report = try vmerge([
            "s3://hostile-nobucket/in/", "-o", "s3://hostile-nobucket/trip.mp4", "--report", "s3://hostile-gone/r.json",
        ])
        XCTAssertEqual(report.status, 1, report.stderr)
        XCTAssertEqual(report.stderr, "vmerge: s3://hostile-gone/r.json: cannot write the report: no such bucket\n")
        XCTAssertFalse(try s3.keys(bucket: "hostile-nobucket").contains("trip.mp4"), "no work was done")
    }

    /// With -y a report replaces only the object that was there when the run began.
    func testAReportWithYesReplacesOnlyWhatItLookedAt() throws {
        try s3.createBucket("hostile-report")
        let connector = RemoteConnector(environment: environment)
        let address = S3Address(bucket: "hostile-report", key: "r.json")
        let report = try RemoteReport(address, connector: connector, overwrite: true)
        try s3.put(bucket: "hostile-report", key: "r.json", bytes: Data("planted meanwhile".utf8))
        XCTAssertThrowsError(try report.write("{}\n")) { error in
            XCTAssertTrue("\(error)".contains("was put there while the job ran; not replaced"), "\(error)")
        }
        XCTAssertEqual(try s3.object(bucket: "hostile-report", key: "r.json"), Data("planted meanwhile".utf8))
        // What was there when it began is its to replace with -y.
        let looked = try RemoteReport(address, connector: connector, overwrite: true)
        try looked.write("{\"status\": \"ok\"}\n")
        XCTAssertEqual(try s3.object(bucket: "hostile-report", key: "r.json"), Data("{\"status\": \"ok\"}\n".utf8))
    }
}
