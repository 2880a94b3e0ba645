import Foundation
import XCTest

@testable import VMergeQueue

/// `vmerge dashboard` as a person sees it: the built binary over a private PostgreSQL with real
/// jobs on real fixtures, its page loaded in headless Chromium (Browser.swift) and read from the
/// DOM. The assertions hold on what outlives a redesign of the page: the `count-<state>` element
/// ids, the jobs' names as text, "clip N of M" and a per cent for a running job, the title.
///
/// One browser serves the whole class (started by its first test); each test has a new tab.
final class DashboardBrowserTests: DashboardTestCase {
    nonisolated(unsafe) static var browser: Browser?

    var processes: [WorkerProcess] = []
    var page: BrowserPage!

    override func setUpWithError() throws {
        try super.setUpWithError()
        if DashboardBrowserTests.browser == nil { DashboardBrowserTests.browser = try Browser.launch() }
        page = try DashboardBrowserTests.browser?.newPage()
    }

    override func tearDownWithError() throws {
        page?.close()
        for process in processes {
            process.kill(SIGKILL)
            _ = process.waitForExit(seconds: 5)
        }
        try super.tearDownWithError()
    }

    override class func tearDown() {
        browser?.close()
        browser = nil
        super.tearDown()
    }

    static let states = ["queued", "running", "done", "failed", "cancelled"]

    /// Names a browser would run as markup if the page did not escape them.
    static let hostile = (
        image: "<img src=x onerror=alert(1)>", script: #""><script>alert(2)</script>"#,
        svg: #""><svg onload=alert(3)>"#, error: "<img src=y onerror=alert(4)>"
    )

    /// The page shows the database's counts, and names and errors from outside as the text they
    /// are: no element made from them, no dialog, nothing on the console.
    func testThePageShowsTheQueuesCountsAndHostileNamesAsText() throws {
        // Input files named as markup, copies of a fixture; a name with "/" can only be a job's.
        let image = try clip(named: DashboardBrowserTests.hostile.image + ".mov")
        let svg = try clip(named: DashboardBrowserTests.hostile.svg + ".mov")
        let plain = fixture("a_none_640x480_30fps_aac44k_stereo.mov")
        try addJobs([
            (DashboardBrowserTests.hostile.image, [image]), (DashboardBrowserTests.hostile.script, [svg]),
            ("plain", [plain]), ("broken", [plain]), ("dropped", [plain]),
        ])
        try PGConnection(database).execute(
            "UPDATE vmerge.jobs SET state = 'failed', finished_at = now(), last_error = $1 WHERE name = 'broken'",
            [DashboardBrowserTests.hostile.error])
        try PGConnection(database).execute(
            "UPDATE vmerge.jobs SET state = 'cancelled', finished_at = now() WHERE name = 'dropped'")
        let expected = try countsInDatabase()
        XCTAssertEqual(expected, ["queued": 3, "running": 0, "done": 0, "failed": 1, "cancelled": 1])

        try page.navigate(try startPage())
        try page.waitFor(
            "\(DashboardBrowserTests.countsScript) === \(BrowserPage.literal(json(expected)))", timeout: 10)
        XCTAssertTrue(try page.evaluate("document.title", as: String.self).contains("vmerge"))
        let text = try page.evaluate("document.body.innerText", as: String.self)
        for name in [DashboardBrowserTests.hostile.image, DashboardBrowserTests.hostile.script, "plain"] {
            XCTAssertTrue(text.contains(name), "\(name) is not on the page:\n\(text)")
        }
        XCTAssertTrue(text.contains(DashboardBrowserTests.hostile.error), text)
        // Nothing the names would make: no element with a handler, no image of "x" or "y", no svg
        // but the page's own chart, no script that calls alert.
        let made = try page.evaluate(
            """
            [...document.querySelectorAll('[onerror], [onload], img[src="x"], img[src="y"], svg:not(#hourly)')]
                .map(e => e.outerHTML)
                .concat([...document.scripts].filter(s => s.textContent.includes('alert')).map(s => s.outerHTML))
            """, as: [String].self)
        XCTAssertEqual(made, [])
        XCTAssertEqual(try problems(), [])
    }

    /// While a real worker merges a long job the page's counts move (queued, then running, then
    /// done) and the job's progress shows as "clip N of M" and a per cent; a screenshot of the page
    /// at that moment is kept as a test artefact.
    func testCountsAndProgressChangeWhileAWorkerMerges() throws {
        let clips = 60
        try addJobs([("long", Array(repeating: fixture("a_none_640x480_30fps_aac44k_stereo.mov"), count: clips))])
        try page.navigate(try startPage())
        try page.waitFor(
            "\(DashboardBrowserTests.countsScript) === \(BrowserPage.literal(json(try countsInDatabase())))")
        XCTAssertEqual(try countsOnPage()["queued"], 1)

        let worker = try WorkerProcess(
            ["worker", "--db", database, "--name", "b1", "--lease", "6", "--poll-interval", "0.2", "--once"],
            log: folder.appendingPathComponent("worker.log"))
        processes.append(worker)
        // Reloads twice a second serve a page that refreshes itself slowly (a meta refresh) as well
        // as one that polls. The job is running once it is counted so and its progress is shown,
        // and the merge moves on: a per cent above 0.
        let shown = "document.body.innerText"
        let percent = "Number((\(shown).match(/([0-9.]+) ?%/) || [])[1])"
        try page.waitFor(
            "document.getElementById('count-running').textContent.trim() === '1' "
                + "&& /clip [0-9]+ of \(clips)/.test(\(shown)) && \(percent) > 0",
            timeout: 30, reloadingEvery: 0.5)
        XCTAssertEqual(try countsOnPage()["queued"], 0)
        let running = try page.evaluate("document.body.innerText", as: String.self)
        XCTAssertTrue(running.contains("long"), running)
        XCTAssertTrue(running.contains("b1"), running)
        assertWindowSizedPNG(try page.screenshot(to: artefacts.appendingPathComponent("dashboard-running.png")))

        try page.waitFor(
            "document.getElementById('count-done').textContent.trim() === '1'", timeout: 60, reloadingEvery: 1)
        XCTAssertEqual(try countsOnPage(), ["queued": 0, "running": 0, "done": 1, "failed": 0, "cancelled": 0])
        XCTAssertEqual(worker.waitForExit(seconds: 30), 0, worker.log)
        XCTAssertEqual(try problems(), [])
    }

    // MARK: helpers

    /// What the page said went wrong: console messages, exceptions, failed loads, dialogs.
    func problems() throws -> [String] { try page.problems() }

    /// The page's counts, `{"queued": n, ...}` as JSON text with the keys in `states`' order.
    static let countsScript = """
        JSON.stringify(Object.fromEntries(\(json(states)).map(s =>
            [s, Number((document.getElementById('count-' + s) || {}).textContent)])))
        """

    func countsOnPage() throws -> [String: Int] {
        let text = try page.evaluate(DashboardBrowserTests.countsScript, as: String.self)
        return try JSONDecoder().decode([String: Int].self, from: Data(text.utf8))
    }

    /// The jobs by state as the database counts them, every state present.
    func countsInDatabase() throws -> [String: Int] {
        let result = try PGConnection(database).execute("SELECT state, count(*) FROM vmerge.jobs GROUP BY state")
        var counts = Dictionary(uniqueKeysWithValues: DashboardBrowserTests.states.map { ($0, 0) })
        for row in 0..<result.rowCount {
            if let state = result.value(row, 0), let count = result.value(row, 1).flatMap({ Int($0) }) {
                counts[state] = count
            }
        }
        return counts
    }

    /// `counts` as the counts script writes them: JSON with the keys in `states`' order.
    func json(_ counts: [String: Int]) -> String {
        "{" + DashboardBrowserTests.states.map { "\"\($0)\":\(counts[$0] ?? 0)" }.joined(separator: ",") + "}"
    }

    private static func json(_ strings: [String]) -> String {
        "[" + strings.map(BrowserPage.literal).joined(separator: ",") + "]"
    }

    /// A copy of a fixture named `name` in the test's folder; its path.
    func clip(named name: String) throws -> String {
        let clips = folder.appendingPathComponent("clips")
        try FileManager.default.createDirectory(at: clips, withIntermediateDirectories: true)
        let copy = clips.appendingPathComponent(name)
        try FileManager.default.copyItem(atPath: fixture("a_none_640x480_30fps_aac44k_stereo.mov"), toPath: copy.path)
        return copy.path
    }

    /// Adds one job per (name, inputs) through a job list, their outputs in the test's folder;
    /// `elsewhere`: inputs that are not there yet (`--inputs-elsewhere`).
    func addJobs(_ jobs: [(name: String, inputs: [String])], elsewhere: Bool = false) throws {
        let lines = try jobs.enumerated().map { index, job in
            let object: [String: Any] = ["name": job.name, "inputs": job.inputs, "output": "out\(index).mp4"]
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        let list = folder.appendingPathComponent("jobs.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: list)
        let added = vmerge(
            ["queue", "add", "--db", database, "--out", folder.path, "--min-duration", "0", list.path]
                + (elsewhere ? ["--inputs-elsewhere"] : []))
        XCTAssertEqual(added.status, 0, added.stderr)
    }

    /// Starts `vmerge dashboard` on a port the system picks (with `extra` options); the page's address.
    func startPage(_ extra: [String] = []) throws -> String {
        "http://127.0.0.1:\(try startDashboard(extra).1)/"
    }

    /// Where screenshots are kept after the run: `$VMERGE_ARTEFACTS`, else .build/test-artefacts.
    var artefacts: URL {
        if let folder = ProcessInfo.processInfo.environment["VMERGE_ARTEFACTS"], !folder.isEmpty {
            return URL(fileURLWithPath: folder)
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/test-artefacts")
    }

    /// A PNG (its signature) whose header says it is the window's size.
    func assertWindowSizedPNG(_ png: Data, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = [UInt8](png)
        XCTAssertEqual(
            Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], file: file, line: line)
        guard bytes.count > 24, bytes[12..<16].elementsEqual("IHDR".utf8) else {
            return XCTFail("no IHDR chunk first", file: file, line: line)
        }
        let number = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        XCTAssertEqual([number(16), number(20)], [Browser.size.width, Browser.size.height], file: file, line: line)
    }
}
