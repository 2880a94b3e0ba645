import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import VMergeJobs
import XCTest

/// What --delete-sources removes, and through which folder (SourceRemoval). The end-to-end
/// behaviour of merges, batches and watch jobs: MergeDeleteSourcesTests, BatchDeleteSourcesTests
/// and WatchJobDeleteSourcesTests (IntegrationTests/DeleteSources).
final class SourceRemovalTests: XCTestCase {
    /// Copies of fixtures into `dir` under short names.
    private func copies(_ names: [(String, String)], in dir: URL) throws -> [String] {
        try names.map { prefix, name in
            try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: dir.appendingPathComponent(name).path)
            return name
        }
    }

    /// A name that no longer holds the file that was merged, a link, a missing name: kept, with why.
    func testOnlyTheFileThatWasMergedIsDeleted() throws {
        let dir = try makeScratchDirectory()
        let merged = dir.appendingPathComponent("merged.mov").path
        let replaced = dir.appendingPathComponent("replaced.mov").path
        let linked = dir.appendingPathComponent("linked.mov").path
        for path in [merged, replaced] { XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data([1]))) }
        var info = stat()
        XCTAssertEqual(stat(merged, &info), 0)
        let mergedID = FileID(info)
        XCTAssertEqual(stat(replaced, &info), 0)
        let replacedID = FileID(info)
        // Another file now under the name (it may even get the same inode back).
        XCTAssertEqual(unlink(replaced), 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: replaced, contents: Data([2, 3])))
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: merged)
        let (deleted, kept) = SourceRemoval.remove(
            [(merged, mergedID), (replaced, replacedID), (linked, mergedID), (dir.appendingPathComponent("gone.mov").path, mergedID)]
                .map { SourceLedger.Entry(path: $0.0, id: $0.1) })
        XCTAssertEqual(deleted, [merged])
        XCTAssertEqual(kept.map(\.path), [replaced, linked, dir.appendingPathComponent("gone.mov").path])
        XCTAssertTrue(kept[0].reason.contains("not the file that was merged"), kept[0].reason)
        XCTAssertTrue(kept[1].reason.contains("not a regular file"), kept[1].reason)
        XCTAssertTrue(FileManager.default.fileExists(atPath: replaced))
        // An output that does not read back whole keeps the sources: a .mov with its index at the end.
        XCTAssertEqual(
            SourceRemoval.problem(withOutput: Fixtures.path("a_"), expectedMicros: 3_000_000, frameMicros: 33_333),
            "its index is not at the front")
        XCTAssertNotNil(SourceRemoval.problem(withOutput: dir.appendingPathComponent("none.mp4").path, expectedMicros: 1, frameMicros: 1))
    }

    /// Deleting goes through the folder the file was probed in: a folder swapped for a link to
    /// another holding a hard link of the same file is not deleted through (found by a hostile pass).
    func testDeletingGoesThroughTheFolderItWasMergedFrom() throws {
        let dir = try makeScratchDirectory()
        let d = dir.appendingPathComponent("d"), other = dir.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        _ = try copies([("a_", "a.mov")], in: d)
        XCTAssertEqual(link(d.appendingPathComponent("a.mov").path, other.appendingPathComponent("a.mov").path), 0)
        var probes: [InputProbe] = []
        let plan = try Merger(options: MergeOptions(), diagnostics: .silent).makePlan(
            probing: [d.appendingPathComponent("a.mov").path], into: &probes)
        let ledger = SourceRemoval.ledger(plan, outputMicros: plan.outputDurationMicros)
        XCTAssertEqual(ledger.consumed.count, 1)
        XCTAssertEqual(rename(d.path, dir.appendingPathComponent("d_old").path), 0)
        try FileManager.default.createSymbolicLink(atPath: d.path, withDestinationPath: "other")
        let (deleted, kept) = SourceRemoval.remove(ledger.consumed)
        XCTAssertEqual(deleted, [])
        XCTAssertEqual(kept.first?.reason, "not deleted: its folder is not the one it was merged from (moved since?)")
        XCTAssertEqual(listing(other), ["a.mov"])
    }
}
