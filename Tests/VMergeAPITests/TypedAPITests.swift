import Foundation
import TestSupport
import VMerge
import XCTest

/// The typed surface of the API: jobs as values, every option a typed property that reaches the
/// merge, the inspection before a merge, and a session's status and cancel().
final class TypedAPITests: MergeSessionTestCase {
    func testAJobIsAValue() throws {
        var job = MergeJob(
            clips: [MergeJob.Clip(Fixtures.url("a_"), start: 0.5, end: 2, title: "One")],
            output: FileLocation(fileSystemPath: Array("out-\u{e9}.mp4".utf8)))
        (job.aspect, job.frameRate, job.preset, job.toneMapping) = (.widescreen, 29.97, .slow, .hable)
        (job.skipDeblocking, job.crf, job.minimumFreeSpace, job.maxPixels) = (.never, 20.5, 1 << 20, 1920 * 1080)
        job.clips.append(MergeJob.Clip(FileLocation(fileSystemPath: [0x62, 0xff, 0x2e, 0x6d, 0x6f, 0x76])))
        let decoded = try JSONDecoder().decode(MergeJob.self, from: JSONEncoder().encode(job))
        XCTAssertEqual(decoded, job)
        XCTAssertEqual(decoded.clips[1].file.fileSystemPath, [0x62, 0xff, 0x2e, 0x6d, 0x6f, 0x76])
        XCTAssertEqual(Set([job, decoded]).count, 1)
        var other = job
        other.crf = 21
        XCTAssertNotEqual(other, job)
        XCTAssertEqual(MergeJob.Aspect.standard.description, "4:3")
    }

    /// A job is checked without running it, and what it throws is a MergeError by its type.
    func testAJobCanBeCheckedBeforeItRuns() throws {
        var job = MergeJob(inputs: [Fixtures.url("a_")], output: folder.appendingPathComponent("o.mp4"))
        try job.validate()
        job.frameRate = 500
        do {
            try job.validate()
            XCTFail("a 500 fps job passed")
        } catch {
            // Typed throws: `error` is a MergeError here, no cast.
            XCTAssertEqual(error.code, .invalidJob)
            XCTAssertEqual(error.message, "invalid value 500 for frameRate: expected a rate from 1 to 240")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("o.mp4").path))
    }

    /// Each case of each choice reaches the merge as the command line's word for it: the report
    /// records the value in force.
    func testEveryChoiceReachesTheMerge() async throws {
        let base = MergeJob(inputs: [Fixtures.url("a_")], output: folder.appendingPathComponent("o.mp4"))
        func options(_ change: (inout MergeJob) -> Void) async throws -> [String: Any] {
            var job = base
            change(&job)
            // The dry run's JSON report, as --report writes it.
            (job.isDryRun, job.reportFile) = (true, FileLocation(folder.appendingPathComponent("o.json")))
            _ = try await MergeSession(job).run()
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: job.reportFile!.url)) as? [String: Any]
            return try XCTUnwrap(object?["options"] as? [String: Any])
        }
        /// Every case of a choice, set through its property, read back under its report key.
        func everyCase<T: CaseIterable & RawRepresentable>(
            _ property: WritableKeyPath<MergeJob, T?>, reportedAs key: String
        ) async throws where T.RawValue == String {
            for value in T.allCases {
                let found = try await options { $0[keyPath: property] = value }
                XCTAssertEqual(found[key] as? String, value.rawValue, key)
            }
        }
        try await everyCase(\.preset, reportedAs: "preset")
        try await everyCase(\.toneMapping, reportedAs: "tonemap")
        try await everyCase(\.skipDeblocking, reportedAs: "skip_deblocking")
        try await everyCase(\.fit, reportedAs: "fit")
        try await everyCase(\.quality, reportedAs: "quality")
        let set = try await options {
            ($0.crf, $0.posterTime, $0.maxPixels, $0.minimumFreeSpace) = (20.5, 0.5, 640 * 480, 1 << 20)
            ($0.frameRate, $0.aspect) = (29.97, .widescreen)
        }
        XCTAssertEqual(set["crf"] as? Double, 20.5)
        XCTAssertEqual(set["poster_at"] as? Double, 0.5)
        XCTAssertEqual(set["max_pixels"] as? Int, 640 * 480)
        XCTAssertEqual(set["min_free"] as? Int, 1 << 20)
        // 29.97 is NTSC's rate, as on the command line.
        XCTAssertEqual(set["frame_rate"] as? String, "30000/1001")
        XCTAssertEqual(set["aspect"] as? String, "16:9")
    }

    /// What an AVAssetExportSession user asks before exporting: what each clip is, what would be
    /// dropped, how long and how large the output would be; nothing written.
    func testInspectionSaysWhatEachClipIsAndWhatWouldBeMade() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        var job = MergeJob(
            inputs: [
                Fixtures.url("b_rot90"), Fixtures.url("c_rot180"), Fixtures.url("e_hflip"), Fixtures.url("i_short"),
            ], output: output)
        job.reportFile = FileLocation(folder.appendingPathComponent("report.json"))
        let session = MergeSession(job)
        let report = try await session.inspect()
        XCTAssertEqual(report.status, .dryRun)
        XCTAssertEqual(report.clips.map(\.status), [.kept, .kept, .kept, .droppedShort])
        let portrait = try XCTUnwrap(report.clips[0].video)
        XCTAssertEqual([portrait.width, portrait.height, portrait.rotation], [1920, 1080, 90])
        XCTAssertEqual(portrait.codec, "h264")
        XCTAssertFalse(portrait.isMirrored)
        XCTAssertEqual(report.clips[0].audio?.channels, 1)
        XCTAssertEqual(report.clips[0].audio?.sampleRate, 48000)
        // Upright it is 1080 wide: its 4:3 crop is 1080 x 810 of it, taken from the stored
        // picture, where that is 810 x 1080.
        XCTAssertEqual(report.clips[0].crop.map { [$0.width, $0.height] }, [810, 1080])
        XCTAssertNil(report.clips[1].audio, "c_ has no sound: silence there")
        XCTAssertEqual(report.clips[1].video?.rotation, 180)
        XCTAssertEqual(report.clips[2].video?.isMirrored, true)
        XCTAssertNotNil(report.clips[3].reason)
        let planned = try XCTUnwrap(report.output)
        XCTAssertFalse(planned.isWritten)
        XCTAssertNil(planned.bytes)
        let kept = report.clips.compactMap(\.outputDuration).reduce(0, +)
        XCTAssertEqual(planned.duration, kept, accuracy: 1e-6)
        // 320x240 at 30 fps, 0.12 bits a pixel, and AAC at 96 kb/s.
        XCTAssertEqual(
            Double(planned.estimatedBytes), (320 * 240 * 30 * 0.12 + 96_000) / 8 * planned.duration, accuracy: 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: job.reportFile!.path), "an inspection writes no report")
        // The session can still run, and makes what the inspection said.
        XCTAssertEqual(session.status, .waiting)
        let made = try await session.run()
        XCTAssertEqual(session.status, .completed)
        XCTAssertEqual(try XCTUnwrap(made.output?.duration), planned.duration, accuracy: 1e-6)
        XCTAssertEqual(made.clips.map(\.crop), report.clips.map(\.crop))
        let bytes = try XCTUnwrap(made.output?.bytes)
        XCTAssertLessThan(bytes, planned.estimatedBytes * 2, "the estimate is generous, not wild")
    }

    /// `renditions`: inspected, each with its window of each clip and its estimate; run, each a
    /// file of its own size beside the output, reported; one the rules refuse is said naming it.
    func testRenditionsAreInspectedMadeAndReported() async throws {
        let output = folder.appendingPathComponent("trip.mp4")
        var job = MergeJob(inputs: [Fixtures.url("b_rot90"), Fixtures.url("a_none")], output: output)
        job.renditions = [
            .nineSixteen1080, MergeJob.Rendition(width: 720, height: 720, fit: .blur, fileName: "sq.mp4"),
        ]
        let session = MergeSession(job)
        let inspected = try await session.inspect()
        // The portrait clip fills 9:16 whole (its coded 1920x1080); blur shows all of it.
        XCTAssertEqual(
            inspected.clips[0].renditionCrops?.map { [$0.width, $0.height] }, [[1920, 1080], [1920, 1080]])
        XCTAssertEqual(
            inspected.clips[1].renditionCrops?.map { [$0.width, $0.height, $0.x] }, [[270, 480, 185], [640, 480, 0]])
        XCTAssertEqual(inspected.renditions?.map(\.isWritten), [false, false])
        XCTAssertEqual(inspected.renditions?.map { [$0.width, $0.height] }, [[1080, 1920], [720, 720]])
        let made = try await session.run()
        XCTAssertEqual(
            made.renditions?.map(\.file.path),
            ["trip-9x16-1080.mp4", "sq.mp4"].map {
                folder.appendingPathComponent($0).path
            })
        for rendition in made.renditions ?? [] {
            let size = try FileManager.default.attributesOfItem(atPath: rendition.file.path)[.size] as? Int64
            XCTAssertEqual(rendition.bytes, size)
            XCTAssertEqual(rendition.videoFrames, made.output?.videoFrames)
        }
        var bad = job
        bad.renditions = [MergeJob.Rendition(width: 721, height: 720)]
        XCTAssertThrowsError(try bad.validate()) { error in
            XCTAssertEqual((error as? MergeError)?.code, .invalidJob)
            XCTAssertTrue("\(error)".contains("invalid rendition 721x720: each side is even"), "\(error)")
        }
    }

    func testCancelStopsTheRunAndTheStatusSaysSo() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        let session = MergeSession(MergeJob(inputs: [try longClip(in: folder)], output: output))
        XCTAssertEqual(session.status, .waiting)
        XCTAssertNil(session.latestProgress)
        let merge = Task { try await session.run() }
        for await step in session.progress where step.phase == .encoding {
            XCTAssertEqual(session.status, .running)
            XCTAssertNotNil(session.latestProgress)
            session.cancel()
            break
        }
        do {
            _ = try await merge.value
            XCTFail("ran to its end although cancelled")
        } catch is CancellationError {
        }
        XCTAssertEqual(session.status, .cancelled)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "long.mov" }
        XCTAssertEqual(left, [], "nothing of the output is left")

        // Cancelled before it runs: it never starts, not even to check the job.
        var invalid = MergeJob(inputs: [Fixtures.url("a_")], output: output)
        invalid.width = 17
        let early = MergeSession(invalid)
        early.cancel()
        XCTAssertEqual(early.status, .cancelled)
        do {
            _ = try await early.run()
            XCTFail("ran although cancelled")
        } catch is CancellationError {
        }
        XCTAssertEqual(early.status, .cancelled)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    /// The merge's own messages name options as this API does: its properties, not flags.
    func testTheMergesMessagesNameProperties() async throws {
        var job = MergeJob(inputs: [Fixtures.url("a_")], output: folder.appendingPathComponent("o.mp4"))
        job.posterTime = 1
        let report = try await MergeSession(job).inspect()
        XCTAssertEqual(
            report.warnings.map(\.description), ["posterTime is given without posterName: no poster is made"])
        job.maxDuration = 1
        job.clips.append(MergeJob.Clip(Fixtures.url("e_")))
        let cut = try await MergeSession(job).inspect()
        XCTAssertTrue(
            cut.warnings.contains { $0.message.hasSuffix("the output reaches its 1 s maxDuration before") },
            "\(cut.warnings)")
        // A clip the size limit left out says so by the property.
        var sized = MergeJob(
            inputs: [Fixtures.url("a_"), Fixtures.url("e_"), Fixtures.url("c_")],
            output: folder.appendingPathComponent("s.mp4"))
        sized.maxSize = 64 * 1024
        let made = try await MergeSession(sized).run()
        XCTAssertEqual(made.output?.truncatedBy, .maxSize)
        XCTAssertEqual(made.clips.last?.status, .beyondLimit)
        XCTAssertEqual(made.clips.last?.reason, "left out: the output reached its maxSize before this clip")
    }

    /// The report's error says it as the thrown error does, in this API's words.
    func testAnExistingOutputIsSaidInSwiftsWords() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        try Data("not mine".utf8).write(to: output)
        do {
            _ = try await MergeSession(MergeJob(inputs: [Fixtures.url("a_")], output: output)).run()
            XCTFail("replaced a file without overwrites")
        } catch let error as MergeError {
            XCTAssertEqual(error.message, "output exists (set overwrites to replace it)")
            XCTAssertEqual(error.report?.error, error.description)
        }
    }

    /// An error names the file at fault in `file`, not only in its message.
    func testAReportNamedOntoTheOutputIsRefusedNamingIt() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        var job = MergeJob(inputs: [Fixtures.url("a_")], output: output)
        job.reportFile = FileLocation(output)
        do {
            _ = try await MergeSession(job).run()
            XCTFail("wrote the report over the output")
        } catch let error as MergeError {
            XCTAssertEqual(error.code, .invalidJob)
            XCTAssertEqual(error.file, FileLocation(path: output.path))
            XCTAssertEqual(error.message, "the report would overwrite the output video")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    func testAFailedRunSaysSoAndItsErrorIsAValue() async throws {
        let session = MergeSession(
            MergeJob(inputs: [Fixtures.url("bad_text")], output: folder.appendingPathComponent("o.mp4")))
        do {
            _ = try await session.run()
            XCTFail("merged a text file")
        } catch let error as MergeError {
            XCTAssertEqual(session.status, .failed)
            XCTAssertEqual(error.code, .invalidInput)
            let decoded = try JSONDecoder().decode(MergeError.self, from: JSONEncoder().encode(error))
            XCTAssertEqual(decoded, error)
            XCTAssertEqual(decoded.report?.clips.first?.status, .invalid)
            // An open set of codes: one a later version adds is a value like any other.
            XCTAssertNotEqual(error.code, MergeError.Code(rawValue: "some-later-code"))
        }
    }
}
