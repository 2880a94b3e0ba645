import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// The dashboard's pages over a real queue: the jobs a page at a time and filtered, a job's own
/// page after a real worker merged it (inputs, options, report, log, poster), the poster served
/// only as the job's own JPEG, and pause and resume from the page.
final class DashboardPagesTests: DashboardTestCase {
    private let form = "Content-Type: application/x-www-form-urlencoded"

    /// The ids of the jobs' rows on a page, in order.
    private func rows(_ page: String) -> [Int] {
        page.matches(of: /<tr id="row-([0-9]+)">/).compactMap { Int($0.output.1) }
    }

    /// 120 jobs: the newest 50 first, `older` goes on from the last, the filter by state and by
    /// name (any case, the user's % taken literally) with its count; the filter's text escaped.
    func testJobsArePagedAndFiltered() throws {
        let sql = try PGConnection(database)
        try insertJobs(120, into: sql)
        try sql.execute("UPDATE vmerge.jobs SET state = 'failed' WHERE id IN (30, 90)")
        try sql.execute("UPDATE vmerge.jobs SET name = 'Trip 100% ' || id WHERE id IN (7, 70, 107)")
        let (_, port) = try startDashboard()
        let http = RawHTTP(port: port)
        let first = try http.request("GET", "/").text
        XCTAssertEqual(rows(first), Array((71...120).reversed()))
        XCTAssertTrue(first.contains("<span id=\"jobs-total\">120</span>"), first)
        let older = try XCTUnwrap(first.firstMatch(of: /<a id="older" href="([^"]+)">/)?.output.1)
        XCTAssertEqual(older, "/?before=71")
        let second = try http.request("GET", String(older)).text
        XCTAssertEqual(rows(second), Array((21...70).reversed()))
        XCTAssertTrue(second.contains("<a id=\"newest\" href=\"/\">newest</a>"), second)
        let third = try http.request("GET", "/?before=21").text
        XCTAssertEqual(rows(third), Array((1...20).reversed()))
        XCTAssertNil(third.firstMatch(of: /id="older"/))

        let failed = try http.request("GET", "/?state=failed").text
        let failedIDs = try PGConnection(database).execute("SELECT id FROM vmerge.jobs WHERE state = 'failed' ORDER BY id DESC")
        XCTAssertEqual(rows(failed), (0..<failedIDs.rowCount).compactMap { failedIDs.value($0, 0).flatMap { Int($0) } })
        XCTAssertTrue(failed.contains("<option value=\"failed\" selected>failed</option>"), failed)
        XCTAssertGreaterThan(failedIDs.rowCount, 0)
        XCTAssertTrue(
            failed.contains("<h2 id=\"jobs-heading\">failed jobs: <span id=\"jobs-total\">\(failedIDs.rowCount)</span></h2>"),
            failed)
        let named = try http.request("GET", "/?name=trip%20100%25").text
        XCTAssertEqual(rows(named), [107, 70, 7])
        XCTAssertTrue(named.contains("value=\"trip 100%\""), named)
        let hostile = try http.request("GET", "/?name=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&state=bogus&before=x").text
        XCTAssertFalse(hostile.contains("<script>alert"), hostile)
        XCTAssertTrue(hostile.contains("value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""), hostile)
        XCTAssertTrue(hostile.contains("<span id=\"jobs-total\">0</span>"), hostile)
        XCTAssertTrue(hostile.contains("<option value=\"\" selected>every state</option>"), hostile)
    }

    /// A job a real worker merged, with a poster: its page shows its inputs, output, the option it
    /// set, the report and the worker's lines; its poster is served as the JPEG the job wrote.
    func testAJobsPageShowsWhatARealRunLeft() throws {
        let out = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let clip = fixture("a_none_640x480_30fps_aac44k_stereo.mov")
        let job = #"{"name": "<b>trip</b>", "inputs": ["\#(clip)"], "output": "trip.mp4", "options": {"poster": "{name}.jpg"}}"#
        let list = folder.appendingPathComponent("jobs.jsonl")
        try Data((job + "\n").utf8).write(to: list)
        let added = vmerge(["queue", "add", "--db", database, "--out", out.path, "--min-duration", "0", list.path])
        XCTAssertEqual(added.status, 0, added.stderr)
        let worker = vmerge(["worker", "--db", database, "--name", "w<1>", "--once", "--poll-interval", "0.2"])
        XCTAssertEqual(worker.status, 0, worker.stderr)
        let (_, port) = try startDashboard()
        let page = try RawHTTP(port: port).request("GET", "/jobs/1")
        XCTAssertEqual(page.status, 200)
        let text = page.text
        for expected in [
            "<h2 id=\"job-heading\">Job 1: &lt;b&gt;trip&lt;/b&gt;</h2>",
            "<span class=\"state-done\" id=\"job-state\">done</span>",
            "<ol id=\"inputs\"><li>\(clip)</li></ol>", "<p id=\"output\">\(out.path)/trip.mp4</p>",
            "<tr><th>poster</th><td>{name}.jpg</td></tr>", "<tr><th>attempts</th><td>1 of 3</td></tr>",
            "<img class=\"poster\" id=\"poster\" src=\"/jobs/1/poster\" alt=\"the poster\">",
            "\n  &quot;status&quot; : &quot;ok&quot;,\n", "&quot;poster&quot; : &quot;\(out.path)/trip.jpg&quot;",
            // What the run did, without JSON: the input's outcome and what was made.
            "<table id=\"input-outcomes\"><tr><th>input</th><th>outcome</th><th>why</th></tr><tr><td class=\"name\">\(clip)</td>"
                + "<td><span class=\"outcome-kept\">kept</span></td>",
            "<p id=\"output-made\">Made: 0:03 of video, ",
            "<details id=\"report-details\"><summary>The last attempt's whole report (JSON)</summary>",
        ] {
            XCTAssertTrue(text.contains(expected), "missing \(expected) in\n\(text)")
        }
        let log = try XCTUnwrap(text.firstMatch(of: /<pre id="log">([^<]*)<\/pre>/)?.output.1, text)
        XCTAssertTrue(log.contains(" w&lt;1&gt;: job 1 &lt;b&gt;trip&lt;/b&gt;: claimed (attempt 1 of 3)\n"), String(log))
        let poster = try RawHTTP(port: port).request("GET", "/jobs/1/poster")
        XCTAssertEqual(poster.status, 200)
        XCTAssertEqual(poster.headers["content-type"], "image/jpeg")
        XCTAssertEqual(poster.body, try Data(contentsOf: out.appendingPathComponent("trip.jpg")))
        // The front page's workers: what w<1> did in the last day.
        let front = try RawHTTP(port: port).request("GET", "/").text
        XCTAssertTrue(
            front.contains(
                "<tr><td class=\"name\">w&lt;1&gt;</td><td><span class=\"worker-stopped\">stopped</span></td>"
                    + "<td class=\"number\">0</td><td class=\"number\">1</td>"
                    + "<td class=\"number\">0</td><td></td><td>"), front)
        XCTAssertEqual(try RawHTTP(port: port).request("GET", "/jobs/2").status, 404)
        XCTAssertEqual(try RawHTTP(port: port).request("GET", "/jobs/1/poster/x").status, 404)
        XCTAssertEqual(try RawHTTP(port: port).request("GET", "/jobs/01x").status, 404)
    }

    /// The poster route serves the job's own written JPEG only: not when the row is changed to
    /// name another file (its spec, or its report), not through a link, not a file that is not a
    /// JPEG, not before the job is done.
    func testThePosterIsOnlyTheJobsOwnJPEG() throws {
        let out = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let poster = out.appendingPathComponent("p.jpg")
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0, count: 60))
        try jpeg.write(to: poster)
        let secret = folder.appendingPathComponent("secret.jpg")
        try (Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data("secret".utf8)).write(to: secret)
        let spec = { (output: String, posterName: String) in
            #"{"name": "p", "inputs": ["a.mov"], "output": "\#(output)", "options": {"poster": "\#(posterName)"}}"#
        }
        let report = { (path: String) in #"{"status": "done", "output": {"path": "x", "poster": "\#(path)"}}"# }
        try sql(
            "INSERT INTO vmerge.jobs (job_key, name, spec, state, report) VALUES ('k', 'p', $1::jsonb, 'done', $2::jsonb)",
            [spec(out.appendingPathComponent("p.mp4").path, "p.jpg"), report(poster.path)])
        let (_, port) = try startDashboard()
        let get = { try RawHTTP(port: port).request("GET", "/jobs/1/poster") }
        XCTAssertEqual(try get().status, 200)
        XCTAssertEqual(try get().body, jpeg)
        // The report names another file than the spec's poster.
        try sql("UPDATE vmerge.jobs SET report = $1::jsonb", [report(secret.path)])
        XCTAssertEqual(try get().status, 404)
        // Both name it, but through the spec's output folder: still only where the job wrote.
        try sql(
            "UPDATE vmerge.jobs SET spec = $1::jsonb, report = $2::jsonb",
            [spec(folder.appendingPathComponent("x.mp4").path, "secret.jpg"), report(secret.path)])
        XCTAssertEqual(try get().status, 200, "the row names it in both places: served as the job's poster")
        // A link in the poster's place is not followed; a file that is not a JPEG is not served.
        try sql("UPDATE vmerge.jobs SET spec = $1::jsonb, report = $2::jsonb", [spec(out.appendingPathComponent("p.mp4").path, "p.jpg"), report(poster.path)])
        try FileManager.default.removeItem(at: poster)
        try FileManager.default.createSymbolicLink(at: poster, withDestinationURL: secret)
        XCTAssertEqual(try get().status, 404)
        try FileManager.default.removeItem(at: poster)
        try Data("root:x:0:0\n".utf8).write(to: poster)
        XCTAssertEqual(try get().status, 404)
        try jpeg.write(to: poster)
        try sql("UPDATE vmerge.jobs SET state = 'running'")
        XCTAssertEqual(try get().status, 404)
    }

    /// A link anywhere in the poster's path is not followed: a job whose output folder is (or
    /// lies under) a link to another folder gets a 404, never that folder's JPEG; the same file
    /// named through the real folder is served.
    func testThePosterIsNotServedThroughALinkedFolder() throws {
        let real = folder.appendingPathComponent("real/deeper")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 7, count: 60))
        try jpeg.write(to: real.appendingPathComponent("p.jpg"))
        let linked = folder.appendingPathComponent("linked")
        try FileManager.default.createSymbolicLink(at: linked, withDestinationURL: folder.appendingPathComponent("real"))
        let row = { (out: URL) -> [String?] in
            let (output, poster) = (out.appendingPathComponent("p.mp4").path, out.appendingPathComponent("p.jpg").path)
            return [
                #"{"name": "p", "inputs": ["a.mov"], "output": "\#(output)", "options": {"poster": "p.jpg"}}"#,
                #"{"status": "done", "output": {"path": "x", "poster": "\#(poster)"}}"#,
            ]
        }
        try sql(
            "INSERT INTO vmerge.jobs (job_key, name, spec, state, report) VALUES ('k', 'p', $1::jsonb, 'done', $2::jsonb)",
            row(linked.appendingPathComponent("deeper")))
        let (_, port) = try startDashboard()
        let get = { try RawHTTP(port: port).request("GET", "/jobs/1/poster") }
        XCTAssertEqual(try get().status, 404, "served through the link 'linked'")
        // The link as the last folder.
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("last"), withDestinationURL: real)
        try sql("UPDATE vmerge.jobs SET spec = $1::jsonb, report = $2::jsonb", row(folder.appendingPathComponent("last")))
        XCTAssertEqual(try get().status, 404, "served through the link 'last'")
        try sql("UPDATE vmerge.jobs SET spec = $1::jsonb, report = $2::jsonb", row(real))
        XCTAssertEqual(try get().status, 200)
        XCTAssertEqual(try get().body, jpeg)
    }

    /// A running job's progress written by hand with numbers no worker writes (past Int64, below
    /// zero, 1e300, text): the front page, the job's page and the metrics are still served, the
    /// bytes shown pinned to what an Int64 holds.
    func testARowWithHostileNumbersIsShownNotFatal() throws {
        let progress = { (size: String) in
            #"{"phase": "encoding", "clip": -3, "clips": 1e300, "out_time": 1, "total_time": 2, "elapsed": -5, "#
                + #""total_size": \#(size)}"#
        }
        try sql(
            "INSERT INTO vmerge.jobs (job_key, name, spec, state, worker, progress) VALUES "
                + "('k', 'p', '{\"name\": \"p\", \"inputs\": [\"a.mov\"], \"output\": \"p.mp4\"}'::jsonb, 'running', 'w', $1::jsonb)",
            [progress("9000000000000000000")])
        let (_, port) = try startDashboard()
        for size in ["9000000000000000000", "-9000000000000000000", "1e300", "\"x\""] {
            try sql("UPDATE vmerge.jobs SET progress = $1::jsonb", [progress(size)])
            Thread.sleep(forTimeInterval: 1.1)  // past the snapshot the dashboard shares for a second
            for path in ["/", "/jobs/1", "/metrics"] {
                let answer = try RawHTTP(port: port).request("GET", path)
                XCTAssertEqual(answer.status, 200, "\(path) with total_size \(size)")
            }
        }
        // Half made of 9e18 bytes heads for 1.8e19: pinned to Int64.max (8 EiB, shown in TiB).
        try sql("UPDATE vmerge.jobs SET progress = $1::jsonb", [progress("9000000000000000000")])
        Thread.sleep(forTimeInterval: 1.1)
        let front = try RawHTTP(port: port).request("GET", "/").text
        XCTAssertTrue(front.contains("<td class=\"number\">8185452 TiB / ≈ 8388608 TiB</td>"), front)
    }

    /// Pause and resume from the dashboard: the page says who paused and since when, the gauge
    /// follows, and a worker claims nothing until the resume.
    func testPauseAndResumeFromTheDashboard() throws {
        let token = "pause-token-0123456789abcdef"
        let file = folder.appendingPathComponent("token")
        try Data(token.utf8).write(to: file)
        try addJobs(["a"])
        let (_, port) = try startDashboard(["--token-file", file.path])
        let http = RawHTTP(port: port)
        let paused = try http.request("POST", "/queue/pause", headers: [form, "Authorization: Bearer \(token)"])
        XCTAssertEqual(paused.status, 200)
        XCTAssertEqual(paused.text, "the queue is paused\n")
        let again = try http.request("POST", "/queue/pause", headers: [form, "Authorization: Bearer \(token)"])
        XCTAssertEqual(again.text, "the queue was already paused\n")
        let page = try http.request("GET", "/").text
        XCTAssertNotNil(page.firstMatch(of: #/<p class="paused" id="paused">The queue is paused since [0-9T:Z-]+ by dashboard \(token\): /#), page)
        XCTAssertTrue(try http.request("GET", "/metrics").text.contains("\nvmerge_queue_paused 1\n"))
        let worker = try WorkerProcess(
            ["worker", "--db", database, "--name", "w", "--poll-interval", "0.2"], log: folder.appendingPathComponent("w.log"))
        defer {
            worker.kill(SIGKILL)
            _ = worker.waitForExit(seconds: 5)
        }
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(try value("SELECT state FROM vmerge.jobs WHERE id = 1"), "queued", worker.log)
        let resumed = try http.request("POST", "/queue/resume", headers: [form, "Authorization: Bearer \(token)"])
        XCTAssertEqual(resumed.text, "the queue is resumed\n")
        XCTAssertFalse(try http.request("GET", "/").text.contains("id=\"paused\""))
        XCTAssertTrue(try http.request("GET", "/metrics").text.contains("\nvmerge_queue_paused 0\n"))
        let claimed = Date().addingTimeInterval(10)
        while try value("SELECT state FROM vmerge.jobs WHERE id = 1") == "queued" && Date() < claimed {
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertNotEqual(try value("SELECT state FROM vmerge.jobs WHERE id = 1"), "queued", worker.log)
    }
}
