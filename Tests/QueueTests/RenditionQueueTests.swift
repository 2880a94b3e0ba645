import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeQueue

/// A queued job's renditions: kept in its spec as the command line writes them, made by the
/// worker that runs it, beside its output.
final class RenditionQueueTests: WorkerTestCase {
    func testAQueuedJobsRenditionsAreMadeByAWorker() throws {
        var job = shortJob("trip", seconds: 1)
        job["renditions"] = ["1x1-720:crf=30", "4x3-480=web.mp4"]
        try add(try jobList([job]))
        let spec = try PGConnection(database).execute("SELECT spec FROM vmerge.jobs WHERE id = 1").value(0, 0) ?? ""
        XCTAssertTrue(spec.contains(#""renditions": ["1x1-720:crf=30", "4x3-480=web.mp4"]"#), spec)
        let worker = vmerge(["worker", "--db", database, "--once", "--poll-interval", "0.2"])
        XCTAssertEqual(worker.status, 0, worker.stderr)
        XCTAssertEqual(row(1)?.state, "done")
        for (file, width) in [("trip.mp4", 320), ("trip-1x1-720.mp4", 720), ("web.mp4", 640)] {
            let video = try MediaInspector(path: out.appendingPathComponent(file).path).streams().video
            XCTAssertEqual(video?.width, width, file)
        }
        var bad = shortJob("bad", seconds: 1)
        bad["renditions"] = ["1x1-720=../escape.mp4"]
        let refused = vmerge([
            "queue", "add", "--db", database, "--out", out.path, try jobList([bad], name: "bad.jsonl"),
        ])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("its file is a name in the output's folder"), refused.stderr)
    }
}
