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
            in: work, environment: ["SSL_CERT_FILE": receiver.caFile, "VMERGE_TEST_PROGRESS_EVENTS": "0.03"])
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
        // job.progress every 0.03 s at most here (30 s in use), the first 0.03 s after the merge's first progress.
        XCTAssertTrue(types.dropFirst().dropLast().allSatisfy { $0 == "job.progress" }, "\(types)")
        XCTAssertGreaterThanOrEqual(types.count, 3, "\(types)")
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
        let lines = try [own, plain].map {
            String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self)
        }
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
                return (
                    (data?["job"] as? [String: Any])?["name"] as? String, body?["type"] as? String,
                    data?["metadata"] as? [String: Any]
                )
            }.filter { $0.type != "job.progress" }
        }
        // Every job's events to the batch's receiver; the first job's also to its own, with its metadata.
        let all = ends(at: "/all")
        XCTAssertEqual(
            all.map { "\($0.job ?? "?") \($0.type ?? "?")" },
            [
                "one job.started", "one job.completed", "two job.started", "two job.completed",
            ])
        let mine = ends(at: "/own?k=1")
        XCTAssertEqual(mine.map { $0.type ?? "?" }, ["job.started", "job.completed"])
        XCTAssertTrue(
            mine.allSatisfy { $0.metadata?["order"] as? Int == 7 && $0.metadata?["tag"] as? String == "first" })
        XCTAssertNil(all.last?.metadata)
        // Each job's report says what became of its own events.
        let report = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: work.appendingPathComponent("batch.json")))
                as? [String: Any])
        let entries = try XCTUnwrap(report["jobs"] as? [[String: Any]])
        let received = Dictionary(grouping: got) { event in
            (((event["body"] as? [String: Any])?["data"] as? [String: Any])?["job"] as? [String: Any])?["name"]
                as? String
        }.mapValues(\.count)
        for entry in entries {
            let sent = try XCTUnwrap((entry["report"] as? [String: Any])?["notifications"] as? [[String: Any]])
            XCTAssertEqual(sent.count, received[entry["name"] as? String], "\(entry)")
            XCTAssertTrue(sent.allSatisfy { $0["delivered"] as? Bool == true }, "\(sent)")
        }
    }
}

extension WebhookTests {
    /// A watch job folder with a job.json naming its own receiver and metadata.
    func watchJob(_ name: String, in inbox: URL, notify: [String]) throws {
        let folder = inbox.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.path("a_"), toPath: folder.appendingPathComponent("a.mov").path)
        let job: [String: Any] = ["notify": notify, "metadata": ["upload": name]]
        try JSONSerialization.data(withJSONObject: job).write(to: folder.appendingPathComponent("job.json"))
    }

    func watch(_ extra: [String]) throws -> RunResult {
        try VMergeBinary.run(
            [
                "watch", "inbox", "--out", "out", "--once", "--notify-secret-file", "secret", "--allow-remote",
                base + "/own/", "--allow-remote", base + "/all",
            ]
                + extra,
            in: work, environment: ["SSL_CERT_FILE": receiver.caFile, "VMERGE_TEST_PROGRESS_EVENTS": "0.1"])
    }

    func eventFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.appendingPathComponent("inbox/.events").path)
    }

    func testAWatchFolderKeepsEventsUntilTheyAreDeliveredEvenAcrossRuns() throws {
        let inbox = work.appendingPathComponent("inbox")
        try watchJob("trip", in: inbox, notify: [base + "/own/trip"])
        // The receivers are down: the job is done all the same, and its events wait in .events.
        try receiver.answer(#"{"status": 503}"#)
        let first = try watch(["--notify", base + "/all", "--notify-wait", "1"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: work.appendingPathComponent("out/trip.mp4").path))
        XCTAssertTrue(first.stderr.contains("not delivered yet; kept in .events for the next start"), first.stderr)
        let kept = try eventFiles().filter { $0.hasSuffix(".event") }
        XCTAssertGreaterThanOrEqual(kept.count, 4, "started and completed, to both receivers: \(kept)")
        // A URL may carry a token: each file is the watcher's alone.
        for name in kept {
            let mode =
                try FileManager.default.attributesOfItem(
                    atPath: work.appendingPathComponent("inbox/.events/" + name).path)[.posixPermissions] as? Int
            XCTAssertEqual(mode, 0o600, name)
        }
        // The next start (nothing new in the inbox) sends them, each once taken.
        try receiver.answer(#"{"status": 200}"#)
        let second = try watch([])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(try eventFiles().filter { $0.hasSuffix(".event") }, [])
        let got = try events()
        XCTAssertTrue(got.allSatisfy { $0["valid"] as? Bool == true }, "a signature did not verify: \(got)")
        let taken = got.filter { $0["status"] as? Int == 200 }
        XCTAssertEqual(Set(taken.compactMap { $0["id"] as? String }).count, kept.count, "each kept event, once")
        func types(at path: String) -> [String] {
            taken.filter { $0["path"] as? String == path }.compactMap {
                ($0["body"] as? [String: Any])?["type"] as? String
            }
            .filter { $0 != "job.progress" }
        }
        XCTAssertEqual(types(at: "/all"), ["job.started", "job.completed"])
        XCTAssertEqual(types(at: "/own/trip"), ["job.started", "job.completed"])
        let metadata = taken.compactMap {
            (($0["body"] as? [String: Any])?["data"] as? [String: Any])?["metadata"] as? [String: Any]
        }
        XCTAssertEqual(metadata.count, taken.count)
        XCTAssertTrue(metadata.allSatisfy { $0["upload"] as? String == "trip" }, "\(metadata)")
        let completed = try XCTUnwrap(
            taken.last { ($0["body"] as? [String: Any])?["type"] as? String == "job.completed" })
        let report = (((completed["body"] as? [String: Any])?["data"] as? [String: Any])?["report"] as? [String: Any])
        XCTAssertEqual(report?["status"] as? String, "ok")
    }

    func testAWatchJobSendsEventsOnlyWhereTheOperatorAllows() throws {
        let inbox = work.appendingPathComponent("inbox")
        // A producer's job.json naming a receiver outside --allow-remote: failed, said, nothing sent.
        try watchJob("elsewhere", in: inbox, notify: [base + "/other/x"])
        let run = try watch([])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(
            run.stderr.contains(
                "'notify' \(base)/other/x: events go only to receivers under the watcher's --allow-remote"),
            run.stderr)
        XCTAssertEqual(try events().count, 0)
        // Without the secret a job's own receivers are refused, not dropped.
        try watchJob("unsigned", in: inbox, notify: [base + "/own/x"])
        let unsigned = try VMergeBinary.run(["watch", "inbox", "--out", "out", "--once"], in: work)
        XCTAssertEqual(unsigned.status, 1, unsigned.stderr)
        XCTAssertTrue(unsigned.stderr.contains("'notify' needs the watcher's --notify-secret-file"), unsigned.stderr)
    }
}

/// What a hostile tester found: a stuck receiver held up the others, a signal waited for the
/// receivers, and .events took what was put in it.
extension WebhookTests {
    func testAReceiverThatNeverAnswersHoldsUpOnlyItsOwnEventsAndASignalEndsTheWait() throws {
        try receiver.answer(#"{"paths": {"/slow": {"delay": 25}}}"#)
        let started = Date()
        let run = try merge([
            "--notify", base + "/slow", "--notify", base + "/fast", "--allow-remote", base + "/", "--notify-wait", "4",
        ])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 12)
        let fast = try events().filter { $0["path"] as? String == "/fast" }
            .compactMap { ($0["body"] as? [String: Any])?["type"] as? String }.filter { $0 != "job.progress" }
        XCTAssertEqual(fast, ["job.started", "job.completed"], run.stderr)
        XCTAssertTrue(run.stderr.contains("\(base)/slow: job.started was not delivered (1 try;"), run.stderr)

        // A receiver that fails, a long --notify-wait, and a SIGTERM during the wait: the run
        // stops at once, saying what it did not deliver (a batch the same: the helper's case).
        try receiver.answer(#"{"status": 500}"#)
        let events = { try self.events() }
        var signalled = Date()
        let stopped = try VMergeBinary.run(
            [
                Fixtures.path("a_"), "-o", "late.mp4", "-y", "--notify-secret-file", "secret", "--notify",
                base + "/down", "--allow-remote", base + "/", "--notify-wait", "120",
            ], in: work, environment: ["SSL_CERT_FILE": receiver.caFile]
        ) { process in
            // Once the merge is over and its first event refused: the run waits on the receiver.
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline,
                !((try? events()) ?? []).contains(where: {
                    $0["path"] as? String == "/down"
                        && ($0["body"] as? [String: Any])?["type"] as? String == "job.completed"
                })
            {
                usleep(50_000)
            }
            usleep(300_000)
            signalled = Date()
            kill(process.processIdentifier, SIGTERM)
        }
        XCTAssertLessThan(Date().timeIntervalSince(signalled), 3)
        // The video was published before the signal: the stop cut only the wait for receivers.
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: work.appendingPathComponent("late.mp4").path))
        XCTAssertTrue(stopped.stderr.contains("was not delivered"), stopped.stderr)
    }

    func testAWatchersEventsFolderHoldsOnlyItsOwnEventsEachReceiverOnce() throws {
        let inbox = work.appendingPathComponent("inbox")
        // The same receiver named twice by job.json and once by --notify: each event once.
        try watchJob("twice", in: inbox, notify: [base + "/own/a", base + "/own/a"])
        // A job.json that is refused still says job.failed to the watcher's own receiver.
        let refused = inbox.appendingPathComponent("refused")
        try FileManager.default.createDirectory(at: refused, withIntermediateDirectories: true)
        try Data(#"{"unknown": 1}"#.utf8).write(to: refused.appendingPathComponent("job.json"))
        // Planted in .events: junk under an event's name, and an event whose id is not its name's.
        let events = inbox.appendingPathComponent(".events")
        try FileManager.default.createDirectory(at: events, withIntermediateDirectories: true)
        chmod(events.path, 0o755)
        let junk = "0000000000001-msg_" + String(repeating: "a", count: 32) + ".event"
        try Data("junk".utf8).write(to: events.appendingPathComponent(junk))
        let forged = "0000000000002-msg_" + String(repeating: "b", count: 32) + ".event"
        try Data(
            (#"{"id": "msg_x\nwebhook-evil: 1", "url": "\#(base)/own/evil", "created": 1}"# + "\n{}").utf8
        ).write(to: events.appendingPathComponent(forged))
        let run = try watch(["--notify", base + "/own/a", "--notify-wait", "10"])
        XCTAssertEqual(run.status, 1, run.stderr)  // the refused job failed
        XCTAssertTrue(run.stderr.contains("\(junk): does not hold an event; set aside as \(junk).bad"), run.stderr)
        XCTAssertTrue(run.stderr.contains("\(forged): does not hold an event; set aside"), run.stderr)
        XCTAssertEqual(try eventFiles().sorted(), [junk + ".bad", forged + ".bad"].sorted())
        let got = try self.events()
        XCTAssertFalse(got.contains { $0["path"] as? String == "/own/evil" })
        let twice = got.compactMap { $0["body"] as? [String: Any] }
            .filter { (($0["data"] as? [String: Any])?["job"] as? [String: Any])?["name"] as? String == "twice" }
            .compactMap { $0["type"] as? String }.filter { $0 != "job.progress" }
        XCTAssertEqual(twice, ["job.started", "job.completed"], "\(got)")
        let failed = got.compactMap { $0["body"] as? [String: Any] }.filter { $0["type"] as? String == "job.failed" }
        XCTAssertEqual(failed.count, 1, "\(got)")
        XCTAssertEqual(
            ((failed.first?["data"] as? [String: Any])?["job"] as? [String: Any])?["name"] as? String, "refused")
    }
}

extension WebhookTests {
    /// A watcher's receiver that never answers holds up only its own events: the others arrive
    /// while it hangs (each receiver has a lane of its own; a watcher never waits for one).
    func testAWatchersStuckReceiverHoldsUpOnlyItsOwnEvents() throws {
        try receiver.answer(#"{"paths": {"/own/slow": {"delay": 25}}}"#)
        let inbox = work.appendingPathComponent("inbox")
        for name in ["one", "two"] { try watchJob(name, in: inbox, notify: [base + "/own/slow"]) }
        let started = Date()
        let run = try watch(["--notify", base + "/own/fast", "--notify-wait", "5"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        let fast = try events().filter { $0["path"] as? String == "/own/fast" && $0["status"] as? Int == 200 }
            .compactMap { ($0["body"] as? [String: Any])?["type"] as? String }.filter { $0 != "job.progress" }
        XCTAssertEqual(fast.sorted(), ["job.completed", "job.completed", "job.started", "job.started"], run.stderr)
        XCTAssertTrue(run.stderr.contains("not delivered yet; kept in .events for the next start"), run.stderr)
    }
}
