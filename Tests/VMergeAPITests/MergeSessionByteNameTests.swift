import Foundation
import TestSupport
import VMerge
import XCTest

/// The API names files by their bytes (`FileLocation`) where a URL cannot hold them (Foundation on
/// Linux turns a byte that is not UTF-8 into U+FFFD): the named clips are merged, not their U+FFFD
/// twins, into an output of that name; the report, its warnings, the progress and an error give
/// every file back with its bytes; deletesSources deletes exactly the named files.
final class MergeSessionByteNameTests: MergeSessionTestCase {
    private func path(_ name: [UInt8]) -> [UInt8] { Array((folder.path + "/").utf8) + name }
    private func location(_ bytes: [UInt8]) -> FileLocation { FileLocation(fileSystemPath: bytes) }

    private func write(_ data: Data, at path: [UInt8]) throws {
        let path = path + [0]
        let fd = path.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        _ = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
    }

    private func exists(_ path: [UInt8]) -> Bool {
        var info = stat()
        let path = path + [0]
        return path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { lstat($0.baseAddress!, &info) } } == 0
    }

    /// A clip's path is held to the limit every door has (4,096 bytes), counted in its bytes on
    /// disk: 1,212 bytes, 1,200 of them not UTF-8, pass (4,812 as text) to find no such file; one
    /// byte over the limit is refused before any work, as a job list refuses it.
    func testAPathIsMeasuredInItsBytes() async throws {
        let folder = [UInt8](repeating: 0xFF, count: 200) + [0x2F]
        let long = Array("/".utf8) + Array(repeating: folder, count: 6).joined() + Array("x.mov".utf8)
        var job = MergeJob(clips: [.init(location(long))], output: location(path(Array("o.mp4".utf8))))
        await assertThrows(MergeSession(job), .invalidInput, "no such file or directory")
        let over = Array("/".utf8) + [UInt8](repeating: 0xFF, count: 4092) + Array(".mov".utf8)
        job.clips = [.init(location(over))]
        await assertThrows(MergeSession(job), .invalidJob, "an input is longer than 4096 bytes")
    }

    func testClipsAndOutputNamedByBytes() async throws {
        let a = path(Array("c".utf8) + [0xFF] + Array(".mov".utf8))
        let b = path(Array("c".utf8) + [0xFE] + Array(".mov".utf8))
        let twin = path(Array("c\u{FFFD}.mov".utf8))
        try write(try Data(contentsOf: Fixtures.url("a_")), at: a)
        try write(try Data(contentsOf: Fixtures.url("b_")), at: b)
        try write(try Data(contentsOf: Fixtures.url("j_")), at: twin)
        let output = path(Array("out".utf8) + [0xFF] + Array(".mp4".utf8))
        var job = MergeJob(clips: [.init(location(a)), .init(location(b))], output: location(output))
        job.minimumClipDuration = 0
        job.deletesSources = true
        XCTAssertEqual(job.clips[0].file.fileSystemPath, a)
        let session = MergeSession(job)
        let steps = Task {
            var files = Set<[UInt8]>()
            for await step in session.progress { if let file = step.file?.fileSystemPath { files.insert(file) } }
            return files
        }
        let report = try await session.run()

        XCTAssertEqual(report.status, .ok, "\(report)")
        let written = try XCTUnwrap(report.output)
        XCTAssertEqual(written.file.fileSystemPath, output)
        XCTAssertTrue(exists(output), "the output has the name's bytes")
        XCTAssertEqual(written.duration, 5.5, accuracy: 0.1, "a_ and b_ merged, not the U+FFFD twin")
        XCTAssertEqual(report.clips.map(\.file.fileSystemPath), [a, b])
        XCTAssertEqual(Set(report.deletedSources.map(\.fileSystemPath)), [a, b])
        let named = Set(report.warnings.compactMap(\.file?.fileSystemPath))
        XCTAssertTrue(named.isSuperset(of: [a, b]) && named.isSubset(of: [a, b, output]), "\(report.warnings)")
        let stepped = await steps.value
        XCTAssertTrue(stepped.isSuperset(of: [a, b]) && stepped.isSubset(of: [a, b, output]), "\(stepped)")
        XCTAssertFalse(exists(a) || exists(b), "the named sources deleted")
        XCTAssertTrue(exists(twin), "the twin kept")
        XCTAssertEqual(report.clips[0].file.description, folder.path + "/c\\xFF.mov", "shown as vmerge prints it")
        XCTAssertEqual(FileLocation(path: report.clips[0].file.path), report.clips[0].file, "its text loses nothing")
    }

    /// A clip that is no video, named by bytes that are not UTF-8: the error and the report it
    /// carries name it by those bytes, and a dropped clip's warning does too.
    func testAnErrorNamesABadClipByItsBytes() async throws {
        let bad = path(Array("bad".utf8) + [0xFD] + Array(".mov".utf8))
        try write(try Data(contentsOf: Fixtures.url("bad_text")), at: bad)
        var job = MergeJob(
            clips: [.init(location(bad)), .init(Fixtures.url("a_"))], output: location(path(Array("o.mp4".utf8))))
        do {
            _ = try await MergeSession(job).run()
            XCTFail("merged a text file")
        } catch let error as MergeError {
            XCTAssertEqual(error.code, .invalidInput)
            XCTAssertEqual(error.file?.fileSystemPath, bad)
            XCTAssertEqual(error.report?.clips.first?.file.fileSystemPath, bad)
            XCTAssertTrue(error.description.hasPrefix(folder.path + "/bad\\xFD.mov: "), error.description)
        }
        job.skipsInvalidClips = true
        let report = try await MergeSession(job).run()
        XCTAssertEqual(report.clips.map(\.status), [.invalid, .kept])
        XCTAssertTrue(report.warnings.contains { $0.file?.fileSystemPath == bad }, "\(report.warnings)")
    }
}
