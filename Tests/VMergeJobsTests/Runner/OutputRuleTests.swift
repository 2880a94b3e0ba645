import Foundation
import TestSupport
import VMergeCore
import VMergeJobs
import XCTest

/// One output rule, kept where the file is written: a job that reaches the runner without a door
/// checking it (as a queue spec edited in the table does) is still held to it. The doors' own
/// early refusals are in OutputContainerTests, OutputCollisionTests and WorkerJobHandlingTests.
final class OutputRuleTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws { dir = try makeScratchDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    private func run(_ job: Job) -> JobOutcome {
        JobRunner(.worker, diagnostics: .silent).run(job)
    }

    private func job(output: String, poster: String? = nil) -> Job {
        var options = MergeOptions()
        options.minDuration = 0
        options.poster = poster
        return Job(name: "j", inputs: [Fixtures.path("a_")], output: FileName(output), options: options)
    }

    /// Not .mp4/.m4v/.mov: refused as the job's fault, nothing written, not even a temporary.
    func testAnOutputNameOfAnotherKindIsRefused() {
        for name in ["j6.txt", "j6", "j6.mkv", "j6.mp4.sh"] {
            let outcome = run(job(output: dir.appendingPathComponent(name).path))
            XCTAssertEqual(outcome.report.status, .failed, name)
            XCTAssertEqual(
                outcome.end.failure?.error,
                .badOutputName(
                    file: dir.appendingPathComponent(name).path,
                    reason: "vmerge writes MP4 or QuickTime files; the name must end in '.mp4', '.m4v' or '.mov'"))
            XCTAssertEqual(listing(dir), [], name)
        }
    }

    /// A job held to one folder (watch's OUTBOX) writes nothing elsewhere: not by a path to
    /// another folder, not by "..", not through a link to another folder, not its poster.
    func testAJobHeldToAFolderWritesNothingElsewhere() throws {
        let out = dir.appendingPathComponent("out"), elsewhere = dir.appendingPathComponent("elsewhere")
        for folder in [out, elsewhere] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(at: out.appendingPathComponent("link"), withDestinationURL: elsewhere)
        for output in ["elsewhere/o.mp4", "out/../elsewhere/o.mp4", "out/link/o.mp4"] {
            var held = job(output: dir.path + "/" + output)
            held.outputFolder = out.path
            let outcome = run(held)
            XCTAssertEqual(outcome.report.status, .failed, output)
            XCTAssertEqual(
                outcome.end.failure?.error.description,
                "\(dir.path)/\(output): is outside \(out.path), the only folder this job may write in", output)
            XCTAssertEqual(listing(elsewhere), [], output)
        }
        // Inside it (named any way that leads there), the same job is made.
        var held = job(output: dir.path + "/out/../out/o.mp4")
        held.outputFolder = out.path
        XCTAssertEqual(run(held).report.status, .ok)
        XCTAssertEqual(listing(out), ["link", "o.mp4"])
    }

    /// The poster may not take the video's place, whatever the door let through.
    func testThePosterNeverTakesTheVideosName() {
        let outcome = run(job(output: dir.appendingPathComponent("o.mp4").path, poster: "o.mp4"))
        XCTAssertEqual(outcome.report.status, .failed)
        XCTAssertEqual(listing(dir), [])
    }
}
