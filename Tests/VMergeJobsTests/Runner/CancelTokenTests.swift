import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import VMergeJobs
import XCTest

/// One job stopped by its own token while another in the same process goes on (a queue worker
/// with -j 2 whose one job was cancelled), and a keyed job whose output another run of it
/// published meanwhile.
final class CancelTokenTests: XCTestCase {
    /// A job of `count` copies of the 3 s fixture: long enough to be caught while it runs.
    private func longJob(_ output: URL, count: Int = 10) -> Job {
        var job = Job(
            name: output.lastPathComponent, inputs: Array(repeating: Fixtures.path("a_"), count: count),
            output: FileName(output.path), options: MergeOptions())
        job.options.minDuration = 0
        return job
    }

    /// Waits (at most 60 s) until `folder` holds a temporary file of `output`'s.
    private func waitForTemporary(of output: String, in folder: URL) {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !listing(folder).contains(where: { $0.hasPrefix("." + output + ".vmerge-") }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    func testATokenStopsItsJobAloneAndLeavesNoTemporary() throws {
        let folder = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = try CancelToken()
        let outcomes = Locked<[String: JobOutcome]>([:])
        let group = DispatchGroup()
        for name in ["stopped.mp4", "kept.mp4"] {
            let job = longJob(folder.appendingPathComponent(name))
            group.enter()
            let thread = Thread {
                let context = MergeContext(cancel: name == "stopped.mp4" ? token : nil)
                let outcome = JobRunner(.merge(recordsKey: false, remakesDone: false, report: nil), context: context, diagnostics: .silent).run(job)
                outcomes.update { $0[name] = outcome }
                group.leave()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        waitForTemporary(of: "stopped.mp4", in: folder)
        token.cancel()
        XCTAssertEqual(token.signal, SIGTERM)
        group.wait()
        XCTAssertEqual(outcomes.value["stopped.mp4"]?.report.status, .cancelled)
        XCTAssertEqual(outcomes.value["stopped.mp4"]?.end.failure?.error, .cancelled(signal: SIGTERM))
        XCTAssertEqual(outcomes.value["kept.mp4"]?.report.status, .ok, "\(outcomes.value["kept.mp4"]?.end as Any)")
        XCTAssertEqual(listing(folder), ["kept.mp4"], "no temporary, no output of the stopped job")
        // The process-wide flag is untouched: the next merge runs.
        XCTAssertEqual(VMergeProcess.pendingSignal, 0)
    }

    /// Another run of the same job (a worker whose lease ran out while it was stopped) published
    /// the output while this one ran: this one takes its own back, even with -y, and the output
    /// is the first run's file, untouched.
    func testAKeyedJobNeverPublishesOverItsOwnOutput() throws {
        let folder = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.mp4")
        var job = longJob(output)
        job.options.overwrite = true
        let run: @Sendable () -> JobOutcome = { [job] in
            JobRunner(.worker, diagnostics: .silent).run(job)
        }
        XCTAssertEqual(run().report.status, .ok)
        let earlier = folder.appendingPathComponent("earlier.mp4")
        XCTAssertEqual(rename(output.path, earlier.path), 0)
        let identity = try FileManager.default.attributesOfItem(atPath: earlier.path)[.systemFileNumber] as? Int

        let outcome = Locked<JobOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let ended = run()
            outcome.update { $0 = ended }
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        waitForTemporary(of: "out.mp4", in: folder)
        XCTAssertEqual(rename(earlier.path, output.path), 0)
        done.wait()
        XCTAssertEqual(outcome.value?.report.status, .skipped)
        guard case .upToDate? = outcome.value?.end else { return XCTFail("\(outcome.value?.end as Any)") }
        XCTAssertEqual(
            try FileManager.default.attributesOfItem(atPath: output.path)[.systemFileNumber] as? Int, identity)
        XCTAssertEqual(listing(folder), ["out.mp4"], "its temporary is removed")
    }
}

/// A value shared between threads.
private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
