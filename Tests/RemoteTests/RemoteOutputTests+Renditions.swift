import Foundation
import TestSupport
import XCTest

/// `--rendition` with `-o s3://…`: each rendition an object beside the video, uploaded before it
/// with the poster, each recording its own key; a job's own objects are its to make again, nobody
/// else's is replaced.
extension RemoteOutputTests {
    private static let renditions = ["--rendition", "360x640", "--rendition", "240x240:fit=blur=square.mp4"]

    func testRenditionsOfAnObjectAreUploadedBesideItBeforeTheVideo() throws {
        try upload("out-renditions")
        let dir = try makeScratchDirectory()
        let arguments =
            ["s3://out-renditions/in/", "-o", "s3://out-renditions/trip/day.mp4", "--poster", "day.jpg"]
            + Self.renditions
        let run = try VMergeBinary.run(arguments + ["--report", "r.json"], in: dir, environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            try s3.keys(bucket: "out-renditions").filter { !$0.hasPrefix("in/") },
            ["trip/day-360x640.mp4", "trip/day.jpg", "trip/day.mp4", "trip/square.mp4"])
        // The renditions and the poster first, the video last: a run stopped on the way leaves no
        // video whose renditions are missing.
        var puts: [String] = []
        for request in try s3.requests() where request.method == "PUT" && puts.last != request.path {
            puts.append(request.path)
        }
        XCTAssertEqual(
            puts,
            [
                "/out-renditions/trip/day-360x640.mp4", "/out-renditions/trip/square.mp4",
                "/out-renditions/trip/day.jpg",
                "/out-renditions/trip/day.mp4",
            ])
        let report = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json"))) as? [String: Any]
        )
        let outputs = try XCTUnwrap(report["outputs"] as? [[String: Any]])
        XCTAssertEqual(
            outputs.map { $0["path"] as? String },
            [
                "s3://out-renditions/trip/day.mp4", "s3://out-renditions/trip/day-360x640.mp4",
                "s3://out-renditions/trip/square.mp4",
            ])
        var frames: [Int] = []
        for (entry, (key, width, height)) in zip(
            outputs, [("trip/day.mp4", 320, 240), ("trip/day-360x640.mp4", 360, 640), ("trip/square.mp4", 240, 240)])
        {
            let bytes = try XCTUnwrap(try s3.object(bucket: "out-renditions", key: key))
            XCTAssertEqual(entry["bytes"] as? Int, bytes.count, key)
            let file = temporary.appendingPathComponent("check-" + key.replacingOccurrences(of: "/", with: "-"))
            try bytes.write(to: file)
            XCTAssertEqual(try topLevelBoxes(file.path).prefix(2), ["ftyp", "moov"], key)
            let inspector = MediaInspector(path: file.path)
            let video = try XCTUnwrap(try inspector.streams().video, key)
            XCTAssertEqual([video.width, video.height], [width, height], key)
            frames.append(try inspector.packetLayout().filter(\.isVideo).count)
        }
        XCTAssertEqual(Set(frames).count, 1, "one timeline in every object: \(frames)")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { !$0.hasPrefix("check-") },
            [], "nothing staged is left")

        // Each object records its key: the same job again uploads nothing.
        try s3.clearRequests()
        let again = try VMergeBinary.run(arguments, in: dir, environment: environment)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("up to date"), again.stderr)
        XCTAssertEqual(try s3.requests().filter { $0.method == "PUT" || $0.method == "POST" }.count, 0)

        // A rendition someone deleted is the job's to make again, its own objects with it.
        try s3.delete(bucket: "out-renditions", key: "trip/square.mp4")
        let remade = try VMergeBinary.run(arguments, in: dir, environment: environment)
        XCTAssertEqual(remade.status, 0, remade.stderr)
        XCTAssertEqual(
            try s3.keys(bucket: "out-renditions").filter { !$0.hasPrefix("in/") },
            ["trip/day-360x640.mp4", "trip/day.jpg", "trip/day.mp4", "trip/square.mp4"])
        let done = try VMergeBinary.run(arguments, in: dir, environment: environment)
        XCTAssertTrue(done.stderr.contains("up to date"), done.stderr)
    }

    func testARenditionsObjectIsNeverAnotherOnesAndAKilledRunsIsItsOwn() throws {
        try upload("out-rendition-names")
        // Someone else's object under a rendition's name: refused, kept, and no video uploaded.
        try s3.put(bucket: "out-rendition-names", key: "theirs-360x640.mp4", bytes: Data("someone's".utf8))
        let refused = try vmerge(
            ["s3://out-rendition-names/in/", "-o", "s3://out-rendition-names/theirs.mp4"] + Self.renditions)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(
            refused.stderr, "vmerge: s3://out-rendition-names/theirs-360x640.mp4: output exists (use -y to overwrite)\n"
        )
        XCTAssertEqual(
            try s3.keys(bucket: "out-rendition-names").filter { !$0.hasPrefix("in/") }, ["theirs-360x640.mp4"])
        XCTAssertEqual(
            try s3.object(bucket: "out-rendition-names", key: "theirs-360x640.mp4"), Data("someone's".utf8))

        // A run killed after its renditions went up, before its video: the next run takes them
        // as its own and publishes the set.
        var environment = self.environment
        environment["VMERGE_TEST_KILL_AT"] = "after-companions"
        let arguments = ["s3://out-rendition-names/in/", "-o", "s3://out-rendition-names/trip.mp4"] + Self.renditions
        let killed = try VMergeBinary.run(arguments, in: makeScratchDirectory(), environment: environment)
        XCTAssertEqual(killed.status, SIGKILL, killed.stderr)
        XCTAssertEqual(
            try s3.keys(bucket: "out-rendition-names").filter { $0.hasPrefix("trip") || $0.hasPrefix("square") },
            ["square.mp4", "trip-360x640.mp4"])
        let again = try vmerge(arguments)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(
            try s3.keys(bucket: "out-rendition-names").filter { $0.hasPrefix("trip") || $0.hasPrefix("square") },
            ["square.mp4", "trip-360x640.mp4", "trip.mp4"])
        // A rendition beside an object may not be an input either, -y or not.
        let clip = Fixtures.url("a_").lastPathComponent
        let input = try vmerge(
            [
                "s3://out-rendition-names/in/", "-o", "s3://out-rendition-names/in/x.mp4", "--rendition",
                "360x640=" + clip, "-y",
            ])
        XCTAssertNotEqual(input.status, 0, input.stderr)
        XCTAssertTrue(
            input.stderr.contains("s3://out-rendition-names/in/\(clip): output is also an input"), input.stderr)
        XCTAssertEqual(
            try s3.object(bucket: "out-rendition-names", key: "in/" + clip), try Data(contentsOf: Fixtures.url("a_")))
    }

    /// --delete-sources reads back every file the objects were uploaded from, the renditions' too
    /// (staged beside the video): the sources go once the shortest holds all of them.
    func testDeletingSourcesIntoAnObjectWithRenditionsReadsBackEveryFile() throws {
        try upload("out-rendition-delete")
        let run = try vmerge(
            ["s3://out-rendition-delete/in/", "-o", "s3://out-rendition-delete/trip.mp4", "--delete-sources"]
                + Self.renditions)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            try s3.keys(bucket: "out-rendition-delete"), ["square.mp4", "trip-360x640.mp4", "trip.mp4"], run.stderr)
        XCTAssertEqual(run.stderrLines.filter { $0.contains(": deleted (--delete-sources") }.count, 2, run.stderr)
    }
}
