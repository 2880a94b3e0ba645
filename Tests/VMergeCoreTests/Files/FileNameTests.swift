import Foundation
import XCTest

@testable import VMergeCore

/// Names are bytes (`FileName`): the lossless form, its way back, and the one door to the system.
final class FileNameTests: XCTestCase {
    /// Seeded random byte strings, heavy on the bytes that are not UTF-8 and on the escape range's
    /// own encoding (F4 8F BE/BF xx), round-trip exactly, and no two share a form.
    func testEveryByteStringRoundTripsAndNoTwoShareAForm() {
        var generator = SplitMix(seed: 33)
        let pieces: [[UInt8]] = [
            [0xFF], [0xFE], [0x80], [0xC3], [0xC3, 0xA9], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x8F, 0xBE, 0x80], [0xF0, 0x9F, 0x8E, 0xA5], [0xEF, 0xBF, 0xBD], Array("a.mov".utf8), [0x5C, 0x78],
        ]
        var forms: [String: [UInt8]] = [:]
        for _ in 0..<5000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                bytes += Bool.random(using: &generator)
                    ? pieces.randomElement(using: &generator)!
                    : [UInt8.random(in: 1...255, using: &generator)]
            }
            let form = FileName.decode(bytes)
            XCTAssertEqual(FileName.bytes(of: form), bytes, "\(bytes)")
            let reached = POSIX.named(FileName(form), failure: []) { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) }
            XCTAssertEqual(reached, bytes)
            if let other = forms[form] { XCTAssertEqual(other, bytes, "two byte strings share the form \(form)") }
            forms[form] = bytes
        }
    }

    func testValidUTF8IsItsOwnFormAndBadBytesShowAsEscapes() {
        XCTAssertEqual(FileName.decode(Array("clip é 🎥.mov".utf8)), "clip é 🎥.mov")
        let bad = FileName.decode([0x62, 0x61, 0x64, 0xFF, 0xFE] + Array(".mov".utf8))
        XCTAssertNotEqual(bad, "bad\u{FFFD}\u{FFFD}.mov")
        XCTAssertEqual(VisibleText.of(bad), "bad\\xFF\\xFE.mov")
        XCTAssertTrue(FileName.hasEscapedBytes(bad))
        // A name that really holds U+10FFFF is its four bytes, not the byte FF.
        let real = "x\u{10FFFF}"
        XCTAssertEqual(FileName.decode(Array(real.utf8)).unicodeScalars.count, 5)
        XCTAssertEqual(FileName.bytes(of: FileName.decode(Array(real.utf8))), Array(real.utf8))
    }

    /// JSON carries a name's bytes: written as `\udbff\udfXX`, read back from that, from the
    /// character itself, from Python's `\udcXX` and from a raw byte.
    func testJSONCarriesNamesLosslessly() throws {
        let name = FileName.decode([0x61, 0xFF, 0x5C, 0x22, 0xC3])  // a, FF, backslash, quote, C3
        let text = JSON.object([("output", .string(name))]).text()
        XCTAssertEqual(text, #"{"output":"a\udbff\udfff\\\"\udbff\udfc3"}"#)
        for (source, expected) in [
            (Data(text.utf8), name),
            (Data(#"{"output": "a\udcff.mp4"}"#.utf8), FileName.decode([0x61, 0xFF] + Array(".mp4".utf8))),
            (Data(#"{"output": "a\\udcff.mp4"}"#.utf8), #"a\udcff.mp4"#),
            (Data(#"{"output": "\ud83c\udfa5.mp4"}"#.utf8), "🎥.mp4"),
            (Data([0x7B, 0x22, 0x6F, 0x22, 0x3A, 0x22, 0x61, 0xFE, 0x22, 0x7D]), FileName.decode([0x61, 0xFE])),
        ] {
            let object = try JobFile.object(from: source)
            let value = (object["output"] ?? object["o"]) as? String
            XCTAssertEqual(value, expected, String(decoding: source, as: UTF8.self))
        }
    }

    /// A job file that holds U+10FF80-U+10FFFF as raw characters is refused (a pasted name's four
    /// bytes, or vmerge's form of one byte: guessing names another file); escaped, it is the byte.
    func testAJobFileWithARawEscapeCharacterIsRefused() throws {
        let raw = Data(#"{"output": "c"#.utf8) + Data([0xF4, 0x8F, 0xBF, 0xBF]) + Data(#".mp4"}"#.utf8)
        XCTAssertThrowsError(try JobFile.object(from: raw)) { error in
            XCTAssertEqual(
                "\(error)",
                #"holds U+10FFFF as a character, which could be a name's byte 0xff or that character: write the byte "#
                    + #"escaped, \udbff\udfff (as vmerge and 'jq -a' write it) or \udcff (as Python does)"#)
        }
        XCTAssertEqual(
            try JobFile.object(from: Data(#"{"output": "c\udbff\udfff.mp4"}"#.utf8))["output"] as? String,
            FileName.decode(Array("c".utf8) + [0xFF] + Array(".mp4".utf8)))
        // What the database hands back of a spec vmerge stored: the character is the byte.
        XCTAssertEqual(
            try JobFile.object(fromStored: "{\"output\": \"c\u{10FFFF}.mp4\"}")["output"] as? String,
            FileName.decode(Array("c".utf8) + [0xFF] + Array(".mp4".utf8)))
    }

    /// JSON stays one valid line whatever a name holds: C1 controls, DEL and the line separators
    /// are escaped by the writer (a terminal sees no control, a JSON reader a valid escape).
    func testJSONEscapesEveryControlAndLineSeparator() throws {
        let text = JSON.string("e\u{1B}\u{7F}\u{85}\u{9F}\u{2028}\u{2029}é").text()
        XCTAssertEqual(text, #""e\u001b\u007f\u0085\u009f\u2028\u2029é""#)
        XCTAssertEqual(VisibleText.of(text), text, "nothing left for the terminal's escaping")
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed) as? String,
            "e\u{1B}\u{7F}\u{85}\u{9F}\u{2028}\u{2029}é")
    }

    /// A chapter title made from a name is text: a byte that is not UTF-8 is U+FFFD, a real
    /// U+10FFFF stays itself.
    func testATitleFromANameIsItsBytesReadAsText() {
        XCTAssertEqual(Chapter.visible(FileName.decode(Array("c".utf8) + [0xFF])), "c\u{FFFD}")
        XCTAssertEqual(Chapter.visible(FileName.decode(Array("d\u{10FFFF}".utf8))), "d\u{10FFFF}")
    }

    /// A name's length is its bytes on disk: an escaped byte counts one, not the four of its form.
    func testANameIsMeasuredInItsBytesOnDisk() {
        let name = FileName.decode([0x61, 0xFF, 0xC3, 0xA9] + Array("\u{10FFFF}".utf8))
        XCTAssertEqual(FileName.bytes(of: name).count, 1 + 1 + 2 + 4)
        let longest = FileName.decode([UInt8](repeating: 0xFF, count: 4096))
        XCTAssertNil(FileName.lengthProblem(of: longest, field: "an input"))
        XCTAssertEqual(
            FileName.lengthProblem(of: longest + "x", field: "an input"), "an input is longer than 4096 bytes")
        // A poster's name is held to NAME_MAX the same way.
        let poster = FileName.decode([UInt8](repeating: 0xFF, count: 251) + Array(".jpg".utf8))
        XCTAssertTrue(ValueRule.posterName.accepts(poster))
        XCTAssertFalse(ValueRule.posterName.accepts("x" + poster))
    }

    func testTheDoorRefusesANameWithNUL() {
        var info = stat()
        errno = 0
        XCTAssertEqual(POSIX.stat(FileName(bytes: Array("/\0etc".utf8)), &info), -1)
        XCTAssertEqual(errno, EINVAL)
    }

    /// Every call of a C function that takes a path or a name goes through `POSIX` (or hands the
    /// bytes over through `POSIX.named`): a String passed straight to the C function is its
    /// repaired UTF-8, another file's name. `POSIX` takes only `FileName`, so a call through it
    /// says which name it is; this holds the calls that would go around it.
    func testEveryPathReachesTheSystemThroughTheDoor() throws {
        let functions = [
            "stat", "lstat", "fstatat", "access", "statvfs", "open", "openat", "vm_openat", "mkdir", "mkdirat",
            "unlink", "unlinkat", "rename", "renameat", "renameat2", "vm_rename_noreplace", "link", "linkat",
            "symlink", "symlinkat", "readlink", "readlinkat", "realpath", "chmod", "fchmodat", "chown", "lchown",
            "fchownat", "truncate", "utimensat", "opendir", "rmdir", "mkfifo", "fopen", "vm_watch_add",
        ]
        let call = try NSRegularExpression(pattern: #"(?<![\w.])(?<!func )(\#(functions.joined(separator: "|")))\((?!\))"#)
        let foundation = try NSRegularExpression(
            pattern: #"FileManager|fileURLWithPath|contentsOfFile|write\(toFile|CommandLine\.arguments"#)
        // This file is in Tests/VMergeCoreTests/Files/.
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../Sources")
        var offenders: [String] = []
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        XCTAssertGreaterThan(files.count, 50)
        for file in files where file.hasSuffix(".swift") && !file.hasPrefix("VMergeFuzz") && !file.hasSuffix("POSIX.swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                if line.trimmingCharacters(in: .whitespaces).hasPrefix("//") || line.contains("POSIX.named(") {
                    continue
                }
                let range = NSRange(line.startIndex..., in: line)
                if call.firstMatch(in: line, range: range) != nil || foundation.firstMatch(in: line, range: range) != nil {
                    offenders.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertEqual(offenders, [], "paths must reach the system through POSIX (FileName's bytes)")
    }
}
