import Foundation
import XCTest

@testable import VMergeCore

final class InputListTests: XCTestCase {
    func testParseSkipsBlanksAndComments() {
        let text = "a.mov\n\n# a comment\n  b c.mov  \r\nd.mov\r\n   # indented comment\n#\nlast.mov"
        XCTAssertEqual(InputList.parse(text), ["a.mov", "b c.mov", "d.mov", "last.mov"])
        XCTAssertEqual(InputList.parse(""), [])
        XCTAssertEqual(
            InputList.parse("\u{FEFF}a.mov\r\nb.mov\r\n"), ["a.mov", "b.mov"], "a byte-order mark is not a path")
        XCTAssertEqual(InputList.parse("\n\n# only comments\n"), [])
    }

    func testNaturalOrder() {
        let names = [
            "clip10.mov", "clip2.mov", "Clip1.mov", "clip1.mov", "clip02.mov", "b.mov", "a10b2", "a10b10", "a9",
        ]
        let sorted = names.sorted { InputList.naturalCompare($0, $1) < 0 }
        XCTAssertEqual(
            sorted,
            ["a9", "a10b2", "a10b10", "b.mov", "Clip1.mov", "clip1.mov", "clip02.mov", "clip2.mov", "clip10.mov"])
        // Numbers longer than any integer type still compare by value.
        XCTAssertLessThan(InputList.naturalCompare("x99999999999999999999999", "x100000000000000000000000"), 0)
        XCTAssertEqual(InputList.naturalCompare("same", "same"), 0)
        XCTAssertGreaterThan(InputList.naturalCompare("clip10", "clip9"), 0)
    }

    func testFolderExpandsToVideosInNaturalOrder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-list-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["clip10.MOV", "clip2.mov", "clip1.mp4", "clip3.m4v", "clip4.3gp", "notes.txt", ".hidden.mov"] {
            _ = FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: Data([0]))
        }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("sub.mov"), withIntermediateDirectories: true)
        let expanded = try InputList.expand([folder.path, "x.mov"], order: .none)
        XCTAssertEqual(
            expanded.map { ($0 as NSString).lastPathComponent },
            ["clip1.mp4", "clip2.mov", "clip3.m4v", "clip4.3gp", "clip10.MOV", "x.mov"])
        // --sort name orders the whole list by path (the folder's absolute paths sort before "a.mov").
        XCTAssertEqual(
            try InputList.expand(["z.mov", folder.path, "a.mov"], order: .name).map {
                ($0 as NSString).lastPathComponent
            },
            ["clip1.mp4", "clip2.mov", "clip3.m4v", "clip4.3gp", "clip10.MOV", "a.mov", "z.mov"])
    }

    func testEmptyFolderIsAnError() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        XCTAssertThrowsError(try InputList.expand([folder.path], order: .none)) { error in
            XCTAssertEqual(
                (error as? VMergeError)?.description,
                "\(folder.path): folder has no video files (.mov, .mp4, .m4v, .3gp)")
        }
    }

    func testModificationTimeOrder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-mtime-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let names = ["new.mov", "old.mov", "mid.mov"]
        let ages: [Double] = [10, 1000, 100]
        for (name, age) in zip(names, ages) {
            let path = folder.appendingPathComponent(name).path
            _ = FileManager.default.createFile(atPath: path, contents: Data([0]))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: path)
        }
        let paths = names.map { folder.appendingPathComponent($0).path }
        XCTAssertEqual(
            InputList.sorted(paths, by: .mtime).map { ($0 as NSString).lastPathComponent },
            ["old.mov", "mid.mov", "new.mov"])
        XCTAssertEqual(InputList.sorted(paths, by: .none), paths)
    }
}
