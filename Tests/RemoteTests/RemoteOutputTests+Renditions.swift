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

    /// With -y a rendition replaces only the object its name held when the job began: one put there
    /// while the job ran is kept, and the run fails naming it (nothing of the set is left).
    func testWithYesARenditionPutThereDuringTheRunIsNotReplaced() throws {
        try upload("out-rendition-yes")
        try s3.put(bucket: "out-rendition-yes", key: "y/square.mp4", bytes: Data("older".utf8))
        let run = try vmergePaused(
            [
                "s3://out-rendition-yes/in/", "-o", "s3://out-rendition-yes/y/trip.mp4", "-y", "--poster", "trip.jpg",
                "--rendition", "240x240=square.mp4",
            ]
        ) { try s3.put(bucket: "out-rendition-yes", key: "y/square.mp4", bytes: Data("newer".utf8)) }
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(
            run.stderr,
            "vmerge: s3://out-rendition-yes/y/square.mp4: output changed since it was looked at; not replaced\n")
        XCTAssertEqual(try s3.keys(bucket: "out-rendition-yes").filter { $0.hasPrefix("y/") }, ["y/square.mp4"])
        XCTAssertEqual(try s3.object(bucket: "out-rendition-yes", key: "y/square.mp4"), Data("newer".utf8))
    }

    /// A job made again because a rendition went missing: someone else's poster is found before
    /// anything is uploaded; the renditions there with their keys are left as they are (not
    /// uploaded again, so a failure cannot take them away); an upload that cannot be taken back is
    /// said.
    /// Every `method` request for `key` answered 500, with Retry-After: 0: what is left once the
    /// tries run out is the subject here, not how they are paced (17 s of backoff otherwise).
    static func failing(_ method: String, _ key: String) -> S3TestServer.Fault {
        var fault = S3TestServer.Fault.status(500, method: method, key: key, times: 50)
        fault.retryAfter = 0
        return fault
    }

    func testARemakeLeavesTheRenditionsThereAndSaysWhatItCouldNotTakeBack() throws {
        try upload("out-remake")
        let arguments =
            ["s3://out-remake/in/", "-o", "s3://out-remake/fp/t.mp4", "--poster", "t.jpg"] + Self.renditions
        XCTAssertEqual(try vmerge(arguments).status, 0)
        let tall = try XCTUnwrap(try s3.object(bucket: "out-remake", key: "fp/t-360x640.mp4"))
        try s3.delete(bucket: "out-remake", key: "fp/square.mp4")
        try s3.put(bucket: "out-remake", key: "fp/t.jpg", bytes: Data("theirs".utf8))
        try s3.clearRequests()
        let foreign = try vmerge(arguments)
        XCTAssertEqual(foreign.status, 1, foreign.stderr)
        XCTAssertEqual(foreign.stderr, "vmerge: s3://out-remake/fp/t.jpg: output exists (use -y to overwrite)\n")
        XCTAssertEqual(try s3.requests().filter { $0.method == "PUT" || $0.method == "POST" }.count, 0)
        XCTAssertEqual(try s3.object(bucket: "out-remake", key: "fp/t.jpg"), Data("theirs".utf8))

        // The poster gone, the missing rendition's upload fails: the rendition there stays.
        try s3.delete(bucket: "out-remake", key: "fp/t.jpg")
        try s3.inject([Self.failing("PUT", "out-remake/fp/square.mp4")])
        XCTAssertEqual(try vmerge(arguments).status, 1)
        XCTAssertEqual(try s3.object(bucket: "out-remake", key: "fp/t-360x640.mp4"), tall)
        try s3.clearFaults()
        try s3.clearRequests()
        let remade = try vmerge(arguments)
        XCTAssertEqual(remade.status, 0, remade.stderr)
        XCTAssertEqual(
            Set(try s3.requests().filter { $0.method == "PUT" }.map(\.path)),
            ["/out-remake/fp/square.mp4", "/out-remake/fp/t.jpg", "/out-remake/fp/t.mp4"])
        XCTAssertEqual(try s3.object(bucket: "out-remake", key: "fp/t-360x640.mp4"), tall)

        // The video's upload fails and the rendition uploaded for it cannot be deleted: said.
        try s3.inject([
            Self.failing("PUT", "out-remake/rb/t.mp4"), Self.failing("DELETE", "out-remake/rb/t-360x640.mp4"),
        ])
        let stuck = try vmerge(["s3://out-remake/in/", "-o", "s3://out-remake/rb/t.mp4", "--rendition", "360x640"])
        XCTAssertEqual(stuck.status, 1, stuck.stderr)
        XCTAssertEqual(
            stuck.stderr,
            "vmerge: s3://out-remake/rb/t.mp4: the server failed (HTTP 500, InternalError); uploaded for it and "
                + "not taken back: s3://out-remake/rb/t-360x640.mp4\n")
    }

    /// A key's "//" is kept: the renditions lie under the same prefix as the video and its poster,
    /// never in another one; a rendition's name that no object can have is the command's mistake.
    func testARenditionIsUnderTheOutputsOwnPrefixAsWritten() throws {
        try upload("out-slashes")
        let run = try vmerge(
            [
                "s3://out-slashes/in/", "-o", "s3://out-slashes/ip//t.mp4", "--poster", "p.jpg", "--rendition",
                "240x240=z.mp4",
            ])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            try s3.keys(bucket: "out-slashes").filter { !$0.hasPrefix("in/") }, ["ip//p.jpg", "ip//t.mp4", "ip//z.mp4"])
        let bad = try vmerge([
            "s3://out-slashes/in/", "-o", "s3://out-slashes/t.mp4", "--rendition", "240x240=..%2fx.mp4",
        ])
        XCTAssertEqual(bad.status, 2, bad.stderr)
        XCTAssertEqual(
            bad.stderr, "vmerge: s3://out-slashes/..%2fx.mp4: the 240x240 rendition is not a name an object can have\n")
    }

    /// Runs vmerge paused before it publishes its set: `atPause` runs while it waits.
    private func vmergePaused(_ arguments: [String], atPause: () throws -> Void) throws -> RunResult {
        let folder = try makeScratchDirectory()
        let pause = folder.appendingPathComponent("paused").path
        var environment = self.environment
        environment["VMERGE_TEST_PAUSE_AT"] = "before-publish"
        environment["VMERGE_TEST_PAUSE_FILE"] = pause
        nonisolated(unsafe) var result: Result<RunResult, any Error>?
        let lock = NSLock()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { [environment] in
            let ran = Result { try VMergeBinary.run(arguments, in: folder, environment: environment) }
            lock.withLock { result = ran }
            done.signal()
        }
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: pause), lock.withLock({ result == nil }), Date() < deadline {
            usleep(20_000)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: pause), "the run never paused")
        try atPause()
        try? FileManager.default.removeItem(atPath: pause)
        done.wait()
        return try lock.withLock { result! }.get()
    }
}
