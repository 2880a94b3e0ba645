import Foundation
import TestSupport
import VMergeCore
import VMergeJobs
import XCTest

/// The merge's report has one owner (`ReportFile`): published with the video as one set, or on
/// its own when the set could not be published, and never leaving a temporary behind.
final class ReportFileTests: XCTestCase {
    private func run(in dir: URL, onProgress: ((MergeProgress) -> Void)? = nil) throws -> (Performed, Job) {
        var options = MergeOptions()
        options.minDuration = 0
        let input = dir.appendingPathComponent("in.mov")
        try FileManager.default.copyItem(at: Fixtures.url("a_"), to: input)
        let job = Job(name: "j", inputs: [input.path], output: FileName(dir.appendingPathComponent("out.mp4").path), options: options)
        let run = MergeRun(job: job, reportPath: dir.appendingPathComponent("r.json").path)
        return (run.perform(diagnostics: .silent, onProgress: onProgress), job)
    }

    private func report(in dir: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: dir.appendingPathComponent("r.json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func testAMadeOutputsReportIsPublishedWithIt() throws {
        let dir = try makeScratchDirectory()
        let (performed, job) = try run(in: dir)
        guard case let .ran(outcome, reportError) = performed, case let .published(publication) = outcome.end else {
            return XCTFail("\(performed)")
        }
        XCTAssertNil(reportError)
        XCTAssertTrue(publication.reportPublished, "a member of the video's set")
        XCTAssertEqual(try report(in: dir)["status"] as? String, "ok")
        XCTAssertEqual((try report(in: dir)["output"] as? [String: Any])?["path"] as? String, job.output.escaped)
        XCTAssertEqual(listing(dir), ["in.mov", "out.mp4", "r.json"], "no temporary left")
    }

    /// The output's name taken by another file while the video was encoded: the set cannot be
    /// published and takes the report's temporary with it; the failure is still reported.
    func testASetThatCannotBePublishedStillLeavesItsReport() throws {
        let dir = try makeScratchDirectory()
        let output = dir.appendingPathComponent("out.mp4")
        let (performed, _) = try run(in: dir) { progress in
            if progress.phase == .encoding, !FileManager.default.fileExists(atPath: output.path) {
                FileManager.default.createFile(atPath: output.path, contents: Data("someone else's".utf8))
            }
        }
        guard case let .ran(outcome, reportError) = performed, case let .failed(failure) = outcome.end else {
            return XCTFail("\(performed)")
        }
        XCTAssertNil(reportError)
        XCTAssertEqual(failure.error, .outputExists(file: output.path))
        XCTAssertEqual(try report(in: dir)["status"] as? String, "failed")
        XCTAssertEqual(try String(contentsOf: output, encoding: .utf8), "someone else's")
        XCTAssertEqual(listing(dir), ["in.mov", "out.mp4", "r.json"], "no temporary left")
    }
}
