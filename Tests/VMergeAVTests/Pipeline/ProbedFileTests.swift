import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// The merge decodes the very file it probed: one replaced or rewritten in between is refused,
/// which is what lets --delete-sources delete what was merged (IntegrationTests/DeleteSources).
final class ProbedFileTests: XCTestCase {
    /// Copies of fixtures into `dir` under short names.
    private func copies(_ names: [(String, String)], in dir: URL) throws -> [String] {
        try names.map { prefix, name in
            try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: dir.appendingPathComponent(name).path)
            return name
        }
    }

    /// The pipeline reads the file that was probed: a name that holds another file by the time
    /// the clip is decoded (renamed away and another put there, then put back before deleting)
    /// fails the merge, and nothing is deleted. Before, the other file was merged and the
    /// original, put back, was deleted.
    func testAClipSwappedBetweenProbingAndDecodingIsRefused() throws {
        let dir = try makeScratchDirectory()
        _ = try copies([("a_", "a.mov"), ("e_", "other.mov")], in: dir)
        let path = dir.appendingPathComponent("a.mov").path
        var probes: [InputProbe] = []
        let merger = Merger(options: MergeOptions(), diagnostics: .silent)
        let plan = try merger.makePlan(probing: [path], into: &probes)
        XCTAssertEqual(rename(path, path + ".away"), 0)
        XCTAssertEqual(rename(dir.appendingPathComponent("other.mov").path, path), 0)
        XCTAssertThrowsError(try merger.encode(plan, to: dir.appendingPathComponent("out.mp4").path)) { error in
            XCTAssertEqual(
                (error as? VMergeError)?.description, "\(path): is not the file that was probed (replaced or changed since)")
        }
        XCTAssertEqual(listing(dir), ["a.mov", "a.mov.away"], "no output, no temporary")
        // Rewritten in place (same inode, another size) is refused the same way.
        XCTAssertEqual(rename(path + ".away", path), 0)
        let plan2 = try merger.makePlan(probing: [path], into: &probes)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data([0]))
        try handle.close()
        XCTAssertThrowsError(try merger.encode(plan2, to: dir.appendingPathComponent("out.mp4").path))
        // Rewritten in place with its size and modification time put back (rsync --inplace -t,
        // touch -r): only the inode's change time tells, and it does.
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        let plan3 = try merger.makePlan(probing: [path], into: &probes)
        Thread.sleep(forTimeInterval: 0.02)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count / 2] ^= 0xFF
        let rewrite = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        rewrite.write(Data(bytes))
        try rewrite.close()
        var times = [info.st_atim, info.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        XCTAssertThrowsError(try merger.encode(plan3, to: dir.appendingPathComponent("out.mp4").path)) { error in
            XCTAssertTrue("\(error)".contains("is not the file that was probed"), "\(error)")
        }
    }
}
