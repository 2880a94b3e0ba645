import Foundation
import TestSupport
import XCTest

/// `vmerge ... --notify URL`: events to a real https receiver (Servers/webhook-receiver.py) that
/// checks every signature with Python's hmac, not vmerge's code; a receiver that fails or is
/// down never changes the run's result, and what was not delivered is said and reported.
final class WebhookTests: XCTestCase {
    var receiver: WebhookReceiver!
    var base: String { receiver.base }
    var work: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try makeScratchDirectory()
        receiver = try WebhookReceiver(secret: WebhookReceiver.testSecret)
        try Data((receiver.secret + "\n").utf8).write(to: work.appendingPathComponent("secret"))
    }

    override func tearDownWithError() throws {
        receiver?.stop()
        try super.tearDownWithError()
    }

    func events() throws -> [[String: Any]] { try receiver.events() }

    func merge(_ extra: [String]) throws -> RunResult {
        try VMergeBinary.run(
            [
                Fixtures.path("a_"), Fixtures.path("b_"), "-o", "out.mp4", "--report", "r.json", "--notify-secret-file",
                "secret",
            ] + extra,
            in: work, environment: ["SSL_CERT_FILE": receiver.caFile])
    }

    func report() throws -> [String: Any] {
        let data = try Data(contentsOf: work.appendingPathComponent("r.json"))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func testAMergeSendsSignedEventsThatAnIndependentCheckAccepts() throws {
        let run = try merge(["--notify", base + "/hooks/vmerge?token=abc", "--allow-remote", base + "/hooks/"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let got = try events()
        let types = got.compactMap { ($0["body"] as? [String: Any])?["type"] as? String }
        XCTAssertEqual(types.first, "job.started", "\(types)")
        XCTAssertEqual(types.last, "job.completed", "\(types)")
        XCTAssertTrue(types.dropFirst().dropLast().allSatisfy { $0 == "job.progress" }, "\(types)")
        XCTAssertTrue(got.allSatisfy { $0["valid"] as? Bool == true }, "a signature did not verify: \(got)")
        XCTAssertEqual(Set(got.compactMap { $0["id"] as? String }).count, got.count, "each event has its own id")
        let completed = try XCTUnwrap(got.last?["body"] as? [String: Any])
        let data = try XCTUnwrap(completed["data"] as? [String: Any])
        XCTAssertEqual((data["job"] as? [String: Any])?["output"] as? String, "out.mp4")
        XCTAssertEqual((data["report"] as? [String: Any])?["status"] as? String, "ok")
        let notifications = try XCTUnwrap(try report()["notifications"] as? [[String: Any]])
        XCTAssertEqual(notifications.count, got.count)
        XCTAssertTrue(notifications.allSatisfy { $0["delivered"] as? Bool == true }, "\(notifications)")
        // The URL's query may be a token: shown as ?… in the report.
        XCTAssertEqual(notifications.first?["url"] as? String, base + "/hooks/vmerge?…")
        XCTAssertFalse(
            String(decoding: try Data(contentsOf: work.appendingPathComponent("r.json")), as: UTF8.self)
                .contains("token=abc"))
    }

    func testAReceiverThatFailsIsTriedAgainAndNeverChangesTheResult() throws {
        // Down for the first two tries, then back: delivered on the third.
        try receiver.answer(#"{"status": 500, "times": 2}"#)
        let late = try merge(["--notify", base + "/late", "--allow-remote", base + "/"])
        XCTAssertEqual(late.status, 0, late.stderr)
        let delivered = try XCTUnwrap(try report()["notifications"] as? [[String: Any]])
        XCTAssertTrue(delivered.allSatisfy { $0["delivered"] as? Bool == true }, "\(delivered)")
        XCTAssertEqual(
            delivered.compactMap { $0["attempts"] as? Int }.reduce(0, +), delivered.count + 2,
            "two refused tries, each tried again: \(delivered)")
        XCTAssertEqual(
            Set(try events().filter { $0["status"] as? Int == 200 }.compactMap { $0["id"] as? String }).count,
            delivered.count)
        // Down for good: the run succeeds all the same, says what was not delivered, and its
        // report records it.
        try receiver.answer(#"{"status": 500}"#)
        try FileManager.default.removeItem(at: work.appendingPathComponent("out.mp4"))
        let down = try merge(["--notify", base + "/down", "--allow-remote", base + "/", "--notify-wait", "2"])
        XCTAssertEqual(down.status, 0, down.stderr)
        XCTAssertTrue(
            down.stderrLines.contains {
                $0.hasPrefix("vmerge: \(base)/down: job.completed was not delivered (")
            },
            down.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: work.appendingPathComponent("out.mp4").path))
        let records = try XCTUnwrap(try report()["notifications"] as? [[String: Any]])
        XCTAssertTrue(
            records.contains { $0["event"] as? String == "job.completed" && $0["delivered"] as? Bool == false })
        XCTAssertEqual(records.first { $0["delivered"] as? Bool == false }?["error"] as? String, "HTTP 500")
    }

    func testAPrivateReceiverNeedsItsPrefixListedAndBadOptionsAreUsageErrors() throws {
        let unlisted = try merge(["--notify", base + "/hook", "--notify-wait", "1"])
        XCTAssertEqual(unlisted.status, 0, unlisted.stderr)
        XCTAssertTrue(unlisted.stderr.contains("its host is at a private or local address"), unlisted.stderr)
        XCTAssertEqual(try events().count, 0, "nothing reached the private address")
        for (arguments, expected) in [
            (
                ["--notify", "http://example.com/hook"],
                "'--notify http://example.com/hook': events go to an https:// URL"
            ),
            (["--notify", "s3://bucket/key"], "events go to an https:// URL"),
        ] {
            let refused = try merge(arguments)
            XCTAssertEqual(refused.status, 2, refused.stderr)
            XCTAssertTrue(refused.stderr.contains(expected), refused.stderr)
        }
        let unsigned = try VMergeBinary.run(
            [Fixtures.path("a_"), "-o", "x.mp4", "--notify", "https://example.com/h"], in: work)
        XCTAssertEqual(unsigned.status, 2, unsigned.stderr)
        XCTAssertTrue(unsigned.stderr.contains("--notify needs --notify-secret-file"), unsigned.stderr)
        try Data("not a secret".utf8).write(to: work.appendingPathComponent("bad"))
        let bad = try VMergeBinary.run(
            [Fixtures.path("a_"), "-o", "x.mp4", "--notify", "https://example.com/h", "--notify-secret-file", "bad"],
            in: work)
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("a webhook secret is whsec_"), bad.stderr)
        XCTAssertFalse(bad.stderr.contains("not a secret"))
    }
}

extension WebhookTests {
    func testABatchSendsEachJobsEventsToItsOwnReceiversWithItsMetadata() throws {
        let jobs = work.appendingPathComponent("jobs.jsonl")
        let own: [String: Any] = [
            "inputs": [Fixtures.path("a_")], "output": "one.mp4", "notify": [base + "/own?k=1"],
            "metadata": ["order": 7, "tag": "first"],
        ]
        let plain: [String: Any] = ["inputs": [Fixtures.path("b_")], "output": "two.mp4"]
        let lines = try [own, plain].map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: jobs)
        // A job naming receivers needs the secret: said before any job runs.
        let unsigned = try VMergeBinary.run(["batch", "jobs.jsonl", "--allow-remote", base + "/"], in: work)
        XCTAssertEqual(unsigned.status, 1, unsigned.stderr)
        XCTAssertEqual(
            unsigned.stderr,
            "vmerge: jobs.jsonl: job one: 'notify' needs --notify-secret-file (events are always signed)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.appendingPathComponent("one.mp4").path))

        let run = try VMergeBinary.run(
            [
                "batch", "jobs.jsonl", "-j", "1", "--report", "batch.json", "--notify", base + "/all",
                "--notify-secret-file", "secret", "--allow-remote", base + "/",
            ],
            in: work, environment: ["SSL_CERT_FILE": receiver.caFile])
        XCTAssertEqual(run.status, 0, run.stderr)
        let got = try events()
        XCTAssertTrue(got.allSatisfy { $0["valid"] as? Bool == true }, "a signature did not verify: \(got)")
        func ends(at path: String) -> [(job: String?, type: String?, metadata: [String: Any]?)] {
            got.filter { $0["path"] as? String == path }.map { event in
                let body = event["body"] as? [String: Any]
                let data = body?["data"] as? [String: Any]
                return ((data?["job"] as? [String: Any])?["name"] as? String, body?["type"] as? String,
                    data?["metadata"] as? [String: Any])
            }.filter { $0.type != "job.progress" }
        }
        // Every job's events to the batch's receiver; the first job's also to its own, with its metadata.
        let all = ends(at: "/all")
        XCTAssertEqual(all.map { "\($0.job ?? "?") \($0.type ?? "?")" }, [
            "one job.started", "one job.completed", "two job.started", "two job.completed",
        ])
        let mine = ends(at: "/own?k=1")
        XCTAssertEqual(mine.map { $0.type ?? "?" }, ["job.started", "job.completed"])
        XCTAssertTrue(mine.allSatisfy { $0.metadata?["order"] as? Int == 7 && $0.metadata?["tag"] as? String == "first" })
        XCTAssertNil(all.last?.metadata)
        // Each job's report says what became of its own events.
        let report = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: work.appendingPathComponent("batch.json")))
                as? [String: Any])
        let entries = try XCTUnwrap(report["jobs"] as? [[String: Any]])
        let received = Dictionary(grouping: got) { event in
            (((event["body"] as? [String: Any])?["data"] as? [String: Any])?["job"] as? [String: Any])?["name"] as? String
        }.mapValues(\.count)
        for entry in entries {
            let sent = try XCTUnwrap((entry["report"] as? [String: Any])?["notifications"] as? [[String: Any]])
            XCTAssertEqual(sent.count, received[entry["name"] as? String], "\(entry)")
            XCTAssertTrue(sent.allSatisfy { $0["delivered"] as? Bool == true }, "\(sent)")
        }
    }
}
