import Foundation
import TestSupport
import VMergeCore
import XCTest

/// The longest path vmerge takes (`FileName.maxPathBytes`, 4096) is counted in the name's bytes
/// on disk, the same at every door: argv, --inputs-from, a batch job list, a watch job.json (the
/// queue's spec: `JobSpecTests`). Measured on the escaped form a byte that is not UTF-8 takes as
/// text (four bytes each), a 1,273-byte path that works on argv was refused in a job list.
final class PathLimitTests: XCTestCase {
    /// The limit as the README and the messages give it: a contract, not read from the code.
    private let limit = 4096
    private var scratch: [URL] = []

    override func tearDown() {
        for dir in scratch { try? FileManager.default.removeItem(at: dir) }
        scratch = []
        super.tearDown()
    }

    /// A relative path of exactly `length` bytes, nearly all 0xFF: folders of 241 bytes, then a
    /// clip's name ending in ".mov"; its folders as byte paths, outermost first.
    private func longPath(_ length: Int) -> (path: [UInt8], folders: [[UInt8]]) {
        var path: [UInt8] = []
        var folders: [[UInt8]] = []
        // The clip's name takes at least 5 bytes ("x.mov") and at most 250.
        while length - path.count > 250 {
            let left = length - path.count - 1 - 5
            path += [0x64] + [UInt8](repeating: 0xFF, count: min(240, left - 1))
            folders.append(path)
            path.append(0x2F)
        }
        let name = length - path.count - 4
        path += [0x63] + [UInt8](repeating: 0xFF, count: name - 1) + Array(".mov".utf8)
        precondition(path.count == length)
        return (path, folders)
    }

    private func cPath(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> Int32) -> Int32 {
        let path = path + [0]
        return path.withUnsafeBufferPointer {
            $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: path.count, body)
        }
    }

    /// The fixture clip at `path` under `folder` (folders made), a byte path.
    private func plantClip(_ relative: (path: [UInt8], folders: [[UInt8]]), under folder: URL) throws {
        let base = Array((folder.path + "/").utf8)
        for sub in relative.folders { XCTAssertEqual(cPath(base + sub) { mkdir($0, 0o755) }, 0) }
        let fd = cPath(base + relative.path) { open($0, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("b_")))
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// A shell word for bytes: $'...', every byte outside printable ASCII as \xNN.
    private func word(_ bytes: [UInt8]) -> String {
        "$'"
            + bytes.map {
                (0x20..<0x7F).contains($0) && $0 != 0x27 && $0 != 0x5C
                    ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0)
            }.joined() + "'"
    }

    /// vmerge with arguments as bytes (through bash's $'...': a String argument reaches a process
    /// as UTF-8).
    private func vmerge(_ arguments: [[UInt8]], in dir: URL) throws -> RunResult {
        let script = "exec \"$VMERGE\" " + arguments.map(word).joined(separator: " ")
        return try runProgram(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script], in: dir, environment: ["VMERGE": VMergeBinary.url.path])
    }

    private func words(_ words: String...) -> [[UInt8]] { words.map { Array($0.utf8) } }

    /// A door: how the path reaches vmerge, run in a fresh folder; the run and the folder the
    /// output would be in.
    private typealias Door = (name: String, run: ([UInt8], URL) throws -> (RunResult, URL))

    private var doors: [Door] {
        [
            (
                "argv",
                { path, dir in
                    (try self.vmerge([path] + self.words("-o", "o.mp4", "--min-duration", "0"), in: dir), dir)
                }
            ),
            (
                "--inputs-from",
                { path, dir in
                    try Data(path + [0x0A]).write(to: dir.appendingPathComponent("list.txt"))
                    return (
                        try self.vmerge(
                            self.words("--inputs-from", "list.txt", "-o", "o.mp4", "--min-duration", "0"), in: dir),
                        dir
                    )
                }
            ),
            (
                "a job list",
                { path, dir in
                    let line = Data(#"{"inputs": [""#.utf8) + Data(path) + Data(#""], "output": "o.mp4"}"#.utf8)
                    try (line + Data("\n".utf8)).write(to: dir.appendingPathComponent("jobs.jsonl"))
                    return (try self.vmerge(self.words("batch", "jobs.jsonl", "--min-duration", "0"), in: dir), dir)
                }
            ),
            (
                "a watch job.json",
                { path, dir in
                    // The path names the same file relative to the job folder as to the others' folder.
                    let job = dir.appendingPathComponent("in/job")
                    let line = Data(#"{"inputs": [""#.utf8) + Data(path) + Data(#""], "output": "o.mp4"}"#.utf8)
                    try line.write(to: job.appendingPathComponent("job.json"))
                    let run = try self.vmerge(
                        self.words("watch", "in", "--out", "out", "--once", "--settle", "0", "--min-duration", "0"),
                        in: dir)
                    return (run, dir.appendingPathComponent("out"))
                }
            ),
        ]
    }

    /// A fresh folder for a door, the clip planted at `relative` (when it can exist) both where
    /// argv, the lists and batch read it and where the watch job does.
    private func folder(planting relative: (path: [UInt8], folders: [[UInt8]])?) throws -> URL {
        let dir = try makeScratchDirectory()
        scratch.append(dir)
        let job = dir.appendingPathComponent("in/job")
        try FileManager.default.createDirectory(at: job, withIntermediateDirectories: true)
        if let relative {
            try plantClip(relative, under: dir)
            try plantClip(relative, under: job)
        }
        return dir
    }

    /// The 1,273-byte path of the finding, all but a few of its bytes not UTF-8 (about 5,000 as escaped
    /// text): merged at every door.
    func testAPathOfBytesThatAreNotUTF8IsTakenAtEveryDoor() throws {
        let relative = longPath(1273)
        XCTAssertGreaterThan(FileName.decode(relative.path).utf8.count, limit, "over the limit as escaped text")
        for door in doors {
            let (run, out) = try door.run(relative.path, try folder(planting: relative))
            XCTAssertEqual(run.status, 0, "\(door.name): \(run.stderr)")
            XCTAssertTrue(listing(out).contains("o.mp4"), "\(door.name): \(listing(out)) \(run.stderr)")
        }
    }

    /// One byte over the limit: refused at every door, for the same reason, before any work. At
    /// the limit: no door refuses it as too long (the system then finds no such file: a path of
    /// PATH_MAX bytes leaves no room for its NUL), and no door writes anything.
    func testTheLimitIsTheSameInBytesAtEveryDoor() throws {
        for door in doors {
            let (run, out) = try door.run(longPath(limit + 1).path, try folder(planting: nil))
            XCTAssertNotEqual(run.status, 0, door.name)
            XCTAssertTrue(run.stderr.contains("an input is longer than 4096 bytes"), "\(door.name): \(run.stderr)")
            XCTAssertFalse(listing(out).contains("o.mp4"), door.name)
        }
        for door in doors {
            let (run, out) = try door.run(longPath(limit).path, try folder(planting: nil))
            XCTAssertNotEqual(run.status, 0, door.name)
            XCTAssertFalse(run.stderr.contains("longer than"), "\(door.name): \(run.stderr)")
            XCTAssertFalse(listing(out).contains("o.mp4"), door.name)
        }
    }
}
