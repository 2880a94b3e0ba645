import Foundation
import XCTest

@testable import VMergeCore

/// A `FileName`'s path operations work on bytes: on UTF-8 names they agree with NSString's
/// (the oracle they replaced), and a name that is not UTF-8 keeps every byte through them.
final class FileNamePathTests: XCTestCase {
    private static let paths = [
        // Not a one-character name without a slash: NSString's deletingLastPathComponent traps on
        // it in this toolchain's Foundation (String._startOfLastPathComponent); FileName does not.
        "a.mov", "clips/a.mov", "/abs/clips/a.MOV", "clips/", "clips//", "/", "/a", "ab", "", ".profile",
        "clips/.hidden", "a.b.c", "a.", "..", "...", "..mp4", ".a.", "../x/y.mp4", "dir.d/file", "dir.d/", "x//y.mp4", "été/çà.mov",
    ]

    func testOnUTF8NamesItAgreesWithNSString() {
        for path in FileNamePathTests.paths {
            let name = FileName(path), ns = path as NSString
            XCTAssertEqual(name.lastComponent.escaped, ns.lastPathComponent, "last component of \(path)")
            XCTAssertEqual(name.pathExtension, ns.pathExtension, "extension of \(path)")
            XCTAssertEqual(name.stem.escaped, (ns.lastPathComponent as NSString).deletingPathExtension, "stem: \(path)")
            if path != "x//y.mp4" {  // NSString also collapses the double slash inside
                XCTAssertEqual(name.deletingExtension.escaped, ns.deletingPathExtension, "without extension: \(path)")
                XCTAssertEqual(name.folder.escaped, ns.deletingLastPathComponent, "folder of \(path)")
            }
        }
        XCTAssertEqual(FileName("x//y.mp4").folder.escaped, "x")
        XCTAssertEqual(FileName("x//y.mp4").deletingExtension.escaped, "x//y")
        XCTAssertEqual(FileName("a").folder.escaped, "")
        XCTAssertEqual(FileName("a").lastComponent.escaped, "a")
    }

    func testBytesThatAreNotUTF8SurviveEveryOperation() {
        let name = FileName(bytes: Array("dir".utf8) + [0xFF, 0x2F, 0x62, 0xE9, 0x2E, 0x6D, 0x6F, 0x76])  // dir\xFF/b\xE9.mov
        XCTAssertEqual(name.lastComponent.bytes, [0x62, 0xE9, 0x2E, 0x6D, 0x6F, 0x76])
        XCTAssertEqual(name.folder.bytes, Array("dir".utf8) + [0xFF])
        XCTAssertEqual(name.stem.bytes, [0x62, 0xE9])
        XCTAssertEqual(name.pathExtension, "mov")
        XCTAssertEqual(name.folder.appending(name.lastComponent), name)
        // Through the lossless String form and back, byte for byte; printed with escapes.
        XCTAssertEqual(FileName(name.escaped), name)
        XCTAssertEqual(name.description, "dir\\xFF/b\\xE9.mov")
        // \xFF and U+FFFD are two names, as they are two files.
        XCTAssertNotEqual(FileName(bytes: [0xFF]), FileName("\u{FFFD}"))
    }

    func testANameJoinsAFolderAsAPersonWritesIt() {
        XCTAssertEqual(FileName.joined("merged/", "trip.mp4"), "merged/trip.mp4")
        XCTAssertEqual(FileName.joined("merged//", "trip.mp4"), "merged/trip.mp4")
        XCTAssertEqual(FileName.joined("/", "trip.mp4"), "/trip.mp4")
        XCTAssertEqual(FileName.joined("", "trip.mp4"), "trip.mp4", "the current folder, unnamed")
    }
}
