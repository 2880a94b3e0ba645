import Foundation
import XCTest

@testable import VMergeQueue

/// The dashboard's actions as a person uses them in the browser: signing in with the token,
/// clicking a job's button, the page following what the workers do without being reloaded; and
/// another site's page trying to act through the signed-in browser.
extension DashboardBrowserTests {
    private static let token = "browser-test-token-0123456789"

    /// A dashboard with actions on; its page's address.
    private func startActingPage() throws -> String {
        let file = folder.appendingPathComponent("token")
        try Data(DashboardBrowserTests.token.utf8).write(to: file)
        return try startPage(["--token-file", file.path])
    }

    /// Types the token into the header's form and signs in.
    private func signIn() throws {
        try page.waitFor("document.querySelector('input[name=token]') !== null")
        _ = try page.evaluate(
            "document.querySelector('input[name=token]').value = \(BrowserPage.literal(DashboardBrowserTests.token))")
        try page.click("form[action='/login'] button")
        try page.waitFor("document.querySelector('form[action=\"/logout\"]') !== null", timeout: 10)
    }

    /// Runs one `worker --once` to its end.
    private func runWorker(_ name: String) throws -> WorkerProcess {
        let worker = try WorkerProcess(
            ["worker", "--db", database, "--name", name, "--poll-interval", "0.2", "--once"],
            log: folder.appendingPathComponent("\(name).log"))
        processes.append(worker)
        _ = worker.waitForExit(seconds: 60)
        return worker
    }

    private func state(of id: Int) throws -> String? {
        try value("SELECT state FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"])
    }

    /// A job that failed (its clip was not there yet) is retried with its button on the page;
    /// a worker then merges it, and the page shows it done without being reloaded.
    func testARetryClickRequeuesAFailedJobThatThenSucceeds() throws {
        let clips = folder.appendingPathComponent("clips")
        try FileManager.default.createDirectory(at: clips, withIntermediateDirectories: true)
        let late = clips.appendingPathComponent("late.mov")
        try addJobs([("late clip", [late.path])], elsewhere: true)
        _ = try runWorker("first")
        XCTAssertEqual(try state(of: 1), "failed")
        try FileManager.default.copyItem(atPath: fixture("a_none_640x480_30fps_aac44k_stereo.mov"), toPath: late.path)

        try page.navigate(try startActingPage())
        try signIn()
        let retry = "form[action='/jobs/1/retry'] button"
        try page.waitFor("document.querySelector(\(BrowserPage.literal(retry))) !== null")
        try page.click(retry)
        try page.waitFor("(document.querySelector('.notice') || {}).textContent === 'job 1 (late clip) is queued again'")
        XCTAssertEqual(try state(of: 1), "queued")
        XCTAssertEqual(try page.evaluate("document.getElementById('count-queued').textContent", as: String.self), "1")

        // From here the page is not reloaded: a marker on the window survives only if it is not.
        _ = try page.evaluate("window.vmergeMarker = 42")
        let worker = try runWorker("second")
        XCTAssertEqual(try state(of: 1), "done", worker.log)
        try page.waitFor("document.getElementById('count-done').textContent.trim() === '1'", timeout: 10)
        XCTAssertEqual(try page.evaluate("window.vmergeMarker", as: Int.self), 42)
        XCTAssertTrue(try page.evaluate("document.getElementById('live-status').textContent", as: String.self)
            .hasPrefix("live"))
        XCTAssertEqual(try problems(), [])
    }

    /// A page of another origin makes the signed-in browser post the dashboard's cancel form (the
    /// form token guessed): the job stays queued.
    func testAnotherOriginCannotActThroughTheSignedInBrowser() throws {
        try addJobs([("victim", [fixture("a_none_640x480_30fps_aac44k_stereo.mov")])])
        let address = try startActingPage()
        try page.navigate(address)
        try signIn()
        let attacker = try XCTUnwrap(DashboardBrowserTests.browser).newPage()
        defer { attacker.close() }
        try attacker.navigate("about:blank")
        _ = try attacker.evaluate(
            """
            const form = document.createElement('form');
            form.method = 'post';
            form.action = \(BrowserPage.literal(address + "jobs/1/cancel"));
            const field = document.createElement('input');
            field.name = 'form_token';
            field.value = 'guessed';
            form.appendChild(field);
            document.body.appendChild(form);
            form.submit();
            true
            """)
        try attacker.waitFor("location.href.includes('/jobs/1/cancel')", timeout: 10)
        let answer = try attacker.evaluate("document.body.innerText", as: String.self)
        XCTAssertEqual(answer.trimmingCharacters(in: .whitespacesAndNewlines), "a request from another site is refused")
        XCTAssertEqual(try state(of: 1), "queued")
    }

    /// Pause from the page: a worker started then claims nothing and the job stays listed as
    /// queued; Resume, and the worker merges it, the page following without a reload.
    func testPauseStopsNewClaimsUntilResumed() throws {
        try addJobs([("held", [fixture("a_none_640x480_30fps_aac44k_stereo.mov")])])
        try page.navigate(try startActingPage())
        try signIn()
        try page.click("form[action='/queue/pause'] button")
        try page.waitFor("document.getElementById('paused') !== null", timeout: 10)
        XCTAssertEqual(try value("SELECT paused_by FROM vmerge.control"), "dashboard")
        _ = try page.evaluate("window.vmergeMarker = 7")
        let worker = try WorkerProcess(
            ["worker", "--db", database, "--name", "patient", "--poll-interval", "0.2"],
            log: folder.appendingPathComponent("patient.log"))
        processes.append(worker)
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(try state(of: 1), "queued", worker.log)
        XCTAssertTrue(try page.evaluate("document.getElementById('row-1').innerText", as: String.self).contains("queued"))
        try page.click("form[action='/queue/resume'] button")
        try page.waitFor("document.getElementById('paused') === null", timeout: 10)
        _ = try page.evaluate("window.vmergeMarker = 8")
        try page.waitFor("document.getElementById('count-done').textContent.trim() === '1'", timeout: 60)
        XCTAssertEqual(try page.evaluate("window.vmergeMarker", as: Int.self), 8)
        XCTAssertEqual(try problems(), [])
    }
}
