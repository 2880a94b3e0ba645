import Foundation
import TestSupport
import VMerge
import XCTest

/// What a session refuses or fails, as MergeError in the API's words: the command line's limits and
/// option rules, a bad clip, an existing output, clips all too short, an output folder not there.
final class MergeSessionRefusalTests: MergeSessionTestCase {
    /// The API takes as many clips as a job list does, and reads times as the command line does,
    /// in its words (issue 33, item 7: it took 10,001 clips where a job list stops at 10,000).
    func testTheAPITakesTheCommandLinesLimitsInItsWords() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        let missing = folder.appendingPathComponent("missing.mov")
        var job = MergeJob(inputs: Array(repeating: missing, count: 10_001), output: output)
        await assertThrows(MergeSession(job), .invalidJob, "too many inputs (10001): a job takes at most 10000")
        // 10,000 pass the count, and fail on the file.
        job.clips.removeLast()
        await assertThrows(MergeSession(job), .invalidInput, "missing.mov: no such file or directory")
        job.clips = [MergeJob.Clip(Fixtures.url("a_"), start: 1e308)]
        await assertThrows(
            MergeSession(job), .invalidJob, "'start': '1e+308' is out of range (0 to 86400 s, the longest clip vmerge reads)")
        job.clips = [MergeJob.Clip(Fixtures.url("a_"), end: -1)]
        await assertThrows(
            MergeSession(job), .invalidJob, "'end': '-1' is out of range (0 to 86400 s, the longest clip vmerge reads)")
        job.clips = [MergeJob.Clip(Fixtures.url("a_"))]
        job.maxDuration = 1e308
        await assertThrows(
            MergeSession(job), .invalidJob,
            "invalid value 1e+308 for maxDuration: expected more than 0, up to 10000000 s")
        job.maxDuration = nil
        job.posterTime = -1
        await assertThrows(MergeSession(job), .invalidJob, "invalid value -1 for posterTime: expected 0 to 10000000 s")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    func testAJobTheOptionRulesRefuseFailsBeforeAnyWork() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        var job = MergeJob(inputs: [Fixtures.url("a_")], output: output)
        job.width = 17
        await assertThrows(MergeSession(job), .invalidJob, "invalid value 17 for width: expected an even number from 16 to 7680")
        job.width = nil
        job.crf = 99
        await assertThrows(MergeSession(job), .invalidJob, "invalid value 99 for crf: expected a number from 0 to 51")
        job.crf = nil
        job.clips = [MergeJob.Clip(Fixtures.url("a_"), start: 3, end: 2)]
        await assertThrows(MergeSession(job), .invalidJob, "the trim ends at 2 s, not after its start (3 s)")
        job.clips = [MergeJob.Clip(Fixtures.url("a_"), start: .nan)]
        await assertThrows(MergeSession(job), .invalidJob, "'start' must be a number of seconds")
        job.clips = [MergeJob.Clip(Fixtures.url("a_"))]
        // Errors speak Swift: the property, not the command line's option.
        job.frameRate = -1
        await assertThrows(MergeSession(job), .invalidJob, "invalid value -1 for frameRate: expected a rate from 1 to 240")
        job.frameRate = nil
        job.aspect = MergeJob.Aspect(width: 4, height: 0)
        await assertThrows(MergeSession(job), .invalidJob, "invalid value 4:0 for aspect: expected w:h such as 4:3")
        // As the command line refuses -4:-3, though it reduces to 4:3.
        job.aspect = MergeJob.Aspect(width: -4, height: -3)
        await assertThrows(MergeSession(job), .invalidJob, "invalid value -4:-3 for aspect: expected w:h such as 4:3")
        job.aspect = MergeJob.Aspect(width: 10, height: 1)
        job.width = 16
        job.fit = .blur
        await assertThrows(
            MergeSession(job), .invalidJob, "width 16 with aspect 10:1 makes a 16x2 picture: each side must be 4 to 16384 pixels with fit blur")
        (job.aspect, job.width, job.fit) = (nil, nil, nil)
        job.maxDuration = 0.01
        await assertThrows(MergeSession(job), .invalidJob, "invalid value 0.01 for maxDuration: shorter than one frame")
        job.maxDuration = nil
        job.posterName = "../poster.jpg"
        await assertThrows(MergeSession(job), .invalidJob, "invalid value ../poster.jpg for posterName: expected a file name")
        job.posterName = nil
        job.maxSize = 1000
        await assertThrows(MergeSession(job), .invalidJob, "invalid value 1000 for maxSize: expected a size of at least 16K")
        job.maxSize = nil
        // Sizes past what the command line reads are refused here too.
        job.minimumFreeSpace = Int64.max
        await assertThrows(MergeSession(job), .invalidJob, "invalid value \(Int64.max) for minimumFreeSpace")
        job.minimumFreeSpace = nil
        for name in ["out.mkv", "out", "out.mp4.part"] {
            var named = job
            named.output = FileLocation(folder.appendingPathComponent(name))
            await assertThrows(
                MergeSession(named), .invalidJob,
                "\(named.output.path): vmerge writes MP4 or QuickTime files; the name must end in '.mp4', '.m4v' or '.mov'")
            XCTAssertFalse(FileManager.default.fileExists(atPath: named.output.path), name)
        }
        job.clips = []
        await assertThrows(MergeSession(job), .invalidJob, "the job names no clips")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    func testABadClipNamesTheFileAndTheReportSaysWhy() async throws {
        let bad = Fixtures.url("bad_text")
        let output = folder.appendingPathComponent("out.mp4")
        do {
            _ = try await MergeSession(MergeJob(inputs: [Fixtures.url("a_"), bad], output: output)).run()
            XCTFail("merged a text file")
        } catch let error as MergeError {
            XCTAssertEqual(error.code, .invalidInput)
            XCTAssertEqual(error.file, FileLocation(path: bad.path))
            XCTAssertEqual(error.description, "\(bad.path): \(error.message)")
            let report = try XCTUnwrap(error.report)
            XCTAssertEqual(report.status, .failed)
            XCTAssertEqual(report.clips.map(\.status), [.probed, .invalid])
            XCTAssertEqual(report.clips.last?.reason, error.message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))

        // With skipsInvalidClips the bad clip is dropped with a warning and the rest is merged.
        var job = MergeJob(inputs: [Fixtures.url("a_"), bad], output: output)
        job.skipsInvalidClips = true
        let report = try await MergeSession(job).run()
        XCTAssertEqual(report.clips.map(\.status), [.kept, .invalid])
        let warning = try XCTUnwrap(
            report.warnings.first { $0.file == FileLocation(path: bad.path) }, "\(report.warnings)")
        XCTAssertEqual(warning.severity, .warning)
        XCTAssertEqual(warning.description, "\(bad.path): \(warning.message)")
    }

    func testAnExistingOutputIsKeptUnlessTheJobOverwrites() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        try Data("not mine".utf8).write(to: output)
        var job = MergeJob(inputs: [Fixtures.url("a_")], output: output)
        await assertThrows(MergeSession(job), .outputExists, "output exists (set overwrites to replace it)")
        XCTAssertEqual(try Data(contentsOf: output), Data("not mine".utf8))
        // The report says what the name still holds.
        do {
            _ = try await MergeSession(job).run()
        } catch let error as MergeError {
            XCTAssertEqual(error.report?.keptOutput?.bytes, 8)
            XCTAssertEqual(error.report?.keptOutput?.file.fileSystemPath, Array(output.path.utf8))
            XCTAssertNil(error.report?.keptOutput?.jobKey)
        }
        job.overwrites = true
        let report = try await MergeSession(job).run()
        XCTAssertEqual(report.output?.bytes, try Self.size(of: output))
    }

    func testEveryClipTooShortIsNothingToMerge() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        var job = MergeJob(inputs: [Fixtures.url("i_short"), Fixtures.url("l_tiny")], output: output)
        job.minimumClipDuration = 2
        do {
            _ = try await MergeSession(job).run()
            XCTFail("merged clips that are all too short")
        } catch let error as MergeError {
            XCTAssertEqual(error.code, .nothingToMerge)
            XCTAssertEqual(error.report?.status, .nothingToMerge)
            XCTAssertEqual(error.report?.clips.map(\.status), [.droppedShort, .droppedShort])
        }
    }

    func testAnOutputFolderThatIsNotThereIsAnErrorNamingIt() async throws {
        let output = folder.appendingPathComponent("no/such/folder/out.mp4")
        do {
            _ = try await MergeSession(MergeJob(inputs: [Fixtures.url("a_")], output: output)).run()
            XCTFail("wrote into a folder that is not there")
        } catch let error as MergeError {
            XCTAssertEqual(error.code, .failed, "\(error)")
            XCTAssertTrue(error.description.contains("no/such/folder"), "\(error)")
        }
    }
}
