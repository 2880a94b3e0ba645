import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// The dashboard's actions as a browser and a script use them, and as another site would try:
/// off without a token; a signed-in browser's form (cookie plus form token) or the token itself
/// acts; nothing else does (no form token, a wrong one, another origin, a GET, a Host that is
/// not this server's).
final class DashboardActionTests: DashboardTestCase {
    private let token = "correct-horse-battery-staple-42"
    private let form = "Content-Type: application/x-www-form-urlencoded"

    private func startWithToken() throws -> UInt16 {
        let file = folder.appendingPathComponent("token")
        try Data((token + "\n").utf8).write(to: file)
        chmod(file.path, 0o600)
        let (dashboard, port) = try startDashboard(["--token-file", file.path])
        XCTAssertFalse(dashboard.log.contains("warning"), dashboard.log)
        return port
    }

    /// Signs in; the session cookie and the form token the page gives it.
    private func signIn(_ http: RawHTTP) throws -> (cookie: String, formToken: String) {
        let answer = try http.request("POST", "/login", headers: [form], body: "token=\(token)")
        XCTAssertEqual(answer.status, 303, answer.text)
        XCTAssertEqual(answer.headers["location"], "/")
        let setCookie = try XCTUnwrap(answer.headers["set-cookie"])
        XCTAssertTrue(setCookie.hasSuffix("; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200"), setCookie)
        let cookie = String(setCookie.prefix { $0 != ";" })
        let page = try http.request("GET", "/", headers: ["Cookie: \(cookie)"]).text
        let match = try XCTUnwrap(page.firstMatch(of: /name="form_token" value="([0-9a-f]{64})"/), page)
        return (cookie, String(match.output.1))
    }

    private func state(_ id: Int) throws -> String? {
        try value("SELECT state FROM vmerge.jobs WHERE id = $1::bigint", ["\(id)"])
    }

    /// Without --token-file the page has no forms and every action is refused, saying why.
    func testActionsAreOffWithoutAToken() throws {
        try addJobs(["a"])
        try sql("UPDATE vmerge.jobs SET state = 'failed'")
        let (_, port) = try startDashboard()
        let http = RawHTTP(port: port)
        let page = try http.request("GET", "/").text
        XCTAssertFalse(page.contains("<form method=\"post\""), page)
        XCTAssertFalse(page.contains("form_token"), page)
        for (path, body) in [("/jobs/1/retry", ""), ("/jobs/1/retry", "form_token=x"), ("/login", "token=\(token)")] {
            let refused = try http.request("POST", path, headers: [form, "Authorization: Bearer \(token)"], body: body)
            XCTAssertEqual(refused.status, 403, path)
            XCTAssertEqual(refused.text, "actions are off: the dashboard was started without --token-file\n")
        }
        XCTAssertEqual(try state(1), "failed")
    }

    /// A browser signs in, retries a failed job from the page's form and is sent back to the page
    /// it came from, which says once what was done.
    func testASignedInBrowserRetriesAFailedJob() throws {
        try addJobs(["first", "<b>second</b>"])
        try sql("UPDATE vmerge.jobs SET state = 'failed', attempts = 3, last_error = 'boom' WHERE id = 2")
        let port = try startWithToken()
        let http = RawHTTP(port: port)
        let (cookie, formToken) = try signIn(http)
        let page = try http.request("GET", "/?state=failed", headers: ["Cookie: \(cookie)"]).text
        XCTAssertTrue(page.contains("<form class=\"inline\" method=\"post\" action=\"/jobs/2/retry\">"), page)
        // As a browser sends it: the Host with its port, the Origin the same.
        let done = try http.request(
            "POST", "/jobs/2/retry", headers: [form, "Cookie: \(cookie)", "Origin: http://127.0.0.1:\(port)"],
            body: "form_token=\(formToken)&return=%2F%3Fstate%3Dfailed", host: "127.0.0.1:\(port)")
        XCTAssertEqual(done.status, 303, done.text)
        XCTAssertEqual(done.headers["location"], "/?state=failed")
        XCTAssertEqual(try state(2), "queued")
        XCTAssertEqual(try value("SELECT attempts FROM vmerge.jobs WHERE id = 2"), "0")
        let after = try http.request("GET", "/?state=failed", headers: ["Cookie: \(cookie)"]).text
        XCTAssertTrue(
            after.contains("<p class=\"notice\" role=\"status\">job 2 (&lt;b&gt;second&lt;/b&gt;) is queued again</p>"),
            after)
        // Above <main>, which the page's script replaces: the notice stays while the page updates.
        XCTAssertLessThan(
            try XCTUnwrap(after.range(of: "class=\"notice\"")).lowerBound, try XCTUnwrap(after.range(of: "<main")).lowerBound)
        let again = try http.request("GET", "/", headers: ["Cookie: \(cookie)"]).text
        XCTAssertFalse(again.contains("class=\"notice\""), again)
        // Retrying it again is refused: it is queued now.
        let twice = try http.request(
            "POST", "/jobs/2/retry", headers: [form, "Authorization: Bearer \(token)"], body: "")
        XCTAssertEqual(twice.status, 409)
        XCTAssertEqual(
            twice.text, "job 2 (<b>second</b>) is queued; only a failed or cancelled job can be retried\n")
        let missing = try http.request("POST", "/jobs/99/cancel", headers: [form, "Authorization: Bearer \(token)"])
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.text, "job 99 is not in the queue\n")
        // Signing out ends the session: its cookie acts no more.
        let out = try http.request("POST", "/logout", headers: [form, "Cookie: \(cookie)"], body: "")
        XCTAssertEqual(out.status, 303)
        XCTAssertTrue(out.headers["set-cookie"]?.contains("Max-Age=0") ?? false)
        let stale = try http.request(
            "POST", "/jobs/1/cancel", headers: [form, "Cookie: \(cookie)"], body: "form_token=\(formToken)")
        XCTAssertEqual(stale.status, 403)
        XCTAssertEqual(try state(1), "queued")
    }

    /// What another site can make a browser send (the cookie goes along with a same-site
    /// request only, but each layer is checked on its own): no form token, a wrong one, an
    /// Origin or Sec-Fetch-Site of another site, a GET, a redirect to another site.
    func testCrossSiteRequestsAndForgedFormsAreRefused() throws {
        try addJobs(["a"])
        let port = try startWithToken()
        let http = RawHTTP(port: port)
        let (cookie, formToken) = try signIn(http)
        let attempts: [(headers: [String], body: String, reason: String)] = [
            ([], "", "the form is not this session's: reload the page and try again"),
            ([], "form_token=" + String(repeating: "0", count: 64), "the form is not this session's: reload the page and try again"),
            (["Origin: http://evil.example"], "form_token=\(formToken)", "a request from another site is refused"),
            (["Origin: null"], "form_token=\(formToken)", "a request from another site is refused"),
            (["Sec-Fetch-Site: cross-site"], "form_token=\(formToken)", "a request from another site is refused"),
            (["Sec-Fetch-Site: same-site"], "form_token=\(formToken)", "a request from another site is refused"),
        ]
        for attempt in attempts {
            let refused = try http.request(
                "POST", "/jobs/1/cancel", headers: [form, "Cookie: \(cookie)"] + attempt.headers, body: attempt.body)
            XCTAssertEqual(refused.status, 403, "\(attempt)")
            XCTAssertEqual(refused.text, attempt.reason + "\n", "\(attempt)")
        }
        let get = try http.request("GET", "/jobs/1/cancel?form_token=\(formToken)", headers: ["Cookie: \(cookie)"])
        XCTAssertEqual(get.status, 405)
        XCTAssertEqual(get.headers["allow"], "POST")
        XCTAssertEqual(try state(1), "queued")
        // Not a form: refused before it is read.
        let json = try http.request(
            "POST", "/jobs/1/cancel", headers: ["Content-Type: application/json", "Cookie: \(cookie)"],
            body: "{\"form_token\":\"\(formToken)\"}")
        XCTAssertEqual(json.status, 415)
        XCTAssertEqual(try state(1), "queued")
        // A return address on another site is not followed.
        // (As the form encodes them: //evil.example/, /\evil.example, https://..., and a line break.)
        for away in ["%2F%2Fevil.example%2F", "%2F%5Cevil.example", "https%3A%2F%2Fevil.example%2F", "%2F%0D%0ASet-Cookie%3Ax"] {
            let done = try http.request(
                "POST", "/jobs/1/cancel",
                headers: [form, "Cookie: \(cookie)", "Sec-Fetch-Site: same-origin"],
                body: "form_token=\(formToken)&return=\(away)")
            XCTAssertEqual(done.status, 303, away)
            XCTAssertEqual(done.headers["location"], "/", away)
            XCTAssertNil(done.headers["set-cookie"], away)
            try sql("UPDATE vmerge.jobs SET state = 'queued'")
        }
    }

    /// The token in a header acts for a script; a wrong one does not; wrong tokens at sign-in
    /// are answered alike and, past 30 in a minute, sign-in waits.
    func testTheTokenItselfAndWrongTokens() throws {
        try addJobs(["a"])
        let port = try startWithToken()
        let http = RawHTTP(port: port)
        let wrong = try http.request("POST", "/jobs/1/cancel", headers: [form, "Authorization: Bearer nope"])
        XCTAssertEqual(wrong.status, 403)
        XCTAssertEqual(wrong.text, "that is not the dashboard's token\n")
        // The scheme in any case, as HTTP has it.
        let done = try http.request("POST", "/jobs/1/cancel", headers: [form, "Authorization: bearer  \(token)"])
        XCTAssertEqual(done.status, 200)
        XCTAssertEqual(done.text, "job 1 (a) is cancelled\n")
        XCTAssertEqual(try state(1), "cancelled")
        // Guesses in a header and at sign-in count together: with the wrong one above, 30.
        for index in 0..<29 {
            let guess =
                index % 2 == 0
                ? try http.request("POST", "/login", headers: [form], body: "token=guess")
                : try http.request("POST", "/queue/pause", headers: [form, "Authorization: Bearer guess\(index)"])
            XCTAssertEqual(guess.status, 403)
            XCTAssertNil(guess.headers["set-cookie"])
        }
        let header = try http.request("POST", "/queue/pause", headers: [form, "Authorization: Bearer \(token)"])
        XCTAssertEqual(header.status, 429)
        let waiting = try http.request("POST", "/login", headers: [form], body: "token=\(token)")
        XCTAssertEqual(waiting.status, 429)
        XCTAssertEqual(waiting.text, "too many wrong tokens: wait a minute\n")
    }

    /// A form the decoder cannot read (a raw "=" in a value) is answered 400 with what to do.
    func testAFormThatCannotBeReadIsSaidSo() throws {
        let port = try startWithToken()
        let answer = try RawHTTP(port: port).request("POST", "/login", headers: [form], body: "token=abc=def")
        XCTAssertEqual(answer.status, 400)
        XCTAssertEqual(
            answer.text,
            "the form cannot be read (each value percent-encoded, at most 64 fields; curl: --data-urlencode)\n")
    }

    /// A token file that is missing, too short or not printable text stops the command before it
    /// serves; one every user can read is warned of.
    func testATokenFileMustHoldAToken() throws {
        let binary = folder.appendingPathComponent("binary")
        try Data(Array(repeating: 0xFF, count: 20) + [0x0A]).write(to: binary)
        let notText = vmerge(["dashboard", "--db", database, "--token-file", binary.path])
        XCTAssertEqual(notText.status, 1)
        XCTAssertEqual(
            notText.stderr,
            "vmerge: \(binary.path): a token must be printable ASCII on one line, no spaces (one is made by: "
                + "head -c 24 /dev/urandom | base64)\n")
        let open = folder.appendingPathComponent("open")
        try Data(String(repeating: "x", count: 20).utf8).write(to: open)
        chmod(open.path, 0o644)
        let (dashboard, _) = try startDashboard(["--token-file", open.path])
        XCTAssertTrue(
            dashboard.log.hasPrefix(
                "vmerge: \(open.path): warning: every user of this machine can read the token: chmod 600 it (640 for a group)\n"),
            dashboard.log)
        let short = folder.appendingPathComponent("short")
        try Data("abc\n".utf8).write(to: short)
        let refused = vmerge(["dashboard", "--db", database, "--token-file", short.path])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(
            refused.stderr,
            "vmerge: \(short.path): a token must be at least 16 characters (one is made by: head -c 24 /dev/urandom | base64)\n")
        let missing = vmerge(["dashboard", "--db", database, "--token-file", folder.appendingPathComponent("none").path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr, "vmerge: \(folder.appendingPathComponent("none").path): no such file or directory\n")
    }

    /// A loopback dashboard answers only to loopback names: a page on another site whose name
    /// was pointed at 127.0.0.1 (DNS rebinding) reads nothing.
    func testOtherHostNamesAreRefusedOnLoopback() throws {
        let (_, port) = try startDashboard()
        let http = RawHTTP(port: port)
        for host in ["evil.example:\(port)", "evil.example", "127.0.0.1.evil.example:\(port)"] {
            let refused = try http.request("GET", "/metrics", host: host)
            XCTAssertEqual(refused.status, 421, host)
            XCTAssertFalse(refused.text.contains("vmerge_"), host)
        }
        for host in ["localhost:\(port)", "127.0.0.1:\(port)", "LOCALHOST", "127.0.0.1"] {
            XCTAssertEqual(try http.request("GET", "/metrics", host: host).status, 200, host)
        }
    }
}
