import Foundation
import TestSupport
import VMerge
import XCTest

/// What a Swift developer expects of the API's types: an error an alert can show, an error about
/// a file naming it in `file`, a job's JSON by its property names, a report without its JSON twin.
final class SwiftConventionTests: MergeSessionTestCase {
    /// `localizedDescription` (what SwiftUI's alerts show) is the one line, not "The operation
    /// could not be completed".
    func testAMergeErrorIsALocalizedErrorSayingItsOneLine() async throws {
        let bad = Fixtures.url("bad_text")
        do {
            _ = try await MergeSession(MergeJob(inputs: [bad], output: folder.appendingPathComponent("o.mp4"))).run()
            XCTFail("merged a text file")
        } catch let error as MergeError {
            XCTAssertEqual(error.errorDescription, error.description)
            XCTAssertEqual((error as any Error).localizedDescription, "\(bad.path): \(error.message)")
        }
    }

    /// Each refusal whose message is about a file has the file in `file`, and the message
    /// without it.
    func testAnErrorAboutAFileNamesItInFile() throws {
        let output = folder.appendingPathComponent("o.mp4")
        let web = URL(string: "http://example.com/a.mov")!
        let long = folder.appendingPathComponent(String(repeating: "x", count: 5000) + ".mov")
        var trimmed = MergeJob(inputs: [Fixtures.url("a_")], output: output)
        trimmed.clips[0].start = -1
        let cases: [(MergeJob, FileLocation)] = [
            (MergeJob(inputs: [web], output: output), FileLocation(web)),
            (
                MergeJob(inputs: [Fixtures.url("a_")], output: folder.appendingPathComponent("o.avi")),
                FileLocation(path: folder.path + "/o.avi")
            ),
            (MergeJob(inputs: [Fixtures.url("a_")], output: web), FileLocation(web)),
            (MergeJob(inputs: [long], output: output), FileLocation(path: long.path)),
            (trimmed, FileLocation(path: Fixtures.path("a_"))),
        ]
        for (job, file) in cases {
            do {
                try job.validate()
                XCTFail("passed: \(job)")
            } catch {
                XCTAssertEqual(error.file, file, error.description)
                XCTAssertFalse(error.message.contains(file.path), error.message)
                XCTAssertEqual(error.description, "\(file): \(error.message)")
            }
        }
    }

    /// The JSON form names each value by its property; paths are text.
    func testAJobsJSONNamesItsProperties() throws {
        var job = MergeJob(
            inputs: [Fixtures.url("a_"), Fixtures.url("b_")], output: folder.appendingPathComponent("o.mp4"))
        job.clips[1].end = 2
        job.width = 640
        let data = try JSONEncoder().encode(job)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["output"] as? String, folder.appendingPathComponent("o.mp4").path)
        XCTAssertNil(object["outputLocation"])
        let clips = try XCTUnwrap(object["clips"] as? [[String: Any]])
        XCTAssertEqual(clips.map { $0["url"] as? String }, [Fixtures.path("a_"), Fixtures.path("b_")])
        XCTAssertNil(clips[0]["location"])
        XCTAssertEqual(clips[1]["end"] as? Double, 2)
        XCTAssertEqual(object["width"] as? Int, 640)
        XCTAssertEqual(try JSONDecoder().decode(MergeJob.self, from: data), job)
        // Written by hand, as a job file would be.
        let typed =
            #"{"clips": [{"url": "a.mov"}], "output": "o.mp4", "chapters": true, "stripsMetadata": false, "#
            + #""skipsInvalidClips": false, "isStrict": false, "overwrites": false, "isDryRun": false, "#
            + #""deletesSources": false}"#
        let decoded = try JSONDecoder().decode(MergeJob.self, from: Data(typed.utf8))
        XCTAssertEqual(decoded.clips.map(\.file.fileSystemPath), [Array("a.mov".utf8)])
        XCTAssertEqual(decoded.output.fileSystemPath, Array("o.mp4".utf8))
        XCTAssertTrue(decoded.chapters)
    }

    /// The report's value is its fields: no copy of the JSON report inside it.
    func testAReportCarriesNoJSONTwin() async throws {
        let report = try await MergeSession(
            MergeJob(inputs: [Fixtures.url("a_")], output: folder.appendingPathComponent("o.mp4"))
        )
        .inspect()
        let object = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
        XCTAssertEqual(
            Set(object.keys),
            [
                "status", "clips", "output", "deletedSources", "keptSources", "warnings", "wallSeconds",
                "problems",
            ])
        XCTAssertEqual(try JSONDecoder().decode(MergeReport.self, from: JSONEncoder().encode(report)), report)
    }
}
