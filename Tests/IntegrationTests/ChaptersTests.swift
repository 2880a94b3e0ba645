import Foundation
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
