import Foundation
import TestSupport
import XCTest

@testable import VMergeQueue

/// A queued job's events: written to the queue's outbox with the state they tell of, delivered
/// signed by workers that have the secret (checked by a receiver with Python's hmac), at least
/// once even when the worker sending them is killed, never changing the job.
final class WorkerEventsTests: WorkerTestCase {
    var receiver: WebhookReceiver!
    var secretFile: String { folder.appendingPathComponent("secret").path }

    override func setUpWithError() throws {
        try super.setUpWithError()
        receiver = try WebhookReceiver(secret: WebhookReceiver.testSecret)
        try Data((receiver.secret + "\n").utf8).write(to: URL(fileURLWithPath: secretFile))
    }

    override func tearDownWithError() throws {
        receiver?.stop()
        try super.tearDownWithError()
    }

    var notifying: [String] {
        ["--notify-secret-file", secretFile, "--allow-remote", receiver.base + "/", "--notify-wait", "20"]
    }

    /// vmerge as its own process, trusting the receiver's certificate.
    func run(_ arguments: [String]) throws -> RunResult {
        try VMergeBinary.run(arguments, in: folder, environment: ["SSL_CERT_FILE": receiver.caFile])
    }

    func outbox() throws -> [(type: String, delivered: Bool, attempts: Int)] {
        let rows = try PGConnection(database).execute(
            "SELECT type, delivered_at IS NOT NULL, attempts FROM vmerge.events ORDER BY id")
        var found: [(type: String, delivered: Bool, attempts: Int)] = []
        for row in 0..<rows.rowCount {
            let attempts = rows.value(row, 2).flatMap { Int($0) } ?? 0
            found.append((rows.value(row, 0) ?? "", rows.value(row, 1) == "t", attempts))
        }
        return found
    }

    func testAJobsOwnReceiverGetsItsEventsSignedWithItsMetadata() throws {
        // Long enough (a few seconds) for a progress event or two.
        var job = longJob("trip", count: 10)
        job["notify"] = [receiver.base + "/hooks/trip"]
        job["metadata"] = ["order": 7, "customer": "ada"]
        var failing = shortJob("broken", seconds: 1)
        failing["inputs"] = [folder.appendingPathComponent("not-a-video.mov").path]
        failing["notify"] = [receiver.base + "/hooks/broken"]
        try Data("not a video".utf8).write(to: folder.appendingPathComponent("not-a-video.mov"))
        try add(try jobList([job, failing]))
        // job.progress every 0.1 s at most here (30 s in use), after the first progress.
        let worker = try VMergeBinary.run(
            ["worker", "--db", database, "--once", "--poll-interval", "0.2"] + notifying, in: folder,
            environment: ["SSL_CERT_FILE": receiver.caFile, "VMERGE_TEST_PROGRESS_EVENTS": "0.1"])
        XCTAssertEqual(worker.status, 1, worker.stderr)  // the broken job failed
        let got = try receiver.events()
        XCTAssertTrue(got.allSatisfy { $0["valid"] as? Bool == true }, "a signature did not verify: \(got)")
        let all = got.filter { $0["path"] as? String == "/hooks/trip" }.compactMap { $0["body"] as? [String: Any] }
        let progress = all.filter { $0["type"] as? String == "job.progress" }
        XCTAssertGreaterThanOrEqual(progress.count, 1, worker.stderr)
        XCTAssertTrue(
            progress.allSatisfy { (($0["data"] as? [String: Any])?["progress"] as? [String: Any])?["phase"] is String },
            "\(progress)")
        XCTAssertEqual(all.first?["type"] as? String, "job.started")
        let trip = all.filter { $0["type"] as? String != "job.progress" }
        XCTAssertEqual(trip.compactMap { $0["type"] as? String }, ["job.started", "job.completed"], worker.stderr)
        let data = try XCTUnwrap(trip.last?["data"] as? [String: Any])
        XCTAssertEqual(data["metadata"] as? NSDictionary, ["order": 7, "customer": "ada"] as NSDictionary)
        XCTAssertEqual((data["job"] as? [String: Any])?["id"] as? Int, 1)
        XCTAssertEqual((data["report"] as? [String: Any])?["status"] as? String, "ok")
        let broken = got.filter { $0["path"] as? String == "/hooks/broken" }.compactMap { $0["body"] as? [String: Any] }
        XCTAssertEqual(broken.compactMap { $0["type"] as? String }, ["job.started", "job.failed"])
        let failed = try XCTUnwrap(broken.last?["data"] as? [String: Any])
        XCTAssertEqual(failed["retryable"] as? Bool, false)
        XCTAssertTrue(
            ((failed["error"] as? [String: Any])?["message"] as? String ?? "").contains("not-a-video.mov"), "\(failed)")
        XCTAssertTrue(try outbox().allSatisfy(\.delivered))
        // A week on, the outbox forgets them (a worker prunes once an hour).
        try PGConnection(database).execute("UPDATE vmerge.events SET delivered_at = now() - interval '8 days'")
        XCTAssertEqual(try JobQueue(connecting: database).pruneEvents(), 4 + progress.count)
        XCTAssertEqual(try outbox().count, 0)
    }

    /// A receiver that never finishes its answer holds no worker: each POST has a deadline, and a
    /// SIGTERM stops the worker at once. A queued job cancelled says job.cancelled to its own
    /// receivers, though no worker runs it.
    func testATricklingReceiverHoldsNoWorkerAndACancelledQueuedJobSaysSo() throws {
        var cancelled = shortJob("cancelled", seconds: 1)
        cancelled["notify"] = [receiver.base + "/cancelled"]
        try add(try jobList([cancelled]))
        XCTAssertEqual(vmerge(["queue", "cancel", "--db", database, "1"]).status, 0)
        try receiver.answer(#"{"trickle": true}"#)
        // (The event is held 2 s by the worker that took it, not the product's minutes: the
        // next worker may send it again that soon.)
        let worker = try startWorker(
            "w1", notifying, environment: ["SSL_CERT_FILE": receiver.caFile, "VMERGE_TEST_EVENT_LEASE": "2"])
        // (The receiver logs a trickled answer as it starts it.)
        let deadline = Date().addingTimeInterval(20)
        while try Date() < deadline && receiver.events().isEmpty { usleep(100_000) }
        // The receiver got the event and trickles its answer: the worker is mid-POST.
        usleep(500_000)
        let stopped = Date()
        worker.kill(SIGTERM)
        XCTAssertEqual(worker.waitForExit(seconds: 20), 128 + SIGTERM, worker.log)
        XCTAssertLessThan(Date().timeIntervalSince(stopped), 10, "the POST held the worker")
        try receiver.answer("{}")
        let again = try run(["worker", "--db", database, "--once", "--poll-interval", "0.2"] + notifying)
        XCTAssertEqual(again.status, 0, again.stderr)
        let types = try receiver.events().filter { $0["status"] as? Int == 200 }
            .compactMap { ($0["body"] as? [String: Any])?["type"] as? String }
        XCTAssertEqual(types, ["job.cancelled"])
    }

    /// A job whose worker died on its last attempt is failed by the next claim, which says
    /// job.failed to the job's own receivers: no worker is left to.
    func testAJobWhoseLastWorkerDiedSaysItFailed() throws {
        var job = shortJob("orphan", seconds: 1)
        job["notify"] = [receiver.base + "/orphan"]
        try add(try jobList([job]))
        try PGConnection(database).execute(
            """
            UPDATE vmerge.jobs SET state = 'running', worker = 'gone', attempts = max_attempts,
                lease_until = now() - interval '1 minute'
            """)
        let worker = try run(["worker", "--db", database, "--once", "--poll-interval", "0.2"] + notifying)
        XCTAssertEqual(worker.status, 0, worker.stderr)
        XCTAssertEqual(row(1)?.state, "failed")
        let failed = try receiver.events().compactMap { $0["body"] as? [String: Any] }
        XCTAssertEqual(failed.compactMap { $0["type"] as? String }, ["job.failed"])
        let data = try XCTUnwrap(failed.first?["data"] as? [String: Any])
        XCTAssertEqual(data["retryable"] as? Bool, false)
        XCTAssertTrue(
            ((data["error"] as? [String: Any])?["message"] as? String ?? "").contains("stopped renewing its lease"))
    }

    /// A worker killed after it took an event to send (and after the job was recorded done):
    /// another worker sends it once the first one's hold on it has run out.
    func testAnEventAWorkerWasKilledSendingIsStillDelivered() throws {
        try add(try jobList([shortJob("trip", seconds: 1)]))
        var environment = ["SSL_CERT_FILE": receiver.caFile, "VMERGE_TEST_EVENT_LEASE": "2"]
        environment["VMERGE_TEST_KILL_AT"] = "before-delivery"
        let killed = try startWorker(
            "w1", ["--notify", receiver.base + "/hook"] + notifying, environment: environment)
        XCTAssertEqual(killed.waitForExit(seconds: 60), 128 + SIGKILL, killed.log)
        XCTAssertEqual(try receiver.events().count, 0, "nothing was sent before the kill")
        environment["VMERGE_TEST_KILL_AT"] = nil
        let second = try startWorker(
            "w2", ["--once", "--notify", receiver.base + "/hook"] + notifying, environment: environment)
        XCTAssertEqual(second.waitForExit(seconds: 60), 0, second.log)
        XCTAssertEqual(row(1)?.state, "done")
        let types = try receiver.types()
        XCTAssertTrue(types.contains("job.completed"), "\(types)")
        let owed = try outbox()
        XCTAssertTrue(owed.allSatisfy(\.delivered), "\(owed)")
    }

    /// A receiver that answers 500 and then comes back gets the event later; the job is done all
    /// the same, and a worker without the secret sends nothing but leaves the events owed.
    func testAReceiverThatIsDownGetsTheEventOnceItIsBack() throws {
        try receiver.answer(#"{"status": 500, "times": 2}"#)
        try add(try jobList([shortJob("trip", seconds: 1)]))
        let plain = vmerge([
            "worker", "--db", database, "--once", "--poll-interval", "0.2", "--notify", receiver.base + "/h",
        ])
        XCTAssertEqual(plain.status, 2, plain.stderr)
        XCTAssertTrue(plain.stderr.contains("--notify needs --notify-secret-file"), plain.stderr)
        let worker = try run(
            ["worker", "--db", database, "--once", "--poll-interval", "0.2", "--notify", receiver.base + "/h"]
                + notifying)
        XCTAssertEqual(worker.status, 0, worker.stderr)
        XCTAssertEqual(row(1)?.state, "done")
        let events = try receiver.events()
        XCTAssertEqual(events.filter { $0["status"] as? Int == 500 }.count, 2)
        XCTAssertEqual(
            Set(
                events.filter { $0["status"] as? Int == 200 }.compactMap {
                    ($0["body"] as? [String: Any])?["type"] as? String
                }),
            ["job.started", "job.completed"])
        // Each event kept its webhook-id across its tries (a receiver drops repeats by it).
        let ids = Dictionary(grouping: events, by: { $0["id"] as? String ?? "" })
        XCTAssertEqual(ids.count, 2, "\(events)")
        XCTAssertTrue(try outbox().allSatisfy(\.delivered))
    }
}
