import Foundation
import TestSupport
import VMerge
import XCTest

/// A session's run: two clips merged with progress and a report, trims and a dry run, a session
/// that runs once, two at once, and cancelling the task before or during the run.
final class MergeSessionTests: MergeSessionTestCase {
    func testTwoClipsMergeWithProgressAndAReport() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        var job = MergeJob(inputs: [Fixtures.url("a_"), Fixtures.url("e_")], output: output)
        job.reportFile = FileLocation(folder.appendingPathComponent("report.json"))
        let session = MergeSession(job)
        let steps = Task { () -> [MergeSession.Progress] in
            var steps: [MergeSession.Progress] = []
            for await step in session.progress { steps.append(step) }
            return steps
        }
        let report = try await session.run()
        let seen = await steps.value

        XCTAssertEqual(report.status, .ok)
        XCTAssertNil(report.error)
        let written = try XCTUnwrap(report.output)
        XCTAssertTrue(written.isWritten)
        XCTAssertEqual(written.file.path, output.path)
        XCTAssertEqual(written.width, 320)
        XCTAssertEqual(written.height, 240)
        XCTAssertEqual(written.isFastStart, true)
        XCTAssertEqual(written.bytes, try Self.size(of: output))
        XCTAssertEqual(report.clips.map(\.status), [.kept, .kept])
        // Each clip's slot on the output follows the one before, and together they are the output.
        let first = try XCTUnwrap(report.clips.first), second = try XCTUnwrap(report.clips.last)
        XCTAssertEqual(first.outputStart, 0)
        XCTAssertEqual(try XCTUnwrap(second.outputStart), try XCTUnwrap(first.outputDuration), accuracy: 1e-6)
        XCTAssertEqual(
            try XCTUnwrap(second.outputStart) + (second.outputDuration ?? 0), written.duration, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(written.videoFrames), Int64((written.duration * 30).rounded()))
        // The file on disk is what the report says: ffprobe reads the same picture and length.
        let probed = try Self.ffprobe(output, "stream=codec_name,width,height:format=duration")
        XCTAssertTrue(probed.contains("codec_name=h264") && probed.contains("codec_name=aac"), probed)
        XCTAssertTrue(probed.contains("width=320") && probed.contains("height=240"), probed)
        // The JSON report is written with the video, of the same run.
        let json = try String(contentsOf: job.reportFile!.url, encoding: .utf8)
        XCTAssertTrue(json.contains("\"status\": \"ok\""), json)
        XCTAssertTrue(json.contains("\"written\": true"), json)

        // Progress: every clip probed, then encoding towards the end, then done.
        XCTAssertEqual(seen.first?.phase, .probing)
        XCTAssertEqual(seen.last?.phase, .done)
        XCTAssertEqual(seen.last?.fractionCompleted, 1)
        let fractions = seen.map(\.fractionCompleted)
        XCTAssertEqual(fractions, fractions.sorted(), "progress never goes back")
        XCTAssertTrue(seen.contains { $0.phase == .encoding }, "\(seen)")
        XCTAssertEqual(try XCTUnwrap(seen.last?.totalSeconds), written.duration, accuracy: 1e-6)
    }

    func testATrimmedClipAndADryRun() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        var job = MergeJob(clips: [MergeJob.Clip(Fixtures.url("a_"), start: 0.5, end: 2.5, title: "Start")], output: output)
        job.chapters = true
        job.isDryRun = true
        let planned = try await MergeSession(job).run()
        XCTAssertEqual(planned.status, .dryRun)
        XCTAssertEqual(planned.output?.isWritten, false)
        XCTAssertEqual(try XCTUnwrap(planned.output?.duration), 2, accuracy: 1e-6)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))

        job.isDryRun = false
        let report = try await MergeSession(job).run()
        XCTAssertEqual(try XCTUnwrap(report.output?.duration), 2, accuracy: 1e-6)
        XCTAssertEqual(report.clips.first?.duration.map { $0 > 2.5 }, true)
        let probed = try Self.ffprobe(output, "format=duration", "-show_chapters")
        XCTAssertTrue(probed.contains("TAG:title=Start"), probed)
    }

    func testCancellingTheTaskStopsTheMergeAndLeavesNoOutput() async throws {
        let long = try longClip(in: folder)
        let output = folder.appendingPathComponent("out.mp4")
        let session = MergeSession(MergeJob(inputs: [long, long], output: output))
        let merge = Task { try await session.run() }
        var encoding: MergeSession.Progress?
        for await step in session.progress where step.phase == .encoding && step.fractionCompleted > 0 {
            encoding = step
            break
        }
        XCTAssertNotNil(encoding, "the merge began encoding")
        let asked = Date()
        merge.cancel()
        do {
            let report = try await merge.value
            XCTFail("a cancelled merge returned a report: \(report.status)")
        } catch is CancellationError {
        }
        XCTAssertLessThan(Date().timeIntervalSince(asked), 5, "stopped soon after the cancel")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertEqual(left, [long.lastPathComponent], "no temporary output is left")
    }

    func testATaskCancelledBeforeTheRunDoesNoWork() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        let session = MergeSession(MergeJob(inputs: [Fixtures.url("a_")], output: output))
        let task = Task {
            // Cancelled before it starts: run() must not begin the merge.
            while !Task.isCancelled { await Task.yield() }
            return try await session.run()
        }
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("ran although cancelled")
        } catch is CancellationError {
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
        // Not even a clip was probed: the stream ended with no step in it.
        var steps = 0
        for await _ in session.progress { steps += 1 }
        XCTAssertEqual(steps, 0)
    }

    func testASecondRunWhileTheFirstGoesOnLeavesItsProgressAlone() async throws {
        let long = try longClip(in: folder)
        let session = MergeSession(MergeJob(inputs: [long], output: folder.appendingPathComponent("out.mp4")))
        let merge = Task { try await session.run() }
        var phases: [MergeSession.Progress.Phase] = []
        var refused = false
        for await step in session.progress {
            phases.append(step.phase)
            if step.phase == .encoding && !refused {
                refused = true
                do {
                    _ = try await session.run()
                    XCTFail("a second run started")
                } catch let error as MergeError {
                    XCTAssertEqual(error.code, .invalidJob)
                }
            }
        }
        XCTAssertTrue(refused)
        // The first run's steps went on to its end.
        XCTAssertEqual(phases.last, .done)
        let report = try await merge.value
        XCTAssertEqual(report.status, .ok)
    }

    func testASessionRunsOnce() async throws {
        let session = MergeSession(MergeJob(inputs: [Fixtures.url("a_")], output: folder.appendingPathComponent("o.mp4")))
        _ = try await session.run()
        await assertThrows(session, .invalidJob, "a session runs once; make a new one")
    }

    func testTwoSessionsAtOnceEachMakeTheirOwnOutput() async throws {
        let first = MergeSession(MergeJob(inputs: [Fixtures.url("a_")], output: folder.appendingPathComponent("1.mp4")))
        var job = MergeJob(inputs: [Fixtures.url("e_"), Fixtures.url("c_")], output: folder.appendingPathComponent("2.mp4"))
        job.width = 160
        let second = MergeSession(job)
        async let one = first.run()
        async let two = second.run()
        let (a, b) = try await (one, two)
        XCTAssertEqual(a.output?.width, 320)
        XCTAssertEqual(b.output?.width, 160)
        XCTAssertEqual(b.output?.height, 120)
        XCTAssertEqual(a.clips.count, 1)
        XCTAssertEqual(b.clips.map(\.status), [.kept, .kept])
        XCTAssertEqual(a.output?.bytes, try Self.size(of: folder.appendingPathComponent("1.mp4")))
        XCTAssertEqual(b.output?.bytes, try Self.size(of: folder.appendingPathComponent("2.mp4")))
    }
}
