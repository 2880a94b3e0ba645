import Foundation
import VMergeCore
import VMergeJobs
import XCTest

@testable import VMergeQueue

/// Claims, leases and their ends, against a real server. A worker that died is played by moving
/// its lease into the past.
final class ClaimTests: ServerTestCase {
    private var queue: JobQueue!
    private var sql: PGConnection!

    override func setUpWithError() throws {
        try super.setUpWithError()
        sql = try PGConnection(database)
        try QueueSchema.migrate(sql)
        queue = try JobQueue(connecting: database)
    }

    /// Adds `count` jobs (names j1, j2...); their ids.
    @discardableResult
    private func add(_ count: Int, maxAttempts: Int = 3) throws -> [Int64] {
        let jobs = (1...count).map {
            Job(name: "j\($0)", inputs: ["/in/\($0).mov"], output: FileName("/out/\($0).mp4"), options: MergeOptions())
        }
        return try queue.add(jobs, maxAttempts: maxAttempts).map(\.id)
    }

    private func row(_ id: Int64) throws -> (state: String?, attempts: String?, worker: String?, error: String?) {
        let result = try sql.execute(
            "SELECT state, attempts, worker, last_error FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"])
        return (result.value(0, 0), result.value(0, 1), result.value(0, 2), result.value(0, 3))
    }

    /// The worker holding `id` stopped: its lease is over.
    private func expireLease(_ id: Int64) throws {
        try sql.execute(
            "UPDATE vmerge.jobs SET lease_until = now() - interval '1 second' WHERE id = $1::bigint", ["\(id)"])
    }

    func testClaimsTakeTheOldestQueuedJobOnce() throws {
        XCTAssertNil(try queue.claim(worker: "w1"))
        let ids = try add(2)
        let first = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertEqual(first.id, ids[0])
        XCTAssertEqual(first.attempt, 1)
        XCTAssertEqual(first.maxAttempts, 3)
        XCTAssertEqual(try first.job().output, "/out/1.mp4")
        XCTAssertEqual(try row(ids[0]).state, "running")
        XCTAssertEqual(try row(ids[0]).worker, "w1")
        XCTAssertEqual(try queue.claim(worker: "w2")?.id, ids[1])
        XCTAssertNil(try queue.claim(worker: "w3"))
    }

    /// Workers on their own connections, all at once: every job is claimed by exactly one.
    func testConcurrentClaimsNeverShareAJob() throws {
        let ids = try add(12)
        let target = database!
        let claimed = Locked<[Int64]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            guard let queue = try? JobQueue(connecting: target) else { return }
            while let claim = try? queue.claim(worker: "w\(worker)") { claimed.update { $0.append(claim.id) } }
        }
        XCTAssertEqual(claimed.value.sorted(), ids)
    }

    func testHeartbeatRenewsTheLease() throws {
        try add(1)
        let claim = try XCTUnwrap(try queue.claim(worker: "w1", lease: 5))
        let before = try sql.execute("SELECT lease_until FROM vmerge.jobs").value(0, 0)
        XCTAssertEqual(try queue.heartbeat(claim, lease: 600), .renewed)
        let remaining = try sql.execute("SELECT extract(epoch FROM lease_until - now()) FROM vmerge.jobs").value(0, 0)
        XCTAssertGreaterThan(try XCTUnwrap(remaining.flatMap { Double($0) }), 500, "was \(before ?? "-")")
        XCTAssertTrue(try queue.complete(claim))
        XCTAssertEqual(try row(claim.id).state, "done")
        // Done: nothing more to renew.
        XCTAssertEqual(try queue.heartbeat(claim), .lost)
    }

    /// `queue cancel` on a running job: the worker learns it at its heartbeat. The attempt's end
    /// is still recorded, as what happened: a failure leaves the row cancelled (never retried)
    /// with its error and report; SIGTERM's put-back does not queue it again.
    func testACancelledJobIsNoticedAtTheHeartbeatAndItsFailureKept() throws {
        let id = try add(1)[0]
        let claim = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertEqual(try queue.cancel(id), .changed(name: "j1", was: .running))
        XCTAssertEqual(try queue.heartbeat(claim), .cancelled)
        XCTAssertFalse(try queue.release(claim))
        XCTAssertEqual(
            try queue.fail(claim, error: "x", retryable: true, report: #"{"status": "failed"}"#, log: ["w1: failed"]),
            .cancelled)
        XCTAssertEqual(try row(id).state, "cancelled")
        XCTAssertEqual(try row(id).error, "x")
        let kept = try sql.execute("SELECT report->>'status', log, finished_at IS NOT NULL FROM vmerge.jobs")
        XCTAssertEqual([kept.value(0, 0), kept.value(0, 1), kept.value(0, 2)], ["failed", "w1: failed", "t"])
    }

    /// A cancel that lands after the attempt published its output (the worker sees it only at its
    /// next heartbeat) does not hide the output: the job is recorded done. Once the cancelled job
    /// was retried, or claimed by another, the old claim records nothing.
    func testACancelAfterThePublishIsRecordedDone() throws {
        let ids = try add(2)
        let claim = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertEqual(try queue.cancel(ids[0]), .changed(name: "j1", was: .running))
        XCTAssertTrue(try queue.complete(claim, report: #"{"status": "ok"}"#, log: ["w1: done"]))
        XCTAssertEqual(try row(ids[0]).state, "done")
        XCTAssertEqual(try queue.cancel(ids[0]), .refused(name: "j1", state: .done))

        let second = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertEqual(try queue.cancel(ids[1]), .changed(name: "j2", was: .running))
        XCTAssertEqual(try queue.retry(ids[1]), .changed(name: "j2", was: .cancelled))
        XCTAssertFalse(try queue.complete(second))
        XCTAssertEqual(try queue.fail(second, error: "late", retryable: false), .lost)
        XCTAssertEqual(try row(ids[1]).state, "queued")
    }

    /// A lease that ran out is claimed again; the first claim can then do nothing with the job.
    func testALeaseThatRanOutIsTakenOver() throws {
        let id = try add(1)[0]
        let dead = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertNil(try queue.claim(worker: "w2"), "a live lease is not taken")
        try expireLease(id)
        let next = try XCTUnwrap(try queue.claim(worker: "w2"))
        XCTAssertEqual(next.id, id)
        XCTAssertEqual(next.attempt, 2)
        XCTAssertEqual(try queue.heartbeat(dead), .lost)
        XCTAssertFalse(try queue.complete(dead))
        XCTAssertEqual(try queue.fail(dead, error: "late", retryable: false), .lost)
        XCTAssertTrue(try queue.complete(next))
        XCTAssertEqual(try row(id).state, "done")
        XCTAssertEqual(try row(id).worker, "w2")
    }

    /// Even under the same worker name (a restarted worker), an older claim is not the newer one.
    func testTheSameWorkerReclaimingIsANewClaim() throws {
        let id = try add(1)[0]
        let old = try XCTUnwrap(try queue.claim(worker: "host-1"))
        XCTAssertEqual(try queue.cancel(id), .changed(name: "j1", was: .running))
        XCTAssertEqual(try queue.retry(id), .changed(name: "j1", was: .cancelled))
        let new = try XCTUnwrap(try queue.claim(worker: "host-1"))
        XCTAssertEqual(new.attempt, old.attempt, "attempts start again after a retry")
        XCTAssertFalse(try queue.complete(old))
        XCTAssertTrue(try queue.complete(new))
    }

    /// Output-side errors are retried after a backoff until the attempts are used up; a bad input
    /// fails at once.
    func testFailuresRetryWithBackoffThenFail() throws {
        let ids = try add(2, maxAttempts: 2)
        let first = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertEqual(
            try queue.fail(first, error: "out.mp4: no space left", retryable: true),
            .retrying(afterSeconds: JobQueue.backoff(afterAttempt: 1)))
        XCTAssertEqual(try row(ids[0]).state, "queued")
        XCTAssertEqual(try row(ids[0]).error, "out.mp4: no space left")
        // Backing off: the next claim takes the other job.
        let other = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertEqual(other.id, ids[1])
        XCTAssertEqual(try queue.fail(other, error: "b.mov: not a video", retryable: false), .failed)
        XCTAssertEqual(try row(ids[1]).state, "failed")
        XCTAssertNil(try queue.claim(worker: "w1"))
        try sql.execute("UPDATE vmerge.jobs SET not_before = now() WHERE id = $1::bigint", ["\(ids[0])"])
        let second = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertEqual(second.attempt, 2)
        XCTAssertEqual(try queue.fail(second, error: "out.mp4: no space left", retryable: true), .failed)
        XCTAssertEqual(try row(ids[0]).state, "failed")
        XCTAssertEqual(try row(ids[0]).attempts, "2")
    }

    /// A worker that died on the job's last attempt: the job fails, with why.
    func testALeaseThatRanOutOnTheLastAttemptFailsTheJob() throws {
        let id = try add(1, maxAttempts: 1)[0]
        _ = try XCTUnwrap(try queue.claim(worker: "w1"))
        try expireLease(id)
        XCTAssertNil(try queue.claim(worker: "w2"))
        XCTAssertEqual(try row(id).state, "failed")
        XCTAssertEqual(try row(id).error, "worker w1 stopped renewing its lease (attempt 1 of 1)")
    }

    /// A worker stopping (SIGTERM) puts its job back without using up an attempt.
    func testAReleasedJobIsQueuedAgain() throws {
        let id = try add(1)[0]
        let claim = try XCTUnwrap(try queue.claim(worker: "w1"))
        XCTAssertTrue(try queue.release(claim))
        XCTAssertEqual(try row(id).state, "queued")
        XCTAssertEqual(try row(id).attempts, "0")
        XCTAssertEqual(try queue.claim(worker: "w2")?.attempt, 1)
        XCTAssertFalse(try queue.release(claim))
    }

    func testTheBackoffDoublesUpToFiveMinutes() {
        XCTAssertEqual((1...8).map(JobQueue.backoff(afterAttempt:)), [5, 10, 20, 40, 80, 160, 300, 300])
        XCTAssertEqual(JobQueue.backoff(afterAttempt: 1000), 300)
    }
}
