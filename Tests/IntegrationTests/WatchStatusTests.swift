import Foundation
import TestSupport
import VMergeCore
import XCTest

/// `vmerge watch --status-file` as a dashboard reads it: the running job's inputs and progress
/// (the queue worker's MergeProgress JSON), and the jobs it finished, from a real watcher.
final class WatchStatusTests: XCTestCase {
    private func makeJob(_ inbox: URL, _ name: String, fixture: String, clips: Int, ready: Bool = true) throws {
        let folder = inbox.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for i in 1...clips {
            try FileManager.default.copyItem(
                atPath: Fixtures.path(fixture), toPath: folder.appendingPathComponent(String(format: "clip%02d.mov", i)).path)
        }
        if ready { try Data().write(to: folder.appendingPathComponent(".ready")) }
    }

    private func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }

    func testTheStatusFileCarriesTheRunningJobsProgressAndTheFinishedJobs() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let inbox = dir.appendingPathComponent("in")
        try makeJob(inbox, "good", fixture: "a_", clips: 1)
        try makeJob(inbox, "bad", fixture: "bad_empty", clips: 1)
        try makeJob(inbox, "long", fixture: "b_", clips: 12, ready: false)
        let process = Process()
        process.executableURL = VMergeBinary.url
        process.arguments = ["watch", "in", "--out", "out", "--status-file", "status.json"]
        process.currentDirectoryURL = dir
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let statusFile = dir.appendingPathComponent("status.json")
        func status() -> [String: Any] {
            (try? Data(contentsOf: statusFile)).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
                ?? [:]
        }
        XCTAssertTrue(waitFor(60) { (status()["recent"] as? [Any])?.count == 2 }, "\(status())")
        let finished = try XCTUnwrap(status()["recent"] as? [[String: Any]])
        let good = try XCTUnwrap(finished.first { $0["name"] as? String == "good" })
        XCTAssertEqual(good["result"] as? String, "done")
        XCTAssertEqual(good["output"] as? String, "good.mp4")
        let size = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("out/good.mp4").path)[.size]
        XCTAssertEqual((good["output_bytes"] as? NSNumber)?.intValue, size as? Int)
        XCTAssertTrue(good["error"] is NSNull)
        let bad = try XCTUnwrap(finished.first { $0["name"] as? String == "bad" })
        XCTAssertEqual(bad["result"] as? String, "failed")
        XCTAssertEqual(bad["error"] as? String, "bad/clip01.mov: file is empty")
        XCTAssertTrue(ISO8601DateFormatter().date(from: bad["finished_at"] as? String ?? "") != nil)

        try Data().write(to: inbox.appendingPathComponent("long/.ready"))
        XCTAssertTrue(
            waitFor(120) { (status()["progress"] as? [String: Any])?["phase"] as? String == "encoding" }, "\(status())")
        let running = status()
        XCTAssertEqual(running["job"] as? String, "long")
        XCTAssertEqual(running["input_count"] as? Int, 12)
        XCTAssertEqual(running["inputs"] as? [String], (1...12).map { String(format: "long/clip%02d.mov", $0) })
        let progress = try XCTUnwrap(running["progress"] as? [String: Any])
        // The worker's MergeProgress JSON, key for key.
        XCTAssertEqual(
            Set(progress.keys),
            ["phase", "clip", "clips", "file", "percent", "out_time", "total_time", "elapsed", "total_size", "speed", "eta",
             "progress"])
        XCTAssertEqual(progress["clips"] as? Int, 12)
        XCTAssertTrue((progress["file"] as? String)?.hasPrefix("long/clip") == true, "\(progress)")
        XCTAssertGreaterThan(progress["total_time"] as? Double ?? 0, 12, "twelve clips of 2.5 s")

        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let stopped = status()
        XCTAssertEqual(stopped["state"] as? String, "stopped")
        XCTAssertTrue(stopped["job"] is NSNull)
        XCTAssertTrue(stopped["progress"] is NSNull)
        XCTAssertEqual(stopped["inputs"] as? [String], [])
        let last = try XCTUnwrap((stopped["recent"] as? [[String: Any]])?.first)
        XCTAssertEqual(last["name"] as? String, "long")
        XCTAssertEqual(last["result"] as? String, "put-back")
        XCTAssertTrue(try String(contentsOf: statusFile, encoding: .utf8).hasPrefix(
            "{\n  \"kind\": \"vmerge watch status\",\n"))
    }
}
