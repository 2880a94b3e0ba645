import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// A test of `vmerge dashboard` as it runs in production: the built binary on a free port, over
/// a real PostgreSQL (a queue made with `vmerge queue init`), asked by a plain socket (RawHTTP).
class DashboardTestCase: ServerTestCase {
    var folder: URL!
    private var dashboards: [WorkerProcess] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-dashboard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        XCTAssertEqual(vmerge(["queue", "init", "--db", database]).status, 0)
    }

    override func tearDownWithError() throws {
        for dashboard in dashboards {
            dashboard.kill(SIGKILL)
            _ = dashboard.waitForExit(seconds: 5)
        }
        try? FileManager.default.removeItem(at: folder)
        try super.tearDownWithError()
    }

    /// Adds jobs named `names` (one input each, never made: no worker runs them) through a job list.
    func addJobs(_ names: [String]) throws {
        let lines = names.enumerated().map { index, name -> String in
            let job: [String: Any] = ["name": name, "inputs": ["in\(index).mov"], "output": "out\(index).mp4"]
            return String(decoding: try! JSONSerialization.data(withJSONObject: job), as: UTF8.self)
        }
        let list = folder.appendingPathComponent("jobs.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: list)
        let added = vmerge(["queue", "add", "--db", database, "--inputs-elsewhere", list.path])
        XCTAssertEqual(added.status, 0, added.stderr)
    }

    /// Starts `vmerge dashboard` on a port the system picks; its process and that port.
    func startDashboard(_ extra: [String] = [], listen: String = "127.0.0.1:0") throws -> (WorkerProcess, UInt16) {
        try startDashboard(arguments: ["dashboard", "--db", database, "--listen", listen] + extra)
    }

    /// Starts vmerge with `arguments` (a dashboard's, listening on port 0) and `environment` added
    /// to the test's; its process and the port it serves on.
    func startDashboard(arguments: [String], environment: [String: String] = [:]) throws -> (WorkerProcess, UInt16) {
        let log = folder.appendingPathComponent("dashboard\(dashboards.count).log")
        let dashboard = try WorkerProcess(arguments, log: log, environment: environment)
        dashboards.append(dashboard)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let match = dashboard.log.firstMatch(of: /serving http:\/\/[^ ]*:([0-9]+)\//),
                let port = UInt16(match.output.1)
            {
                return (dashboard, port)
            }
            guard dashboard.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw HTTPTestError("the dashboard did not start: \(dashboard.log)")
    }

    func sql(_ statement: String, _ parameters: [String?] = []) throws {
        try PGConnection(database).execute(statement, parameters)
    }

    /// One value read from the database.
    func value(_ query: String, _ parameters: [String?] = []) throws -> String? {
        try PGConnection(database).execute(query, parameters).value(0, 0)
    }
}
