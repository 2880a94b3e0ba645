import Foundation
import TestSupport
import VMergeCore
import XCTest

/// A file name is bytes: every door (argv, --inputs-from as a file and on stdin, a folder, a batch
/// folder and job list, watch's inbox) reads the name it was given, never the one a String's
/// U+FFFD repair would make of it. The tree holds names that differ only in bytes that are not
/// UTF-8, beside decoys with the names a lossy decoding would reach (U+FFFD, and the escape
/// form's own UTF-8): each is a clip of another length, so the output's length tells which files
/// were merged, and --delete-sources must delete exactly the named ones.
final class NamesAreBytesTests: XCTestCase {
    /// c\xFF.mov (a_, 3 s) and c\xFE.mov (b_, 2.5 s): the ones named.
    static let named: [(name: [UInt8], fixture: String)] = [(bytes("c") + [0xFF] + bytes(".mov"), "a_"), (bytes("c") + [0xFE] + bytes(".mov"), "b_")]
    /// What a lossy reading would name instead: c\u{FFFD}.mov (j_, 3.75 s), and the escape form's
    /// UTF-8, c\u{10FFFF}.mov (e_, 2.2 s) and c\u{10FFFE}.mov (d_, 2.4 s).
    static let decoys: [(name: [UInt8], fixture: String)] = [
        (bytes("c\u{FFFD}.mov"), "j_"), (bytes("c\u{10FFFF}.mov"), "e_"), (bytes("c\u{10FFFE}.mov"), "d_"),
    ]
    /// a_ + b_ at 30 fps.
    static let mergedSeconds = 5.5

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private var scratch: [URL] = []

    override func tearDown() {
        for dir in scratch { try? FileManager.default.removeItem(at: dir) }
        scratch = []
        super.tearDown()
    }

    /// A folder with the named clips and the decoys in `sub` (relative, "" for the folder itself).
    private func tree(_ sub: String = "") throws -> URL {
        let dir = try makeScratchDirectory()
        scratch.append(dir)
        let folder = sub.isEmpty ? dir : dir.appendingPathComponent(sub)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, fixture) in Self.named + Self.decoys {
            try write(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(fixture))), to: folder, name)
        }
        return dir
    }

    /// Writes `data` at `folder`/`name`, the name as bytes.
    private func write(_ data: Data, to folder: URL, _ name: [UInt8]) throws {
        try write(data, at: Self.bytes(folder.path + "/") + name)
    }

    private func write(_ data: Data, at path: [UInt8]) throws {
        let path = path + [0]
        let fd = path.withUnsafeBufferPointer {
            $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: path.count) {
                open($0, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            }
        }
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        _ = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
    }

    /// The names in a folder as bytes (readdir, nothing decoded).
    private func rawListing(_ folder: URL) -> Set<[UInt8]> {
        guard let stream = opendir(folder.path) else { return [] }
        defer { closedir(stream) }
        var names: Set<[UInt8]> = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) {
                    Array(UnsafeRawBufferPointer(start: $0, count: strlen($0)))
                }
            }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.insert(name) }
        }
        return names
    }

    /// A shell word for bytes: $'...', every byte outside printable ASCII as \xNN.
    private func word(_ bytes: [UInt8]) -> String {
        "$'" + bytes.map { (0x20..<0x7F).contains($0) && $0 != 0x27 && $0 != 0x5C ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0) }.joined() + "'"
    }

    /// Runs vmerge with arguments as bytes (a String argument is UTF-8 by the time a process gets
    /// it, so they go through bash's $'...'); `stdin` is a file in `dir` given on stdin.
    private func vmerge(_ arguments: [[UInt8]], in dir: URL, stdin: String? = nil) throws -> RunResult {
        let script = "exec \"$VMERGE\" " + arguments.map(word).joined(separator: " ") + (stdin.map { " < \($0)" } ?? "")
        return try runProgram(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script], in: dir, environment: ["VMERGE": VMergeBinary.url.path])
    }

    private func args(_ words: String...) -> [[UInt8]] { words.map(Self.bytes) }

    /// The output is the named clips' merge, under its name as bytes.
    private func assertMergedNamed(_ output: [UInt8], in folder: URL, _ run: RunResult, line: UInt = #line) throws {
        XCTAssertEqual(run.status, 0, run.stderr, line: line)
        XCTAssertTrue(rawListing(folder).contains(output), "\(rawListing(folder).map(FileName.decode))", line: line)
        // Measured on a copy under a plain name: the inspector opens paths as Strings.
        let copy = try makeScratchDirectory().appendingPathComponent("measured.mp4")
        scratch.append(copy.deletingLastPathComponent())
        try XCTUnwrap(contents(folder, output), line: line).write(to: copy)
        let duration = try decodedVideoDuration(copy.path)
        XCTAssertEqual(duration, Self.mergedSeconds, accuracy: 0.1, "merged the named clips, not decoys", line: line)
    }

    /// Every decoy is still there, byte for byte.
    private func assertDecoysKept(in folder: URL, line: UInt = #line) throws {
        for (name, fixture) in Self.decoys {
            let expected = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(fixture)))
            XCTAssertEqual(contents(folder, name), expected, "decoy \(VisibleText.of(FileName.decode(name))) kept", line: line)
        }
    }

    // MARK: - the command line

    /// argv: the named files are merged into an output, report and poster named with such bytes,
    /// --delete-sources deletes exactly them, and the report carries every name losslessly.
    func testArgumentsAreBytes() throws {
        let dir = try tree()
        let (a, b) = (Self.named[0].name, Self.named[1].name)
        let output = Self.bytes("out") + [0xFF] + Self.bytes(".mp4")
        let report = Self.bytes("r") + [0xFF] + Self.bytes(".json")
        let poster = Self.bytes("p") + [0xFF] + Self.bytes(".jpg")
        let run = try vmerge(
            [a, b, Self.bytes("-o"), output, Self.bytes("--report"), report, Self.bytes("--poster"), poster]
                + args("--min-duration", "0", "--delete-sources"), in: dir)
        try assertMergedNamed(output, in: dir, run)
        let names = rawListing(dir)
        XCTAssertFalse(names.contains(a) || names.contains(b), "the named sources were deleted")
        XCTAssertTrue(names.contains(poster) && names.contains(report), "\(names.map(FileName.decode))")
        try assertDecoysKept(in: dir)
        // The report: U+10FFxx for each byte, written \udbff\udfxx.
        let text = String(decoding: try XCTUnwrap(contents(dir, report)), as: UTF8.self)
        XCTAssertTrue(text.contains(#""c\udbff\udfff.mov""#), text)
        XCTAssertTrue(text.contains(#""c\udbff\udffe.mov""#), text)
        XCTAssertTrue(text.contains(#"out\udbff\udfff.mp4""#), text)
        XCTAssertFalse(text.contains("\u{FFFD}"), "no lossy stand-in: \(text)")
        // Messages show the bytes escaped.
        for name in ["c\\xFF.mov", "c\\xFE.mov"] {
            XCTAssertTrue(
                run.stderrLines.contains("vmerge: \(name): deleted (--delete-sources: the output holds all of it)"),
                run.stderr)
        }
    }

    /// The bytes of `folder`/`name`, the name as bytes; nil if it cannot be read.
    private func contents(_ folder: URL, _ name: [UInt8]) -> Data? {
        let path = Self.bytes(folder.path + "/") + name + [0]
        let fd = path.withUnsafeBufferPointer {
            $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: path.count) { open($0, O_RDONLY) }
        }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return data }
            data += buffer[0..<count]
        }
    }

    /// A name that is not there is said to be missing with its bytes escaped, not mistaken for
    /// its U+FFFD twin (which is there).
    func testAMissingNameIsSaidAsItsBytes() throws {
        let dir = try tree()
        let missing = Self.bytes("c") + [0xFD] + Self.bytes(".mov")
        try write(Data("x".utf8), to: dir, Self.bytes("c\u{FFFD}.mp4"))
        let run = try vmerge([missing] + args("-o", "o.mp4"), in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderrLines, ["vmerge: c\\xFD.mov: no such file or directory"], run.stderr)
    }

    /// --inputs-from, as a file and on stdin, with the names' raw bytes on its lines.
    func testAnInputListIsBytes() throws {
        for viaStdin in [false, true] {
            let dir = try tree()
            let list = Self.named.map(\.name).reduce([UInt8]()) { $0 + $1 + [0x0A] }
            try Data(list).write(to: dir.appendingPathComponent("list.txt"))
            let run = try vmerge(
                args("--inputs-from", viaStdin ? "-" : "list.txt", "-o", "out.mp4", "--min-duration", "0",
                    "--delete-sources"), in: dir, stdin: viaStdin ? "list.txt" : nil)
            try assertMergedNamed(Self.bytes("out.mp4"), in: dir, run)
            XCTAssertTrue(Self.named.allSatisfy { !rawListing(dir).contains($0.name) }, "the listed sources deleted")
            try assertDecoysKept(in: dir)
        }
    }

    /// A folder named as the input: each of its videos by its bytes (it used to refuse them).
    func testAFolderOfSuchNamesIsMerged() throws {
        let dir = try makeScratchDirectory()
        scratch.append(dir)
        let folder = dir.appendingPathComponent("clips")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, fixture) in Self.named {
            try write(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(fixture))), to: folder, name)
        }
        let run = try vmerge(args("clips", "-o", "out.mp4", "--min-duration", "0"), in: dir)
        try assertMergedNamed(Self.bytes("out.mp4"), in: dir, run)
    }

    // MARK: - batch and watch

    /// batch over a folder: a job folder named with such bytes makes an output of that name.
    func testABatchJobFolderIsBytes() throws {
        let job = Self.bytes("J") + [0xFF]
        let dir = try makeScratchDirectory()
        scratch.append(dir)
        let jobs = dir.appendingPathComponent("jobs")
        try FileManager.default.createDirectory(at: jobs, withIntermediateDirectories: true)
        XCTAssertEqual(mkdirBytes(Self.bytes(jobs.path + "/") + job), 0)
        for (name, fixture) in Self.named {
            try write(
                try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(fixture))),
                at: Self.bytes(jobs.path + "/") + job + [0x2F] + name)
        }
        let run = try vmerge(args("batch", "jobs", "--out", "out", "--min-duration", "0"), in: dir)
        try assertMergedNamed(job + Self.bytes(".mp4"), in: dir.appendingPathComponent("out"), run)
    }

    /// batch over a job list: names given as raw bytes, as Python's \udcXX and as vmerge's own
    /// \udbff\udfXX all name the same files.
    func testAJobListCarriesBytesInEveryForm() throws {
        let dir = try tree()
        var list = Data()
        list += Data(#"{"name": "raw", "inputs": [""#.utf8) + Data(Self.named[0].name) + Data(#"", ""#.utf8)
            + Data(Self.named[1].name) + Data(#""], "output": "raw.mp4"}"#.utf8) + Data("\n".utf8)
        list += Data(#"{"name": "python", "inputs": ["c\udcff.mov", "c\udcfe.mov"], "output": "py\udcff.mp4"}"#.utf8)
        list += Data("\n".utf8)
        list += Data(#"{"name": "ours", "inputs": ["c\udbff\udfff.mov", "c\udbff\udffe.mov"], "output": "ours.mp4"}"#.utf8)
        try list.write(to: dir.appendingPathComponent("jobs.jsonl"))
        let run = try vmerge(args("batch", "jobs.jsonl", "--min-duration", "0"), in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        for output in [Self.bytes("raw.mp4"), Self.bytes("py") + [0xFF] + Self.bytes(".mp4"), Self.bytes("ours.mp4")] {
            try assertMergedNamed(output, in: dir, run)
        }
        try assertDecoysKept(in: dir)
    }

    /// A job list naming a file by the raw UTF-8 of U+10FFFF (a real character of a real name, or
    /// vmerge's form of the byte FF?) is refused before any work, saying how to write it; nothing
    /// is read or deleted.
    func testARawEscapeCharacterInAJobListIsRefused() throws {
        let dir = try tree()
        var list = Data(#"{"inputs": [""#.utf8) + Data(Self.decoys[1].name) + Data(#""], "output": "o.mp4"}"#.utf8)
        list += Data("\n".utf8)
        try list.write(to: dir.appendingPathComponent("jobs.jsonl"))
        let run = try vmerge(args("batch", "jobs.jsonl", "--min-duration", "0", "--delete-sources"), in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(
            run.stderrLines,
            [#"vmerge: jobs.jsonl: line 1: holds U+10FFFF as a character, which could be a name's byte 0xff or that "#
                + #"character: write the byte escaped, \udbff\udfff (as vmerge and 'jq -a' write it) or \udcff (as "#
                + "Python does)"], run.stderr)
        XCTAssertTrue(Self.named.allSatisfy { rawListing(dir).contains($0.name) }, "nothing deleted")
        try assertDecoysKept(in: dir)
    }

    /// --progress json on stderr stays valid JSON whatever the name holds (C1 controls, DEL, the
    /// line separators, bytes that are not UTF-8), and still sends the terminal no control.
    func testProgressJSONOnStderrIsValidForAnyName() throws {
        let dir = try makeScratchDirectory()
        scratch.append(dir)
        let name = Self.bytes("e\u{1B}[31m") + [0xFF] + Self.bytes("\u{85}\u{2028}\u{7F}.mov")
        try write(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("a_"))), to: dir, name)
        let run = try vmerge(
            [name] + args("-o", "o.mp4", "--min-duration", "0", "--progress", "json", "-q"), in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stderrLines.filter { $0.hasPrefix("{") }
        XCTAssertFalse(lines.isEmpty, run.stderr)
        for line in lines {
            let object = try XCTUnwrap(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
            if let file = object["file"] as? String { XCTAssertEqual(FileName.bytes(of: file), name) }
            XCTAssertFalse(line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, line)
        }
    }

    /// A job.json output name too long for the names watch makes from it (a taken name's -2...,
    /// the report's .json) is refused before any work; its extension keeps its case.
    func testAWatchOutputNameKeepsItsCaseAndRoomForItsDerivedNames() throws {
        let dir = try makeScratchDirectory()
        scratch.append(dir)
        let inbox = dir.appendingPathComponent("in")
        for (job, output) in [("long", String(repeating: "x", count: 242) + ".mp4"), ("upper", "Trip.MOV")] {
            let folder = inbox.appendingPathComponent(job)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: folder.appendingPathComponent("a.mov").path)
            try Data(#"{"inputs": ["a.mov"], "output": "\#(output)"}"#.utf8).write(to: folder.appendingPathComponent("job.json"))
        }
        let run = try vmerge(args("watch", "in", "--out", "out", "--once", "--settle", "0", "--min-duration", "0"), in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(
            run.stderr.contains("'output' is 246 bytes long; at most 245, so that the names made from it"), run.stderr)
        XCTAssertEqual(listing(dir.appendingPathComponent("out")), ["Trip.MOV", "Trip.MOV.json"])
    }

    /// watch: a job folder and a loose clip named with such bytes are claimed, merged and
    /// published under their names; the log shows the bytes escaped.
    func testWatchTakesSuchNames() throws {
        let dir = try makeScratchDirectory()
        scratch.append(dir)
        let inbox = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let job = Self.bytes("J") + [0xFE]
        XCTAssertEqual(mkdirBytes(Self.bytes(inbox.path + "/") + job), 0)
        let folder = Self.bytes(inbox.path + "/") + job + [0x2F]
        for (name, fixture) in Self.named {
            try write(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(fixture))), at: folder + name)
        }
        try write(Data(), at: folder + Self.bytes(".ready"))
        try write(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("a_"))), to: inbox, Self.named[0].name)
        let run = try vmerge(
            args("watch", "in", "--out", "out", "--once", "--settle", "0", "--min-duration", "0"), in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = dir.appendingPathComponent("out")
        try assertMergedNamed(job + Self.bytes(".mp4"), in: out, run)
        XCTAssertTrue(rawListing(out).contains(Self.bytes("c") + [0xFF] + Self.bytes(".mp4")), "\(rawListing(out))")
        XCTAssertTrue(run.stderr.contains("J\\xFE"), run.stderr)
        XCTAssertFalse(run.stderr.contains("\u{FFFD}"), run.stderr)
    }

    private func mkdirBytes(_ path: [UInt8]) -> Int32 {
        let path = path + [0]
        return path.withUnsafeBufferPointer {
            $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: path.count) { mkdir($0, 0o755) }
        }
    }
}
