import Foundation
import XCTest

@testable import VMergeQueue

/// What an operator asks the page first, asked in headless Chromium: why a job came out as it did
/// (each input's outcome), signing in without losing the filter, retrying every failed job, and
/// the banner that says jobs wait with no live worker. Screenshots are kept as test artefacts.
extension DashboardBrowserTests {
    func testAnOperatorReadsOutcomesRetriesEveryFailedJobAndSeesThatNoWorkerIsAlive() throws {
        // A job whose second input is shorter than its --min-duration, and one that cannot be read.
        let jobs: [[String: Any]] = [
            [
                "name": "mixed", "output": "mixed.mp4", "options": ["min-duration": "2"],
                "inputs": [
                    fixture("a_none_640x480_30fps_aac44k_stereo.mov"), fixture("i_short_1.5s_640x480_30fps.mov"),
                ],
            ],
            ["name": "broken", "output": "broken.mp4", "inputs": [fixture("bad_text.mov")]],
        ]
        let list = folder.appendingPathComponent("operator.jsonl")
        let lines = try jobs.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: list)
        XCTAssertEqual(vmerge(["queue", "add", "--db", database, "--out", folder.path, list.path]).status, 0)
        let worker = vmerge(["worker", "--db", database, "--name", "w1", "--once", "--poll-interval", "0.2"])
        XCTAssertEqual(worker.status, 1, worker.stderr)  // the broken job failed
        let token = "operator-token-0123456789"
        let tokenFile = folder.appendingPathComponent("token")
        try Data((token + "\n").utf8).write(to: tokenFile)
        chmod(tokenFile.path, 0o600)
        let base = try startPage(["--token-file", tokenFile.path])

        // The job's page says what became of each input without JSON.
        try page.navigate(base + "jobs/1")
        try page.waitFor("!!document.getElementById('input-outcomes')", timeout: 10)
        let outcomes = try page.evaluate(
            """
            JSON.stringify([...document.querySelectorAll('#input-outcomes tr')].slice(1)
                .map(r => [...r.cells].map(c => c.textContent)))
            """, as: String.self)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(outcomes.utf8)) as? [[String]])
        XCTAssertEqual(rows.map { $0[1] }, ["kept", "dropped-short"], outcomes)
        XCTAssertTrue(rows.last?[0].hasSuffix("i_short_1.5s_640x480_30fps.mov") ?? false, outcomes)
        XCTAssertEqual(rows.last?[2], "dropped: video lasts 1.5 s, under the 2 s minimum", outcomes)
        XCTAssertTrue(
            try page.evaluate("document.getElementById('output-made').textContent", as: String.self)
                .hasPrefix("Made: "))
        assertWindowSizedPNG(try page.screenshot(to: artefacts.appendingPathComponent("dashboard-job-outcomes.png")))

        // Signing in on the failed jobs' list comes back to that list.
        try page.navigate(base + "?state=failed")
        _ = try page.evaluate(
            """
            (() => { const f = document.querySelector('form[action="/login"]');
              f.querySelector('input[name=token]').value = \(BrowserPage.literal(token)); f.submit(); return 1; })()
            """)
        try page.waitFor(
            "location.search === '?state=failed' && !!document.getElementById('retry-failed')", timeout: 10)
        XCTAssertTrue(
            try page.evaluate("document.getElementById('retry-failed').textContent", as: String.self)
                .contains("all 1 failed job"))

        // Retry them all: ticked and sent; the one failed job is queued again, and no worker is
        // alive to take it: the banner says so at once.
        _ = try page.evaluate(
            """
            (() => { const f = document.getElementById('retry-failed');
              f.querySelector('input[name=confirm]').checked = true; f.submit(); return 1; })()
            """)
        try page.waitFor("(document.querySelector('.notice') || {}).textContent === '1 failed job is queued again'")
        try page.navigate(base)
        try page.waitFor("!!document.getElementById('no-workers')", timeout: 10)
        XCTAssertTrue(
            try page.evaluate("document.getElementById('no-workers').textContent", as: String.self)
                .hasPrefix("1 job is queued and no worker is alive to take it"))
        XCTAssertEqual(try value("SELECT state FROM vmerge.jobs WHERE name = 'broken'"), "queued")
        let stopped = try page.evaluate("document.getElementById('workers').textContent", as: String.self)
        XCTAssertTrue(stopped.contains("w1") && stopped.contains("stopped"), stopped)
        // No button's text breaks over two lines at this width: its text's line boxes, not the
        // button's box (an inline-block is one box however its text wraps).
        let wrapped = try page.evaluate(
            """
            [...document.querySelectorAll('button, .clip')].filter(e => {
              const r = document.createRange(); r.selectNodeContents(e);
              return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1;
            }).map(e => e.textContent)
            """, as: [String].self)
        XCTAssertEqual(wrapped, [])
        assertWindowSizedPNG(try page.screenshot(to: artefacts.appendingPathComponent("dashboard-no-worker.png")))
        XCTAssertEqual(try problems(), [])
    }
}
