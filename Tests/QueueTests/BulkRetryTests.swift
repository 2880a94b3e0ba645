import Foundation
import XCTest

@testable import VMergeQueue

/// Retrying every failed job a filter matches: from the command line (`queue retry --state
/// failed --name TEXT`, listed first with `queue status --state ... --name ... --limit`) and from
/// the page (a form with the count, behind a box to tick), each said in the jobs' logs.
final class BulkRetryTests: DashboardTestCase {
    func testFailedJobsAreRetriedByFilterFromTheCommandLineAndThePage() throws {
        try addJobs(["alpha-1", "alpha-2", "beta-1", "kept"])
        try sql("UPDATE vmerge.jobs SET state = 'failed', finished_at = now() WHERE name <> 'kept'")
        let listed = vmerge(["queue", "status", "--db", database, "--state", "failed", "--name", "ALPHA", "--json"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let status = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(
            (status["jobs"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, ["alpha-2", "alpha-1"])
        XCTAssertEqual(
            vmerge(["queue", "status", "--db", database, "--limit", "1"]).stdout.components(separatedBy: "\n").count,
            1 + 2 + 1, "the counts, a header and one job")
        let retried = vmerge(["queue", "retry", "--db", database, "--state", "failed", "--name", "alpha"])
        XCTAssertEqual(retried.status, 0, retried.stderr)
        XCTAssertEqual(retried.stdout, "queued 1 alpha-1\nqueued 2 alpha-2\n2 failed jobs queued again\n")
        XCTAssertEqual(
            vmerge(["queue", "retry", "--db", database, "--state", "running"]).status, 2, "only failed or cancelled")
        // The page's form: refused unticked, then done for what its name matches.
        try Data("dashboard-token-0123456789".utf8).write(to: folder.appendingPathComponent("token"))
        let (_, port) = try startDashboard(["--token-file", folder.appendingPathComponent("token").path])
        let headers = [
            "Authorization: Bearer dashboard-token-0123456789", "Content-Type: application/x-www-form-urlencoded",
        ]
        let unticked = try RawHTTP(port: port).request(
            "POST", "/queue/retry-failed", headers: headers, body: "name=beta")
        XCTAssertEqual(unticked.status, 400, unticked.text)
        let done = try RawHTTP(port: port).request(
            "POST", "/queue/retry-failed", headers: headers, body: "confirm=yes&name=beta")
        XCTAssertEqual(done.status, 200, done.text)
        XCTAssertEqual(done.text, "1 failed job is queued again\n")
        XCTAssertEqual(try value("SELECT count(*) FROM vmerge.jobs WHERE state = 'failed'"), "0")
        let log = try XCTUnwrap(try value("SELECT log FROM vmerge.jobs WHERE name = 'beta-1'"))
        XCTAssertTrue(log.hasSuffix("dashboard (token): queued again (all failed jobs named like beta)"), log)
    }
}

extension BulkRetryTests {
    /// "failed, 24 h" and the hourly chart count the failures that happened (each failed attempt,
    /// retried since or not), not the jobs that are failed now.
    func testFailuresThatHappenedAreCountedNotJobsThatAreFailedNow() throws {
        let list = folder.appendingPathComponent("bad.jsonl")
        let job: [String: Any] = ["name": "bad", "inputs": [fixture("bad_text.mov")], "output": "bad.mp4"]
        try JSONSerialization.data(withJSONObject: job).write(to: list)
        XCTAssertEqual(vmerge(["queue", "add", "--db", database, "--out", folder.path, list.path]).status, 0)
        for _ in 0..<2 {
            let worker = vmerge(["worker", "--db", database, "--name", "w1", "--once", "--poll-interval", "0.2"])
            XCTAssertEqual(worker.status, 1, worker.stderr)
            XCTAssertEqual(vmerge(["queue", "retry", "--db", database, "--state", "failed"]).status, 0)
        }
        // Queued again now: no job is failed, and two attempts failed.
        XCTAssertEqual(try value("SELECT state FROM vmerge.jobs"), "queued")
        let snapshot = try JobQueue(connecting: database).snapshot()
        XCTAssertEqual(snapshot.finishedByWorker["w1"], QueueSnapshot.Finished(done: 0, failed: 2))
        XCTAssertEqual(snapshot.throughput.hourly.last?.failed, 2)
    }
}
