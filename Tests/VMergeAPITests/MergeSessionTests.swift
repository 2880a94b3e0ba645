import Foundation
import TestSupport
import VMerge
import XCTest

/// The Swift API as an embedding program uses it: `import VMerge` and nothing else of the
/// package, real clips through the real libraries.
final class MergeSessionTests: XCTestCase {
    fileprivate var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testTwoClipsMergeWithProgressAndAReport() async throws {
        let output = folder.appendingPathComponent("out.mp4")
        var job = MergeJob(inputs: [Fixtures.url("a_"), Fixtures.url("e_")], output: output)
        job.reportURL = folder.appendingPathComponent("report.json")
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
        XCTAssertEqual(written.url.path, output.path)
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
        // The JSON report written is the value's JSON (published with the video, so timed a
        // moment before the value).
        let untimed = { (text: String) in
            text.split(separator: "\n").filter { line in !["wall_seconds", "speed", "_waited_seconds"].contains { line.contains("\($0)\"") } }
        }
        XCTAssertEqual(untimed(try String(contentsOf: job.reportURL!, encoding: .utf8)), untimed(report.json))
        XCTAssertTrue(report.json.contains("\"status\": \"ok\""))

        // Progress: every clip probed, then encoding towards the end, then done.
        XCTAssertEqual(seen.first?.phase, .probing)
        XCTAssertEqual(seen.last?.phase, .done)
        XCTAssertEqual(seen.last?.fractionCompleted, 1)
        let fractions = seen.map(\.fractionCompleted)
        XCTAssertEqual(fractions, fractions.sorted(), "progress never goes back")
        XCTAssertTrue(seen.contains { $0.phase == .encoding }, "\(seen)")
        XCTAssertEqual(try XCTUnwrap(seen.last?.totalSeconds), written.duration, accuracy: 1e-6)
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
            named.output = folder.appendingPathComponent(name)
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
            XCTAssertEqual(error.file, bad.path)
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
        let warning = try XCTUnwrap(report.warnings.first { $0.file == bad.path }, "\(report.warnings)")
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
            XCTAssertEqual(error.report?.keptOutput?.fileSystemPath, Array(output.path.utf8))
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

    private func assertThrows(
        _ session: MergeSession, _ code: MergeError.Code, _ text: String, file: StaticString = #filePath,
        line: UInt = #line
    ) async {
        do {
            _ = try await session.run()
            XCTFail("ran", file: file, line: line)
        } catch let error as MergeError {
            XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
            XCTAssertTrue(error.description.contains(text), "\(error)", file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    static func size(of url: URL) throws -> Int64 {
        try XCTUnwrap((try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value)
    }

    static func ffprobe(_ url: URL, _ entries: String, _ more: String...) throws -> String {
        try runTool("ffprobe", ["-v", "error", "-show_entries", entries] + more + ["-of", "default", url.path]).stdout
    }
}

/// The API names files by their bytes where a URL cannot hold them (Foundation on Linux turns a
/// byte that is not UTF-8 into U+FFFD): the named clips are merged, not their U+FFFD twins, into
/// an output of that name; the report gives every path back as bytes; deletesSources deletes
/// exactly the named files.
extension MergeSessionTests {
    fileprivate func path(_ name: [UInt8]) -> [UInt8] { Array((folder.path + "/").utf8) + name }

    fileprivate func write(_ data: Data, at path: [UInt8]) throws {
        let path = path + [0]
        let fd = path.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        _ = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
    }

    fileprivate func exists(_ path: [UInt8]) -> Bool {
        var info = stat()
        let path = path + [0]
        return path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { lstat($0.baseAddress!, &info) } } == 0
    }

    func testClipsAndOutputNamedByBytes() async throws {
        let a = path(Array("c".utf8) + [0xFF] + Array(".mov".utf8))
        let b = path(Array("c".utf8) + [0xFE] + Array(".mov".utf8))
        let twin = path(Array("c\u{FFFD}.mov".utf8))
        try write(try Data(contentsOf: Fixtures.url("a_")), at: a)
        try write(try Data(contentsOf: Fixtures.url("b_")), at: b)
        try write(try Data(contentsOf: Fixtures.url("j_")), at: twin)
        let output = path(Array("out".utf8) + [0xFF] + Array(".mp4".utf8))
        var job = MergeJob(clips: [.init(fileSystemPath: a), .init(fileSystemPath: b)], outputFileSystemPath: output)
        job.minimumClipDuration = 0
        job.deletesSources = true
        XCTAssertEqual(job.clips[0].fileSystemPath, a)
        let report = try await MergeSession(job).run()

        XCTAssertEqual(report.status, .ok, report.json)
        let written = try XCTUnwrap(report.output)
        XCTAssertEqual(written.fileSystemPath, output)
        XCTAssertTrue(exists(output), "the output has the name's bytes")
        XCTAssertEqual(written.duration, 5.5, accuracy: 0.1, "a_ and b_ merged, not the U+FFFD twin")
        XCTAssertEqual(report.clips.map(\.fileSystemPath), [a, b])
        XCTAssertEqual(Set(report.deletedSourceFileSystemPaths), [a, b])
        XCTAssertFalse(exists(a) || exists(b), "the named sources deleted")
        XCTAssertTrue(exists(twin), "the twin kept")
        XCTAssertFalse(report.json.contains("\u{FFFD}"), report.json)
    }
}
