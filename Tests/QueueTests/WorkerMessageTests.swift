import Foundation
import TestSupport
import XCTest

/// What a worker says about its jobs: each job's warnings name the job, as its log lines do, so
/// two jobs at once (-j 2) can be told apart; with -q the worker's own problems stay and a
/// job's notes and warnings go, as a merge's -q does.
final class WorkerMessageTests: WorkerTestCase {
    func testAJobsWarningsNameTheJob() throws {
        // --poster-at without --poster: a warning that names no file.
        try add(try jobList([shortJob("w1", seconds: 0.5)]), ["--poster-at", "0.2"])
        let worker = try startWorker("speaker", ["--once"])
        XCTAssertEqual(worker.waitForExit(seconds: 60), 0, worker.log)
        let lines = worker.log.split(separator: "\n").map(String.init)
        let warning = try XCTUnwrap(lines.first { $0.contains("--poster-at is given without --poster") }, worker.log)
        XCTAssertTrue(
            warning.hasPrefix("vmerge: worker: job ") && warning.contains(" w1: --poster-at is given"), warning)
        XCTAssertEqual(counts(), [.done: 1])

        try add(try jobList([shortJob("w2", seconds: 0.5)], name: "more.jsonl"), ["--poster-at", "0.2"])
        let quiet = try startWorker("hush", ["--once", "-q"])
        XCTAssertEqual(quiet.waitForExit(seconds: 60), 0, quiet.log)
        XCTAssertFalse(quiet.log.contains("--poster-at"), quiet.log)
    }
}
