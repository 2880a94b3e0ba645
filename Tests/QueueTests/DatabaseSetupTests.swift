import Foundation
import TestSupport
import VMergeAV
import VMergeQueue
import XCTest

/// The documentation's "The database, from nothing", run as written against a real server: its
/// superuser's commands, its pg_hba.conf lines, its ~/.pgpass lines and its owner's commands,
/// then a worker and a dashboard as the roles it makes. Adapted only where a private server
/// must be: the superuser is reached through the server's socket (no sudo), the socket's folder
/// stands for db.example, and the ~/.pgpass is named by PGPASSFILE (not root's home).
final class DatabaseSetupTests: ServerTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        scratch = try makeScratchDirectory()
    }

    /// The section's fenced blocks, in order: their first line's language and their lines.
    private func blocks() throws -> [(language: String, lines: [String])] {
        var blocks: [(String, [String])] = []
        var open: (String, [String])?
        for line in try Documentation.section("The database, from nothing").components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                if let block = open {
                    blocks.append(block)
                    open = nil
                } else {
                    open = (String(line.dropFirst(3)), [])
                }
            } else if open != nil {
                open?.1.append(line)
            }
        }
        return blocks
    }

    /// A line without its comment and surrounding blanks.
    private func command(_ line: String) -> String {
        let code = line.range(of: "  #").map { String(line[..<$0.lowerBound]) } ?? line
        return code.trimmingCharacters(in: .whitespaces)
    }

    private var host: String { server.folder }

    /// The ~/.pgpass the documentation writes, and each role's password in it.
    private var pgpassFile: URL { scratch.appendingPathComponent("pgpass") }
    private var passwords: [String: String] = [:]

    func testTheDocumentedSetUpRunsAWorkerAndAReadOnlyDashboard() throws {
        let blocks = try blocks()
        XCTAssertEqual(blocks.map(\.language), ["sh", "", "", "sh"], "the section's blocks changed: adapt this test")
        guard blocks.count == 4 else { return }
        try writePasswords(blocks[2].lines.filter { !$0.isEmpty })
        try runAsTheSuperuser(blocks[0].lines.map(command).filter { !$0.isEmpty })
        try letTheRolesIn(blocks[1].lines.filter { !$0.hasPrefix("#") && !$0.isEmpty })
        try runAsTheOwner(blocks[3].lines.map(command).filter { !$0.isEmpty })

        let documented = try Documentation.section("The database, from nothing")
        let workerDB = try XCTUnwrap(
            documented.firstMatch(of: /VMERGE_DB='([^']*user=vmerge_worker)'/).map { String($0.output.1) })
        XCTAssertTrue(documented.contains("`user=vmerge_reader`"))
        let asWorker = workerDB.replacingOccurrences(of: "host=db.example", with: "host=\(host)")
        let asReader = asWorker.replacingOccurrences(of: "user=vmerge_worker", with: "user=vmerge_reader")
        try mergeAJob(asWorker: asWorker)
        try readTheDashboard(asReader: asReader)
        try assertEachChangesOnlyItsShare(asWorker: asWorker, asReader: asReader)
    }

    private func writePasswords(_ pgpass: [String]) throws {
        // ~/.pgpass: each role's password, the server's socket for db.example.
        for line in pgpass {
            let fields = line.components(separatedBy: ":")
            XCTAssertEqual(fields.count, 5, line)
            XCTAssertEqual(fields.first, "db.example", line)
            if fields.count == 5 { passwords[fields[3]] = fields[4] }
        }
        XCTAssertEqual(Set(passwords.keys), ["vmerge", "vmerge_worker", "vmerge_reader"])
        let adapted = pgpass.map { $0.replacingOccurrences(of: "db.example", with: host) }
        try Data((adapted.joined(separator: "\n") + "\n").utf8).write(to: pgpassFile)
        XCTAssertEqual(chmod(pgpassFile.path, 0o600), 0)
    }

    private func runAsTheSuperuser(_ superuser: [String]) throws {
        // The superuser's commands; createuser --pwprompt reads the password (twice) from a
        // terminal, and without one (setsid: none) from its stdin.
        for line in superuser {
            XCTAssertTrue(line.hasPrefix("sudo -u postgres "), line)
            let words = line.dropFirst("sudo -u postgres ".count).split(separator: " ").map(String.init)
            let password = words.contains("--pwprompt") ? passwords[words.last ?? ""] : nil
            if words.contains("--pwprompt") { XCTAssertNotNil(password, "no ~/.pgpass line for \(line)") }
            let run = try runProgram(
                URL(fileURLWithPath: "/usr/bin/setsid"), words, in: scratch,
                environment: ["PGHOST": host, "PGUSER": "postgres"], input: password.map { "\($0)\n\($0)\n" })
            XCTAssertEqual(run.status, 0, "\(line): \(run.stderr)")
        }
    }

    private func letTheRolesIn(_ hba: [String]) throws {
        // pg_hba.conf: the lines above those there; the file must load whole.
        let hbaFile = server.data + "/pg_hba.conf"
        let before = try String(contentsOfFile: hbaFile, encoding: .utf8)
        try (hba.joined(separator: "\n") + "\n" + before).write(toFile: hbaFile, atomically: false, encoding: .utf8)
        let postgres = try PGConnection(server.conninfo)
        try postgres.execute("SELECT pg_reload_conf()")
        let errors = try postgres.execute("SELECT line_number, error FROM pg_hba_file_rules WHERE error IS NOT NULL")
        XCTAssertEqual(errors.rowCount, 0, "pg_hba.conf: line \(errors.value(0, 0) ?? ""): \(errors.value(0, 1) ?? "")")
        // Once reloaded, a role connecting without its password is refused (no more trust).
        XCTAssertTrue(
            wait { (try? PGConnection("host=\(self.host) dbname=vmerge user=vmerge_reader")) == nil },
            "the documented pg_hba.conf lines still let a role in without a password")
        XCTAssertThrowsError(try PGConnection("host=\(host) dbname=vmerge user=vmerge_worker password=wrong")) {
            XCTAssertTrue("\($0)".contains("password authentication failed"), "\($0)")
        }
    }

    private func runAsTheOwner(_ owner: [String]) throws {
        // The owner's commands, in one shell, as written (db.example: the socket's folder).
        let binaries = VMergeBinary.url.deletingLastPathComponent().path
        let environment = [
            "PATH": binaries + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "PGPASSFILE": pgpassFile.path,
        ]
        let script = owner.map { $0.replacingOccurrences(of: "host=db.example", with: "host=\(host)") }
        let ran = try runProgram(
            URL(fileURLWithPath: "/bin/bash"), ["-euo", "pipefail", "-c", script.joined(separator: "\n")], in: scratch,
            environment: environment)
        XCTAssertEqual(ran.status, 0, "\(script.joined(separator: "\n")): \(ran.stderr)")
        XCTAssertTrue(ran.stdout.hasPrefix("queue: created (schema version \(QueueSchema.version))\n"), ran.stdout)
        XCTAssertEqual(
            try value("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'vmerge'"), "vmerge")
    }

    /// A job added by the owner, run by a worker as vmerge_worker.
    private func mergeAJob(asWorker: String) throws {
        let out = scratch.appendingPathComponent("out")
        let job: [String: Any] = [
            "name": "trip", "inputs": [["path": fixture("a_none_640x480_30fps_aac44k_stereo.mov"), "end": 1]],
            "output": "trip.mp4",
        ]
        try JSONSerialization.data(withJSONObject: job).write(to: scratch.appendingPathComponent("jobs.jsonl"))
        let ownerDB = asWorker.replacingOccurrences(of: "user=vmerge_worker", with: "user=vmerge")
        let added = try VMergeBinary.run(
            ["queue", "add", "jobs.jsonl", "--out", out.path, "--min-duration", "0"], in: scratch,
            environment: ["VMERGE_DB": ownerDB, "PGPASSFILE": pgpassFile.path])
        XCTAssertEqual(added.stdout, "added 1 trip\n1 added, 0 already there\n", added.stderr)
        let worker = try VMergeBinary.run(
            ["worker", "--once", "--poll-interval", "0.2", "--name", "w1"], in: scratch,
            environment: ["VMERGE_DB": asWorker, "PGPASSFILE": pgpassFile.path])
        XCTAssertEqual(worker.status, 0, worker.stderr)
        XCTAssertTrue(worker.stderr.contains("job 1 trip: done -> \(out.path)/trip.mp4"), worker.stderr)
        XCTAssertEqual(try value("SELECT state || ' ' || worker FROM vmerge.jobs WHERE id = 1"), "done w1")
        XCTAssertNotNil(Probe.recordedJobKey(at: out.appendingPathComponent("trip.mp4").path))
    }

    private func readTheDashboard(asReader: String) throws {
        // The dashboard as vmerge_reader: the page, the job's page and the metrics, all read.
        let dashboard = try WorkerProcess(
            ["dashboard", "--listen", "127.0.0.1:0"], log: scratch.appendingPathComponent("dashboard.log"),
            environment: ["VMERGE_DB": asReader, "PGPASSFILE": pgpassFile.path])
        defer {
            dashboard.kill(SIGKILL)
            _ = dashboard.waitForExit(seconds: 5)
        }
        XCTAssertTrue(wait { dashboard.log.contains("serving http://") || !dashboard.isRunning }, dashboard.log)
        let port = try XCTUnwrap(
            dashboard.log.firstMatch(of: /serving http:\/\/[^ ]*:([0-9]+)\//).flatMap { UInt16($0.output.1) })
        let page = try RawHTTP(port: port).request("GET", "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertFalse(page.text.contains("database-down"), page.text)
        XCTAssertTrue(page.text.contains("trip"), page.text)
        let jobPage = try RawHTTP(port: port).request("GET", "/jobs/1")
        XCTAssertEqual(jobPage.status, 200, jobPage.text)
        XCTAssertTrue(jobPage.text.contains("trip.mp4"), jobPage.text)
        let metrics = try RawHTTP(port: port).request("GET", "/metrics").text.components(separatedBy: "\n")
        for expected in ["vmerge_database_up 1", #"vmerge_jobs{state="done"} 1"#, #"vmerge_jobs{state="queued"} 0"#] {
            XCTAssertTrue(metrics.contains(expected), "missing \(expected) in\n\(metrics.joined(separator: "\n"))")
        }
        XCTAssertFalse(dashboard.log.contains("cannot be read"), dashboard.log)
    }

    private func assertEachChangesOnlyItsShare(asWorker: String, asReader: String) throws {
        // The reader changes nothing, the counts included; the worker only what a worker changes.
        let reader = try PGConnection(asReader + " password=\(passwords["vmerge_reader"] ?? "")")
        for (statement, refusal) in [
            ("UPDATE vmerge.jobs SET state = 'queued'", "permission denied for table jobs"),
            ("DELETE FROM vmerge.jobs", "permission denied for table jobs"),
            ("UPDATE vmerge.control SET paused_at = now()", "permission denied for table control"),
            ("SELECT vmerge.add_job_counts('{done}', '{5}')", "permission denied for function add_job_counts"),
            ("INSERT INTO vmerge.job_counts VALUES ('done', 5)", "permission denied for table job_counts"),
        ] {
            XCTAssertThrowsError(try reader.execute(statement), statement) {
                XCTAssertTrue("\($0)".contains(refusal), "\(statement): \($0)")
            }
        }
        let workerSQL = try PGConnection(asWorker + " password=\(passwords["vmerge_worker"] ?? "")")
        for (statement, refusal) in [
            ("UPDATE vmerge.jobs SET spec = '{}'", "permission denied for table jobs"),
            (
                "INSERT INTO vmerge.jobs (job_key, name, spec) VALUES ('k', 'n', '{}')",
                "permission denied for table jobs"
            ),
            ("UPDATE vmerge.control SET paused_at = now()", "permission denied for table control"),
        ] {
            XCTAssertThrowsError(try workerSQL.execute(statement), statement) {
                XCTAssertTrue("\($0)".contains(refusal), "\(statement): \($0)")
            }
        }
        XCTAssertEqual(try value("SELECT sum(jobs) FROM vmerge.job_counts WHERE state = 'done'"), "1")
    }

    /// One value, read as the server's superuser from the database the documentation made.
    private func value(_ query: String) throws -> String? {
        try PGConnection("host=\(host) dbname=vmerge user=postgres").execute(query).value(0, 0)
    }

    @discardableResult
    private func wait(_ seconds: Double = 20, for condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return condition()
    }
}
