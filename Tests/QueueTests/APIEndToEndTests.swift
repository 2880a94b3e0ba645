import Foundation
import TestSupport
import XCTest

@testable import VMergeQueue

/// A pipeline's whole day, as Scripts/api_end_to_end.py lives it against the real thing: a
/// private PostgreSQL, `vmerge dashboard` serving the API, real workers, and an https
/// receiver that checks every signature with Python's hmac. The receiver is down (500), then
/// redirects, then is slow, before it takes events; one worker is killed as it starts its first
/// delivery. Every job is done all the same, and every job's job.completed arrives, signed, with
/// its metadata and a report valid by the schema (checked by PyPI's jsonschema).
final class APIEndToEndTests: DashboardTestCase {
    func testAPipelineSubmitsJobsOverHTTPAndIsToldOfEachByASignedEvent() throws {
        let receiver = try WebhookReceiver(secret: WebhookReceiver.testSecret)
        defer { receiver.stop() }
        try receiver.answer(
            """
            {"sequence": [{"status": 500, "times": 8},
                {"status": 307, "location": "\(receiver.base)/elsewhere", "times": 8}, {"delay": 1.5, "times": 4}]}
            """)
        let inputs = folder.appendingPathComponent("in")
        let outputs = folder.appendingPathComponent("out")
        for made in [inputs, outputs] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        let input = inputs.appendingPathComponent("a.mov")
        try FileManager.default.copyItem(atPath: fixture("l_tiny_0.1s_160x120_30fps.mov"), toPath: input.path)
        let secret = folder.appendingPathComponent("secret")
        try Data((receiver.secret + "\n").utf8).write(to: secret)
        let token = "pipeline-token-0123456789"
        let tokens = folder.appendingPathComponent("api-tokens")
        try Data("ci read,submit \(token)\n".utf8).write(to: tokens)
        chmod(tokens.path, 0o600)
        let (_, port) = try startDashboard(arguments: [
            "dashboard", "--db", database, "--listen", "127.0.0.1:0", "--api-tokens", tokens.path,
            "--allow-inputs", inputs.path, "--allow-outputs", outputs.path, "--allow-remote", receiver.base + "/",
        ])

        // Three workers; the third dies as it starts its first delivery (the events it took come
        // back when their 2 s lease runs out, and another sends them).
        let environment = ["SSL_CERT_FILE": receiver.caFile, "VMERGE_TEST_EVENT_LEASE": "2"]
        let arguments: [String] = [
            // A short lease: the killed worker's job is taken over in seconds.
            "worker", "--db", database, "--poll-interval", "0.2", "--lease", "6", "--notify-secret-file", secret.path,
            "--allow-remote", receiver.base + "/",
        ]
        let steady = try WorkerProcess(
            arguments + ["--name", "steady"], log: folder.appendingPathComponent("steady.log"), environment: environment
        )
        let second = try WorkerProcess(
            arguments + ["--name", "second"], log: folder.appendingPathComponent("second.log"), environment: environment
        )
        var killed = environment
        killed["VMERGE_TEST_KILL_AT"] = "before-delivery"
        let doomed = try WorkerProcess(
            arguments + ["--name", "doomed"], log: folder.appendingPathComponent("doomed.log"), environment: killed)
        defer {
            for worker in [steady, second, doomed] {
                worker.kill(SIGTERM)
                _ = worker.waitForExit(seconds: 10)
            }
        }

        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Scripts/api_end_to_end.py").path
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("schema/report.schema.json").path
        let run = try runProgram(
            URL(fileURLWithPath: S3TestServer.python),
            [
                script, "http://127.0.0.1:\(port)", token, input.path, outputs.path, receiver.base,
                receiver.folder.appendingPathComponent("events.jsonl").path, schema, "--jobs", "200",
            ])
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr + "\n" + steady.log)
        print("api end to end: " + run.stdout)
        let figures = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data((run.stdout.split(separator: "\n").first ?? "").utf8))
                as? [String: Any], run.stdout)
        XCTAssertEqual(figures["jobs_done"] as? Int, 170)
        // The receiver was down, redirected and slow before it took events.
        let statuses = try XCTUnwrap(figures["posts_by_status"] as? [String: Int])
        XCTAssertEqual(statuses["500"], 8, "\(statuses)")
        XCTAssertEqual(statuses["307"], 8, "\(statuses)")
        XCTAssertFalse(
            try receiver.events().contains { $0["path"] as? String == "/elsewhere" }, "a redirect was followed")
        XCTAssertNotNil(doomed.waitForExit(seconds: 30), "the doomed worker was not killed at its first delivery")
        // The queue holds exactly the jobs asked for: no repeat, no refused one.
        XCTAssertEqual(try value("SELECT count(*) FROM vmerge.jobs"), "170")
        XCTAssertEqual(try value("SELECT count(*) FROM vmerge.jobs WHERE state = 'done'"), "170")
    }
}
