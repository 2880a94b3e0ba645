import Foundation
import XCTest

@testable import VMergeCore

final class JobTests: XCTestCase {
    func testJobKeyFollowsInputsAndOptions() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a.mov")
        try Data([1, 2, 3]).write(to: file)
        let options = MergeOptions()
        let key = JobKey.make(inputs: [file.path], root: nil, options: options)
        XCTAssertEqual(key.count, 64)
        XCTAssertEqual(JobKey.make(inputs: [file.path], root: nil, options: options), key, "stable")
        var other = options
        other.quality = .high
        XCTAssertNotEqual(JobKey.make(inputs: [file.path], root: nil, options: other), key)
        other = options
        other.overwrite = true
        XCTAssertEqual(JobKey.make(inputs: [file.path], root: nil, options: other), key, "-y does not shape the output")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -99)], ofItemAtPath: file.path)
        XCTAssertNotEqual(JobKey.make(inputs: [file.path], root: nil, options: options), key, "mtime counts")
        // Relative to a root, the key survives the folder moving (watch: inbox -> .processing).
        let moved = folder.appendingPathComponent("moved")
        try FileManager.default.createDirectory(at: moved, withIntermediateDirectories: true)
        let rooted = JobKey.make(inputs: [file.path], root: folder.path, options: options)
        try FileManager.default.moveItem(at: file, to: moved.appendingPathComponent("a.mov"))
        XCTAssertEqual(
            JobKey.make(inputs: [moved.appendingPathComponent("a.mov").path], root: moved.path, options: options),
            rooted)
    }

    func testJobListParsing() throws {
        let text = """
            # jobs
            {"inputs": ["a.mov", "/abs/b.mov"], "output": "ab.mp4", "options": {"quality": "high", "min_duration": 0, "skip-invalid": true, "max-size": "1M"}}

            {"inputs": ["c.mov"], "output": "/out/c.mp4", "name": "cee"}
            """
        let entries = try JobList.parse(text, base: "/lists", outputBase: "/outs", file: "jobs.jsonl")
        XCTAssertEqual(entries.count, 2)
        let (first, second) = (entries[0].job, entries[1].job)
        XCTAssertEqual(first.inputPaths, ["/lists/a.mov", "/abs/b.mov"])
        XCTAssertEqual(first.output, "/outs/ab.mp4")
        XCTAssertEqual(first.name, "ab", "no name: the output's file name without its extension")
        XCTAssertEqual(first.settings.merge.maxSize, 1 << 20)
        XCTAssertEqual(first.settings.merge.minDuration, 0)
        XCTAssertEqual(first.settings.merge.quality, .high)
        XCTAssertTrue(first.settings.merge.skipInvalid)
        XCTAssertEqual(second.settings, JobSettings(), "no options: the defaults")
        // Folders given with their slash join as a person writes them, not as /outs//ab.mp4.
        let slashed = try JobList.parse(text, base: "lists/", outputBase: "outs/", file: "jobs.jsonl")
        XCTAssertEqual(slashed[0].job.output, "outs/ab.mp4")
        XCTAssertEqual(slashed[0].job.inputPaths, ["lists/a.mov", "/abs/b.mov"])
        XCTAssertEqual(entries[0].line, 2)
        XCTAssertEqual(second.output, "/out/c.mp4")
        XCTAssertEqual(second.name, "cee")
        let bad: [(String, String)] = [
            ("not json", "line 1: not valid JSON"),
            ("[1]", "line 1: not a JSON object"),
            (#"{"inputs": [], "output": "x.mp4"}"#, "line 1: 'inputs' must be a non-empty list of paths"),
            (#"{"inputs": ["a"]}"#, "line 1: 'output' must be a path"),
            (#"{"inputs": ["a"], "output": "x", "colour": 1}"#, "line 1: unknown field 'colour'"),
            (#"{"inputs": ["a"], "output": "x", "options": {"width": [1]}}"#, "line 1: option 'width' must be"),
        ]
        for (line, message) in bad {
            XCTAssertThrowsError(try JobList.parse(line, base: ".", outputBase: ".", file: "j.jsonl")) { error in
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
    }
}
