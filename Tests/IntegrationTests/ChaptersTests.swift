import Foundation
import TestSupport
import XCTest

/// --chapters: one chapter per kept clip, where the clip sits on the output, titled with its
/// file name; read back with ffprobe, as players and tools see them.
final class ChaptersTests: XCTestCase {
    private func chapters(_ path: URL) throws -> (list: [(title: String, start: Double, end: Double)], duration: Double) {
        let run = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ffprobe", "-v", "error", "-show_chapters", "-show_entries", "format=duration", "-of", "json", path.path],
            in: path.deletingLastPathComponent())
        XCTAssertEqual(run.status, 0, run.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let list = (json["chapters"] as? [[String: Any]] ?? []).map { chapter in
            (
                title: (chapter["tags"] as? [String: Any])?["title"] as? String ?? "",
                start: Double(chapter["start_time"] as? String ?? "") ?? -1,
                end: Double(chapter["end_time"] as? String ?? "") ?? -1
            )
        }
        let duration = Double((json["format"] as? [String: Any])?["duration"] as? String ?? "") ?? -1
        return (list, duration)
    }

    func testOneChapterPerKeptClipAtItsPlace() throws {
        let dir = try makeScratchDirectory()
        // i (1.5 s) is dropped as too short: no chapter.
        let inputs = ["a_", "c_", "i_", "e_"].map(Fixtures.path)
        let run = try VMergeBinary.run(inputs + ["--chapters", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let (list, duration) = try chapters(dir.appendingPathComponent("out.mp4"))
        XCTAssertEqual(
            list.map(\.title),
            ["a_none_640x480_30fps_aac44k_stereo", "c_rot180_640x480_24fps_noaudio", "e_hflip_640x480_30fps_aac48k_stereo"])
        // Where the report places each kept clip, to the millisecond ffprobe prints.
        let report = try jsonObject(at: dir.appendingPathComponent("r.json"))
        let placements = (report["inputs"] as? [[String: Any]] ?? []).compactMap { $0["placement"] as? [String: Any] }
        XCTAssertEqual(placements.count, 3)
        for (chapter, placement) in zip(list, placements) {
            let start = placement["start"] as? Double ?? -1, length = placement["duration"] as? Double ?? -1
            XCTAssertEqual(chapter.start, start, accuracy: 0.001, chapter.title)
            XCTAssertEqual(chapter.end, start + length, accuracy: 0.001, chapter.title)
        }
        XCTAssertEqual(list.first?.start ?? -1, 0)
        XCTAssertEqual(list.last?.end ?? -1, duration, accuracy: 0.001, "the last chapter ends with the output")
        for (previous, next) in zip(list, list.dropFirst()) { XCTAssertEqual(previous.end, next.start, accuracy: 0.001) }

        // Without the option, none.
        let plain = try VMergeBinary.run(inputs + ["-o", "plain.mp4"], in: dir)
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertTrue(try chapters(dir.appendingPathComponent("plain.mp4")).list.isEmpty)
    }

    /// The Nero list (chpl) holds 255 chapters and 255 bytes a title; the QuickTime track, more.
    /// Past 255 clips both lists hold the same 255 (the last spanning the rest), and a long title
    /// is cut on a character boundary (the muxer cut mid-character: invalid UTF-8).
    func testPast255ClipsAndLongTitlesBothListsAgree() throws {
        let dir = try makeScratchDirectory()
        let tiny = Fixtures.path("l_tiny")  // 0.1 s: 3 output frames
        let title = String(repeating: "é", count: 200)  // 400 bytes
        var inputs = [#"{"path": "\#(tiny)", "title": "\#(title)"}"#]
        inputs += Array(repeating: #"{"path": "\#(tiny)"}"#, count: 259)
        let line = #"{"inputs": [\#(inputs.joined(separator: ", "))], "output": "out.mp4", "#
            + #""options": {"chapters": true, "min-duration": 0}}"#
        try line.write(to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "-q"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = dir.appendingPathComponent("out.mp4")
        let (list, duration) = try chapters(out)
        XCTAssertEqual(list.count, 255)
        let first = try XCTUnwrap(list.first?.title)
        XCTAssertTrue(first.hasSuffix("\u{2026}") && title.hasPrefix(String(first.dropLast())), first)
        XCTAssertLessThanOrEqual(first.utf8.count, 255)
        XCTAssertEqual(list.last?.title, "l_tiny_0.1s_160x120_30fps (+5 more)")
        XCTAssertEqual(list.last?.start ?? -1, 254 * 0.1, accuracy: 0.001)
        XCTAssertEqual(list.last?.end ?? -1, duration, accuracy: 0.001, "the last chapter spans the rest")
        XCTAssertEqual(duration, 26, accuracy: 0.001)

        // The Nero list, read from the file: its count, and each title valid UTF-8 as written.
        let bytes = [UInt8](try Data(contentsOf: out))
        let chpl = try XCTUnwrap(Data(bytes).range(of: Data("chpl".utf8))).upperBound
        XCTAssertEqual(Int(bytes[chpl + 8]), 255, "chpl count")
        var at = chpl + 9
        var neroTitles: [String] = []
        for _ in 0..<255 {
            let length = Int(bytes[at + 8])
            let raw = Array(bytes[at + 9..<at + 9 + length])
            neroTitles.append(try XCTUnwrap(String(validating: raw, as: UTF8.self), "valid UTF-8"))
            at += 9 + length
        }
        XCTAssertEqual(neroTitles, list.map(\.title))
        // The QuickTime chapter track: one sample per chapter, the same 255.
        let track = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,nb_frames", "-of", "csv=p=0", out.path],
            in: dir)
        XCTAssertTrue(track.stdout.split(separator: "\n").contains("data,255"), track.stdout)
    }

    func testChaptersEndWhereMaxSizeEndedTheFile() throws {
        let dir = try makeScratchDirectory()
        let inputs = Fixtures.orientationClips.map(Fixtures.path)
        let run = try VMergeBinary.run(inputs + ["--chapters", "--max-size", "40K", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = dir.appendingPathComponent("out.mp4")
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int)
        XCTAssertLessThanOrEqual(size, 40 * 1024, "the chapters fit inside --max-size too")
        let (list, duration) = try chapters(out)
        XCTAssertFalse(list.isEmpty)
        XCTAssertLessThan(list.count, inputs.count, "the limit ended the file before the last clips")
        XCTAssertEqual(list.last?.end ?? -1, duration, accuracy: 0.001, "the last chapter ends with the file")
        XCTAssertTrue(list.allSatisfy { $0.start < duration })
    }
}
