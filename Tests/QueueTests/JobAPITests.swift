import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeQueue

/// The job API (`/api/v1/`) as a pipeline drives it: the real dashboard over a real PostgreSQL,
/// a real worker running what was submitted, tokens with scopes, the operator's roots.
final class JobAPITests: DashboardTestCase {
    var inputs: URL!
    var outputs: URL!
    let dashboardToken = "dashboard-token-0123456789"
    let ciToken = "ci-token-abcdefghijklmnop"
    let readerToken = "reader-token-abcdefghijkl"

    override func setUpWithError() throws {
        try super.setUpWithError()
        inputs = folder.appendingPathComponent("in")
        outputs = folder.appendingPathComponent("out")
        for made in [inputs!, outputs!] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(
            atPath: fixture("a_none_640x480_30fps_aac44k_stereo.mov"),
            toPath: inputs.appendingPathComponent("a.mov").path)
        try Data(dashboardToken.utf8).write(to: folder.appendingPathComponent("token"))
        try Data("# name scopes token\nci read,submit \(ciToken)\nviewer read \(readerToken)\n".utf8)
            .write(to: folder.appendingPathComponent("api-tokens"))
    }

    func startAPI(_ extra: [String] = []) throws -> UInt16 {
        let (_, port) = try startDashboard(
            [
                "--token-file", folder.appendingPathComponent("token").path, "--api-tokens",
                folder.appendingPathComponent("api-tokens").path, "--allow-inputs", inputs.path, "--allow-outputs",
                outputs.path,
            ] + extra)
        return port
    }

    func call(
        _ port: UInt16, _ method: String, _ path: String, token: String?, body: Any? = nil, headers: [String] = []
    ) throws -> (status: Int, json: [String: Any], headers: [String: String]) {
        var lines = headers
        if let token { lines.append("Authorization: Bearer \(token)") }
        var text = ""
        if let body = body as? String {
            text = body
            lines.append("Content-Type: application/json")
        } else if let body {
            text = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            lines.append("Content-Type: application/json")
        }
        let response = try RawHTTP(port: port).request(method, path, headers: lines, body: text)
        XCTAssertEqual(response.headers["content-type"], "application/json", "\(method) \(path): \(response.text)")
        let json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
        return (response.status, json, response.headers)
    }

    func message(_ json: [String: Any]) -> String { (json["error"] as? [String: Any])?["message"] as? String ?? "" }

    func job(_ output: String, input: String = "a.mov") -> [String: Any] {
        [
            "inputs": [inputs.appendingPathComponent(input).path],
            "output": outputs.appendingPathComponent(output).path,
            "options": ["min-duration": "0"],
        ]
    }

    func testAPipelineSubmitsAJobThatAWorkerRunsAndReadsItsReport() throws {
        let port = try startAPI()
        let added = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("trip.mp4"))
        XCTAssertEqual(added.status, 201, "\(added.json)")
        XCTAssertEqual(added.headers["location"], "/api/v1/jobs/1")
        XCTAssertEqual(added.json["state"] as? String, "queued")
        XCTAssertEqual(added.json["name"] as? String, "trip")
        XCTAssertEqual(added.json["output"] as? String, outputs.appendingPathComponent("trip.mp4").path)
        // The same job again is the same job.
        let again = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("trip.mp4"))
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.json["id"] as? Int, 1)
        let worker = vmerge(["worker", "--db", database, "--once", "--poll-interval", "0.2"])
        XCTAssertEqual(worker.status, 0, worker.stderr)
        let done = try call(port, "GET", "/api/v1/jobs/1", token: readerToken)
        XCTAssertEqual(done.status, 200)
        XCTAssertEqual(done.json["state"] as? String, "done", "\(done.json)")
        let report = try XCTUnwrap(done.json["report"] as? [String: Any], "\(done.json)")
        XCTAssertEqual(report["status"] as? String, "ok")
        let written = try XCTUnwrap((report["output"] as? [String: Any])?["bytes"] as? Int)
        let onDisk = try FileManager.default.attributesOfItem(atPath: outputs.appendingPathComponent("trip.mp4").path)
        XCTAssertEqual((onDisk[.size] as? NSNumber)?.intValue, written)
        let list = try call(port, "GET", "/api/v1/jobs?state=done&limit=10", token: readerToken)
        XCTAssertEqual(list.json["total"] as? Int, 1)
        XCTAssertEqual((list.json["jobs"] as? [[String: Any]])?.first?["id"] as? Int, 1)
        XCTAssertTrue(list.json["next_after"] is NSNull)
    }

    func testARepeatWithTheSameKeyAnswersTheFirstJobAndAnotherRequestUnderItIsRefused() throws {
        let port = try startAPI()
        // A second dashboard over the same queue: requests under one key meet in the database.
        let second = try startAPI()
        let key = "Idempotency-Key: order-7"
        let input = inputs.appendingPathComponent("a.mov").path
        let output = outputs.appendingPathComponent("one.mp4").path
        let body = #"{"inputs":["\#(input)"],"options":{"min-duration":"0"},"output":"\#(output)"}"#
        let first = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: body, headers: [key])
        XCTAssertEqual(first.status, 201, "\(first.json)")
        // The same request with its fields in another order and spaced otherwise is a repeat.
        let reordered = #"{ "output": "\#(output)",  "options": {"min-duration": "0"}, "inputs": ["\#(input)"] }"#
        let repeated = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: reordered, headers: [key])
        XCTAssertEqual(repeated.status, 200)
        XCTAssertEqual(repeated.headers["idempotent-replayed"], "true")
        XCTAssertEqual(repeated.json["id"] as? Int, first.json["id"] as? Int)
        let other = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("two.mp4"), headers: [key])
        XCTAssertEqual(other.status, 422)
        XCTAssertTrue(message(other.json).contains("Idempotency-Key was used for another request"), "\(other.json)")
        // Keys are each caller's: the dashboard's token may use the same one for its own job.
        let theirs = try call(port, "POST", "/api/v1/jobs", token: dashboardToken, body: job("two.mp4"), headers: [key])
        XCTAssertEqual(theirs.status, 201, "\(theirs.json)")
        // Requests under one key made at once, each asking for another job, make one job.
        // 25 threads of 4 requests each (a dashboard serves 32 connections of one client at once),
        // to the two dashboards in turn.
        let results = Locked<[Int]>([])
        let bodies = try (0..<100).map {
            String(decoding: try JSONSerialization.data(withJSONObject: job("race-\($0).mp4")), as: UTF8.self)
        }
        let headers = ["Authorization: Bearer \(ciToken)", "Content-Type: application/json", "Idempotency-Key: race"]
        let group = DispatchGroup()
        for thread in 0..<25 {
            group.enter()
            Thread {
                for index in thread * 4..<thread * 4 + 4 {
                    let status =
                        (try? RawHTTP(port: index % 2 == 0 ? port : second).request(
                            "POST", "/api/v1/jobs", headers: headers, body: bodies[index]))?
                        .status ?? -1
                    results.update { $0.append(status) }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let statuses = results.value
        XCTAssertEqual(statuses.filter { $0 == 201 }.count, 1, "\(statuses)")
        XCTAssertEqual(statuses.filter { $0 == 422 }.count, 99, "\(statuses)")
        XCTAssertEqual(try value("SELECT count(*) FROM vmerge.jobs WHERE name LIKE 'race-%'"), "1")
    }

    func testANetworkCallerNamesOnlyWhatTheOperatorAllows() throws {
        let port = try startAPI(["--max-queued", "2"])
        try FileManager.default.createSymbolicLink(
            atPath: inputs.appendingPathComponent("link.mov").path, withDestinationPath: "/etc/hostname")
        let refusals: [([String: Any], Int, String)] = [
            (
                ["inputs": ["/etc/shadow"], "output": outputs.appendingPathComponent("x.mp4").path], 403,
                "/etc/shadow: outside the folders this server reads (--allow-inputs)"
            ),
            (
                [
                    "inputs": [inputs.path + "/../../../etc/passwd"],
                    "output": outputs.appendingPathComponent("x.mp4").path,
                ],
                422, "a job over HTTP names absolute paths, without '.' or '..'"
            ),
            (["inputs": ["a.mov"], "output": outputs.appendingPathComponent("x.mp4").path], 422, "absolute paths"),
            (job("x.mp4", input: "link.mov"), 422, "is a symbolic link; links are not followed here"),
            (job("x.mp4", input: "none.mov"), 422, "no such file or folder"),
            (
                ["inputs": [inputs.appendingPathComponent("a.mov").path], "output": "/tmp/x.mp4"], 403,
                "/tmp/x.mp4: not in a folder this server writes (--allow-outputs)"
            ),
            (
                ["inputs": [inputs.appendingPathComponent("a.mov").path], "output": outputs.path + "/sub/x.mp4"], 403,
                "not in a folder this server writes"
            ),
            (
                ["inputs": ["s3://theirs/a.mov"], "output": "s3://theirs/x.mp4"], 403,
                "s3://theirs/a.mov is not under a prefix the operator allows (--allow-remote)"
            ),
            (
                [
                    "inputs": [inputs.appendingPathComponent("a.mov").path],
                    "output": outputs.appendingPathComponent("x.mp4").path,
                    "options": ["poster": "../x.jpg"],
                ], 422, "expected a file name ending in '.jpg'"
            ),
            (["inputs": [inputs.appendingPathComponent("a.mov").path]], 422, "not a job:"),
        ]
        for (body, status, expected) in refusals {
            let refused = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: body)
            XCTAssertEqual(refused.status, status, "\(body): \(refused.json)")
            XCTAssertTrue(message(refused.json).contains(expected), "\(body): \(refused.json)")
        }
        XCTAssertEqual(try value("SELECT count(*) FROM vmerge.jobs"), "0", "nothing refused was added")
        // Tokens and their scopes.
        let anonymous = try call(port, "POST", "/api/v1/jobs", token: nil, body: job("x.mp4"))
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(anonymous.headers["www-authenticate"], "Bearer")
        XCTAssertEqual(
            try call(port, "POST", "/api/v1/jobs", token: "not-a-token-of-this-server", body: job("x.mp4")).status, 401)
        let viewer = try call(port, "POST", "/api/v1/jobs", token: readerToken, body: job("x.mp4"))
        XCTAssertEqual(viewer.status, 403)
        XCTAssertEqual(message(viewer.json), "the token 'viewer' has no 'submit' scope")
        XCTAssertEqual(try call(port, "POST", "/api/v1/queue/pause", token: ciToken).status, 403)
        // The body's limit, its type, and the queue's depth.
        let big = try RawHTTP(port: port).request(
            "POST", "/api/v1/jobs", headers: ["Authorization: Bearer \(ciToken)", "Content-Type: application/json"],
            body: "{\"name\": \"" + String(repeating: "x", count: 300_000) + "\"}")
        XCTAssertEqual(big.status, 413)
        let form = try RawHTTP(port: port).request(
            "POST", "/api/v1/jobs", headers: ["Authorization: Bearer \(ciToken)", "Content-Type: text/plain"],
            body: "{}")
        XCTAssertEqual(form.status, 415)
        XCTAssertEqual(try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("q1.mp4")).status, 201)
        XCTAssertEqual(try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("q2.mp4")).status, 201)
        let full = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("q3.mp4"))
        XCTAssertEqual(full.status, 429)
        XCTAssertEqual(full.headers["retry-after"], "30")
    }

    /// `queue add --json` shows each job in the words of the API's body: posted as it is, it is the
    /// same job.
    func testQueueAddShowsTheBodyTheAPITakes() throws {
        let port = try startAPI()
        let list = folder.appendingPathComponent("list.jsonl")
        try JSONSerialization.data(withJSONObject: job("trip.mp4")).write(to: list)
        let added = vmerge(["queue", "add", "--db", database, "--json", list.path])
        XCTAssertEqual(added.status, 0, added.stderr)
        let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(added.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(shown["added"] as? Int, 1)
        let entry = try XCTUnwrap((shown["jobs"] as? [[String: Any]])?.first)
        XCTAssertEqual(entry["id"] as? Int, 1)
        let body = try XCTUnwrap(entry["job"] as? [String: Any])
        let posted = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: body)
        XCTAssertEqual(posted.status, 200, "\(posted.json)")
        XCTAssertEqual(posted.json["id"] as? Int, 1)
    }

    /// A job keeps to its roots when it runs, not only when it was checked: a link planted in
    /// place of its input after it was added leads nowhere.
    func testTheWorkerKeepsToTheRootsWhenItRuns() throws {
        let port = try startAPI()
        XCTAssertEqual(try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("trip.mp4")).status, 201)
        let input = inputs.appendingPathComponent("a.mov").path
        try FileManager.default.removeItem(atPath: input)
        try FileManager.default.createSymbolicLink(atPath: input, withDestinationPath: "/etc/hostname")
        let worker = vmerge(["worker", "--db", database, "--once", "--poll-interval", "0.2"])
        XCTAssertEqual(worker.status, 1, worker.stderr)
        let failed = try call(port, "GET", "/api/v1/jobs/1", token: readerToken)
        XCTAssertEqual(failed.json["state"] as? String, "failed", "\(failed.json)")
        XCTAssertTrue((failed.json["error"] as? String ?? "").contains("is a symbolic link"), "\(failed.json)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: outputs.appendingPathComponent("trip.mp4").path))
    }

    /// The document is valid OpenAPI 3.1 (checked by openapi-spec-validator, from PyPI), names
    /// every job option the command line takes, and what the API answers fits it.
    func testTheOpenAPIDocumentIsValidNamesEveryJobOptionAndFitsTheAnswers() throws {
        let port = try startAPI(["--allow-remote", "https://hooks.example.com/"])
        let document = try RawHTTP(port: port).request("GET", "/api/v1/openapi.json")
        XCTAssertEqual(document.status, 200)
        let spec = folder.appendingPathComponent("openapi.json")
        try document.body.write(to: spec)
        let request = folder.appendingPathComponent("request.json")
        var body = job("trip.mp4")
        body["notify"] = ["https://hooks.example.com/vmerge"]
        body["metadata"] = ["build": 4711]
        try JSONSerialization.data(withJSONObject: body).write(to: request)
        let added = try RawHTTP(port: port).request(
            "POST", "/api/v1/jobs", headers: ["Authorization: Bearer \(ciToken)", "Content-Type: application/json"],
            body: String(decoding: try Data(contentsOf: request), as: UTF8.self))
        XCTAssertEqual(added.status, 201, added.text)
        try added.body.write(to: folder.appendingPathComponent("job.json"))
        let check = """
            import json, sys
            from openapi_spec_validator import validate
            from openapi_schema_validator import validate as fits, OAS31Validator
            spec = json.load(open(sys.argv[1]))
            validate(spec)
            schemas = spec["components"]["schemas"]
            fits(json.load(open(sys.argv[2])), schemas["JobRequest"], cls=OAS31Validator)
            fits(json.load(open(sys.argv[3])), schemas["Job"], cls=OAS31Validator)
            print("valid")
            """
        let result = try runProgram(
            URL(fileURLWithPath: S3TestServer.python),
            ["-c", check, spec.path, request.path, folder.appendingPathComponent("job.json").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "valid\n")
        let parsed = try XCTUnwrap(try JSONSerialization.jsonObject(with: document.body) as? [String: Any])
        let components = try XCTUnwrap(parsed["components"] as? [String: Any])
        let requestSchema = try XCTUnwrap((components["schemas"] as? [String: Any])?["JobRequest"] as? [String: Any])
        let options = try XCTUnwrap(
            ((requestSchema["properties"] as? [String: Any])?["options"] as? [String: Any])?["properties"]
                as? [String: Any])
        XCTAssertEqual(Set(options.keys), Set(JobOption.all.map(\.name)))
    }

    /// What a hostile tester found: a body up to the API's cap is read whatever its framing, a
    /// receiver must be the operator's, a job's metadata comes back exactly or is refused, and the
    /// same job asked for by another caller with other receivers is refused, not silently merged.
    func testEventsFieldsAreTheOperatorsAndComeBackExactly() throws {
        let port = try startAPI(["--allow-remote", "https://hooks.example.com/"])
        var body = job("big.mp4")
        body["metadata"] = ["note": String(repeating: "x", count: 10_000), "id": 9_007_199_254_740_993]
        body["notify"] = ["https://hooks.example.com/a"]
        let big = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: body)
        XCTAssertEqual(big.status, 201, "a 10 KB body with its Content-Length: \(big.json)")
        let spec = try XCTUnwrap(try value("SELECT spec->'metadata'->>'id' FROM vmerge.jobs WHERE id = 1"))
        XCTAssertEqual(spec, "9007199254740993")
        for (metadata, expected) in [
            (["a": "x\u{0}y"] as [String: Any], "holds a NUL character"),
            (["n": 1e300] as [String: Any], "neither a 64-bit integer nor one a double holds exactly"),
        ] {
            var bad = job("bad.mp4")
            bad["metadata"] = metadata
            let refused = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: bad)
            XCTAssertEqual(refused.status, 422, "\(refused.json)")
            XCTAssertTrue(message(refused.json).contains(expected), "\(refused.json)")
        }
        var elsewhere = job("x.mp4")
        elsewhere["notify"] = ["https://someone-else.example.net/hook"]
        let foreign = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: elsewhere)
        XCTAssertEqual(foreign.status, 403)
        XCTAssertTrue(message(foreign.json).contains("events go only to receivers under the operator's --allow-remote"))
        // The same job, other receivers: refused; a caller that may not read learns nothing of it.
        body["notify"] = ["https://hooks.example.com/b"]
        let other = try call(port, "POST", "/api/v1/jobs", token: dashboardToken, body: body)
        XCTAssertEqual(other.status, 409)
        XCTAssertTrue(message(other.json).contains("with other notify or metadata; not changed"), "\(other.json)")
        try Data("ci read,submit \(ciToken)\nviewer read \(readerToken)\nblind submit blind-token-0123456789\n".utf8)
            .write(to: folder.appendingPathComponent("api-tokens"))
        let blindPort = try startAPI(["--allow-remote", "https://hooks.example.com/"])
        body["notify"] = ["https://hooks.example.com/a"]
        let blind = try call(blindPort, "POST", "/api/v1/jobs", token: "blind-token-0123456789", body: body)
        XCTAssertEqual(blind.status, 409)
        XCTAssertNil(blind.json["report"])
        XCTAssertEqual(
            message(blind.json), "the same job (the same inputs, options and output) is in the queue already")
    }

    func testOperatingTheQueueOverTheAPI() throws {
        let port = try startAPI()
        XCTAssertEqual(try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("trip.mp4")).status, 201)
        let paused = try call(port, "POST", "/api/v1/queue/pause", token: dashboardToken)
        XCTAssertEqual(paused.status, 200)
        XCTAssertEqual(paused.json["changed"] as? Bool, true)
        XCTAssertEqual(try value("SELECT paused_by FROM vmerge.control"), "api (dashboard)")
        let cancelled = try call(port, "POST", "/api/v1/jobs/1/cancel", token: dashboardToken)
        XCTAssertEqual(cancelled.status, 200)
        XCTAssertEqual(cancelled.json["state"] as? String, "cancelled")
        let again = try call(port, "POST", "/api/v1/jobs/1/cancel", token: dashboardToken)
        XCTAssertEqual(again.status, 409)
        XCTAssertEqual(message(again.json), "job 1 is cancelled; only a queued or running job can be cancelled")
        XCTAssertEqual(
            try call(port, "POST", "/api/v1/jobs/1/retry", token: dashboardToken).json["state"] as? String, "queued")
        XCTAssertEqual(
            try call(port, "POST", "/api/v1/queue/resume", token: dashboardToken).json["paused"] as? Bool, false)
        // Who did what is in the job's log: the API by its token's name, the command line by its user.
        XCTAssertEqual(vmerge(["queue", "cancel", "--db", database, "1"]).status, 0)
        let log = try XCTUnwrap(try value("SELECT log FROM vmerge.jobs WHERE id = 1"))
        let lines = log.split(separator: "\n").map {
            $0.split(separator: " ", maxSplits: 1).last.map(String.init) ?? ""
        }
        XCTAssertEqual(lines.prefix(2), ["api (dashboard): cancelled", "api (dashboard): queued again"], log)
        XCTAssertTrue(lines.last?.hasSuffix(": cancelled") == true && lines.last?.contains("@") == true, log)
        XCTAssertEqual(try call(port, "GET", "/api/v1/jobs/9", token: readerToken).status, 404)
        XCTAssertEqual(try call(port, "GET", "/api/v1/jobs/1/cancel", token: readerToken).status, 405)
        XCTAssertEqual(try call(port, "GET", "/api/v1/nothing", token: readerToken).status, 404)
        XCTAssertEqual(try call(port, "GET", "/api/v1/jobs?state=lost", token: readerToken).status, 400)
        let document = try call(port, "GET", "/api/v1/openapi.json", token: nil)
        XCTAssertEqual(document.status, 200)
        XCTAssertEqual(document.json["openapi"] as? String, "3.1.0")
    }
}

extension JobAPITests {
    /// What a new user met: every answer under /api/ is the API's JSON (the server's own
    /// refusals too), a body without a type is read as JSON and one of another type is 415, a
    /// failed job shows no progress of its attempt, and a database restart is no outage.
    func testEveryAnswerIsTheAPIsAndARestartedDatabaseIsNotAnOutage() throws {
        let port = try startAPI()
        let raw = RawHTTP(port: port)
        let bearer = "Authorization: Bearer \(ciToken)"
        let refusals = [
            try raw.request("DELETE", "/api/v1/jobs/1", headers: [bearer]),
            try raw.request(
                "POST", "/api/v1/jobs", headers: [bearer, "Content-Type: text/plain"], body: #"{"inputs": []}"#),
            try raw.request(
                "POST", "/api/v1/jobs", headers: [bearer, "Content-Type: application/json"],
                body: String(repeating: " ", count: 300 * 1024)),
        ]
        XCTAssertEqual(refusals.map(\.status), [405, 415, 413])
        for answer in refusals {
            XCTAssertEqual(answer.headers["content-type"], "application/json", answer.text)
            let error = (try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any])?["error"]
            XCTAssertEqual((error as? [String: Any])?["status"] as? Int, answer.status, answer.text)
        }
        XCTAssertEqual(refusals[0].headers["allow"], "GET, HEAD, POST")
        // curl -d without -H sends its own type: refused; no type at all: read as JSON.
        let untyped = String(decoding: try JSONSerialization.data(withJSONObject: job("untyped.mp4")), as: UTF8.self)
        XCTAssertEqual(try raw.request("POST", "/api/v1/jobs", headers: [bearer], body: untyped).status, 201)

        try FileManager.default.copyItem(
            atPath: fixture("bad_text.mov"), toPath: inputs.appendingPathComponent("bad.mov").path)
        let bad = try call(port, "POST", "/api/v1/jobs", token: ciToken, body: job("bad.mp4", input: "bad.mov"))
        XCTAssertEqual(bad.status, 201)
        XCTAssertEqual(vmerge(["worker", "--db", database, "--once", "--poll-interval", "0.2"]).status, 1)
        let failed = try call(port, "GET", "/api/v1/jobs/\(bad.json["id"] as? Int ?? 0)", token: readerToken)
        XCTAssertEqual(failed.json["state"] as? String, "failed")
        XCTAssertTrue(failed.json["progress"] is NSNull, "\(failed.json)")

        // The database restarts; the dashboard's next request meets a fresh connection.
        try server.restart()
        Thread.sleep(forTimeInterval: 2.2)
        XCTAssertEqual(try call(port, "GET", "/api/v1/jobs/1", token: readerToken).status, 200)
        XCTAssertEqual(try call(port, "POST", "/api/v1/queue/pause", token: dashboardToken).status, 200)
    }
}

extension JobAPITests {
    /// Requests under one key that meet in the database at the same instant make one job and are
    /// answered without an error: eight connections released together by a barrier, each asking
    /// for another job under the same key, twenty rounds. (Without the key's lock, two of them
    /// both find no key, and the second's insert of the key fails: a 503 for a plain repeat.)
    func testSubmissionsUnderOneKeyAtTheSameInstantMakeOneJob() throws {
        let input = inputs.appendingPathComponent("a.mov").path
        let queues = try (0..<8).map { _ in try JobQueue(connecting: database) }
        for round in 0..<20 {
            let key = IdempotencyKey(caller: "ci", key: "round-\(round)")
            let results = Locked<[String]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for (index, queue) in queues.enumerated() {
                group.enter()
                let job = Job(
                    name: "r\(round)-\(index)", inputs: [JobInput(FileName(input))],
                    output: FileName(outputs.appendingPathComponent("r\(round)-\(index).mp4").path))
                // Each thread alone uses its connection.
                nonisolated(unsafe) let connection = queue
                Thread {
                    start.wait()
                    let result: String
                    switch Result(catching: {
                        try connection.submit(job, maxAttempts: 3, idempotency: key, maxQueued: nil)
                    }) {
                    case .success(.success(let submission)): result = "\(submission.outcome)"
                    case .success(.failure(let refusal)): result = "\(refusal)"
                    case .failure(let error): result = "error: \(error)"
                    }
                    results.update { $0.append(result) }
                    group.leave()
                }.start()
            }
            for _ in queues { start.signal() }
            group.wait()
            XCTAssertEqual(
                results.value.sorted(), ["added"] + Array(repeating: "keyReused", count: 7), "round \(round)")
        }
        XCTAssertEqual(try value("SELECT count(*) FROM vmerge.jobs WHERE name LIKE 'r%-%'"), "20")
    }
}
