import Foundation
import TestSupport
import XCTest

@testable import VMergeAV
@testable import VMergeCore
@testable import VMergeJobs

/// The job runner builds the run's context (MergeContext) the merger reads: a watch job's
/// confinement goes with it. (The context itself: MergeContextTests in VMergeAVTests.)
final class RunnerContextTests: XCTestCase {
    /// The runner gives a watch job's confinement to the merge: an input outside it is refused
    /// by the probe, naming the file, though the job's inputs were resolved without it.
    func testTheRunnerConfinesTheJobsReads() throws {
        let dir = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let inside = dir.appendingPathComponent("job")
        try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
        let folder = FileDescriptor(open(inside.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        var job = Job(
            name: "j", inputs: [Fixtures.path("a_")], output: FileName(dir.appendingPathComponent("o.mp4").path),
            options: MergeOptions())
        job.confinement = InputConfinement(root: inside.path, allowed: [], rootFolder: folder)
        let outcome = JobRunner(.merge(recordsKey: false, remakesDone: false, report: nil), diagnostics: .silent).run(job)
        XCTAssertEqual(outcome.report.status, .failed)
        XCTAssertEqual(outcome.end.failure?.error.file, Fixtures.path("a_"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: job.output.escaped))
        // Without it, the same job merges.
        job.confinement = nil
        XCTAssertEqual(JobRunner(.merge(recordsKey: false, remakesDone: false, report: nil), diagnostics: .silent).run(job).report.status, .ok)
    }
}
