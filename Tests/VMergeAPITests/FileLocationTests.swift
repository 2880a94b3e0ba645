import Foundation
import VMerge
import XCTest

/// One type names every file the API names (`FileLocation`): it keeps a path's bytes, says itself
/// as vmerge prints names, holds a URL that is no file's as another case, and reads the JSON the
/// earlier version wrote (URLs, paths as text, byte arrays).
final class FileLocationTests: XCTestCase {
    /// A report as the earlier version encoded it: URLs as "file://" text, a clip's path in the
    /// lossless form (U+10FFFF is the byte 0xFF), the paths' bytes in fields of their own.
    static let earlierReport = """
        {"status": "failed", "error": "/v/b.mov: bad", "wallSeconds": 1.5,
         "clips": [{"path": "/v/a\u{10FFFF}.mov", "status": "kept"}, {"path": "/v/b.mov", "status": "invalid"}],
         "output": {"url": "file:///v/o.mp4", "fileSystemPath": [47, 118, 47, 111, 46, 109, 112, 52],
                    "poster": "file:///v/o.jpg", "posterFileSystemPath": [47, 118, 47, 111, 46, 106, 112, 103],
                    "isWritten": true, "estimatedBytes": 10, "duration": 2, "width": 320, "height": 240,
                    "frameRate": 30},
         "deletedSources": ["file:///v/c%20d.mov"], "deletedSourceFileSystemPaths": [[47, 118, 47, 99]],
         "keptSources": [{"file": "file:///v/k.mov", "reason": "kept: bytes 1-2 are in no output"}],
         "keptOutput": {"url": "file:///v/o.mp4", "fileSystemPath": [47], "bytes": 8, "poster": "file:///v/o.jpg"},
         "warnings": [{"severity": "note", "file": "/v/a\u{10FFFF}.mov", "message": "deleted"}],
         "problems": [{"code": "invalid-input", "file": "/v/b.mov", "message": "bad"}]}
        """

    /// A job as the earlier version encoded it: a clip's URL as text, as bytes and as a URL that
    /// is no file's; the report's file as a URL.
    static let earlierJob = """
        {"clips": [{"url": "a.mov"}, {"url": {"pathBytes": [98, 255]}, "end": 2},
                   {"url": {"url": "https://example.com/c.mov?X-Amz-Signature=secret"}}],
         "output": "o.mp4", "reportURL": "file:///v/r.json", "chapters": true, "stripsMetadata": false,
         "skipsInvalidClips": false, "isStrict": false, "overwrites": false, "isDryRun": false,
         "deletesSources": false}
        """

    static let earlierProgress = """
        {"phase": "encoding", "clip": 1, "clipCount": 2, "file": "/v/a.mov", "fractionCompleted": 0.5,
         "outputSeconds": 1, "totalSeconds": 2, "elapsedSeconds": 1}
        """

    private func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    func testTheEarlierVersionsJSONStillReads() throws {
        let report = try decode(MergeReport.self, Self.earlierReport)
        XCTAssertEqual(
            report.clips.map(\.file.fileSystemPath),
            [Array("/v/a".utf8) + [0xFF] + Array(".mov".utf8), Array("/v/b.mov".utf8)])
        XCTAssertEqual(report.output?.file, "/v/o.mp4")
        XCTAssertEqual(report.output?.poster, "/v/o.jpg")
        XCTAssertEqual(report.deletedSources, ["/v/c d.mov"])
        XCTAssertEqual(report.keptSources.map(\.file), ["/v/k.mov"])
        XCTAssertEqual(report.keptOutput?.file, "/v/o.mp4")
        XCTAssertEqual(report.warnings.first?.file, report.clips.first?.file)
        XCTAssertEqual(report.problems.first?.file, "/v/b.mov")
        XCTAssertEqual(
            try decode(MergeReport.self, String(decoding: JSONEncoder().encode(report), as: UTF8.self)), report)

        let job = try decode(MergeJob.self, Self.earlierJob)
        XCTAssertEqual(job.clips.map(\.file.fileSystemPath), [Array("a.mov".utf8), [98, 255], nil])
        XCTAssertEqual(job.clips[2].file.url, URL(string: "https://example.com/c.mov?X-Amz-Signature=secret"))
        XCTAssertEqual(job.output, "o.mp4")
        XCTAssertEqual(job.reportFile, "/v/r.json")
        XCTAssertEqual(try decode(MergeJob.self, String(decoding: JSONEncoder().encode(job), as: UTF8.self)), job)
        XCTAssertEqual(try decode(MergeSession.Progress.self, Self.earlierProgress).file, "/v/a.mov")
    }

    /// Every property that names a file, in every public value (a job, a report and each of its
    /// parts, an error, a progress step), is a FileLocation: none is a String, a URL or bytes.
    /// `MergeJob.posterName` is a file name in the output's folder ("{name}.jpg"), not a place.
    func testEveryFileTheAPINamesIsAFileLocation() throws {
        var error = try XCTUnwrap(try decode(MergeReport.self, Self.earlierReport).problems.first)
        error.report = try decode(MergeReport.self, Self.earlierReport)
        let values: [Any] = [
            try decode(MergeJob.self, Self.earlierJob), error,
            try decode(MergeSession.Progress.self, Self.earlierProgress),
        ]
        var found: Set<String> = []
        for value in values { check(Mirror(reflecting: value), path: "\(type(of: value))", found: &found) }
        XCTAssertEqual(
            found,
            [
                "MergeJob.clips.file", "MergeJob.output", "MergeJob.reportFile", "MergeError.file",
                "MergeError.report.clips.file", "MergeError.report.output.file", "MergeError.report.output.poster",
                "MergeError.report.deletedSources", "MergeError.report.keptSources.file",
                "MergeError.report.keptOutput.file", "MergeError.report.keptOutput.poster",
                "MergeError.report.warnings.file", "MergeError.report.problems.file", "Progress.file",
            ])
    }

    private static let forbidden: [Any.Type] = [
        String.self, String?.self, URL.self, URL?.self, [UInt8].self, [UInt8]?.self, [[UInt8]].self, [URL].self,
        [String].self,
    ]
    private static let fileWords = ["file", "path", "url", "poster", "source", "output", "report"]

    /// Walks `mirror`: each FileLocation found is noted under its path; a property whose name says
    /// it names a file and whose type is another's fails.
    private func check(_ mirror: Mirror, path: String, found: inout Set<String>) {
        for child in mirror.children {
            // An array's elements and an optional's value stand under their property's name.
            let label = child.label.map { $0 == "some" ? path : path + "." + $0 } ?? path
            let type = type(of: child.value)
            if type == FileLocation.self || type == FileLocation?.self || type == [FileLocation].self {
                if !(type == FileLocation?.self && Mirror(reflecting: child.value).children.isEmpty) {
                    found.insert(label)
                }
                continue
            }
            let name = (child.label ?? "").lowercased()
            if Self.fileWords.contains(where: name.contains), child.label != "posterName" {
                XCTAssertFalse(Self.forbidden.contains { $0 == type }, "\(label) is a \(type)")
            }
            check(Mirror(reflecting: child.value), path: label, found: &found)
        }
    }

    func testALocationKeepsItsBytesAndSaysItselfAsVmergeDoes() throws {
        let bytes = Array("/v/a".utf8) + [0xFF] + Array("\n.mov".utf8)
        let location = FileLocation(fileSystemPath: bytes)
        XCTAssertEqual(location.description, "/v/a\\xFF\\n.mov")
        XCTAssertEqual(FileLocation(path: location.path), location)
        XCTAssertEqual(FileLocation(URL(fileURLWithPath: "/v/b.mov")), FileLocation(path: "/v/b.mov"))
        XCTAssertEqual(FileLocation(path: "/v/b.mov").url, URL(fileURLWithPath: "/v/b.mov"))
        // A relative path that reads like a URL is still a path, through JSON too.
        for location in [location, "s3://bucket/key", "o.mp4"] as [FileLocation] {
            let decoded = try JSONDecoder().decode([FileLocation].self, from: JSONEncoder().encode([location]))
            XCTAssertEqual(decoded, [location])
            XCTAssertNotNil(decoded[0].fileSystemPath)
        }
        // A URL that is no file's is a location of its own kind; shown without its query.
        let remote = FileLocation(URL(string: "https://user:pw@example.com/c.mov?X-Amz-Signature=secret")!)
        XCTAssertNil(remote.fileSystemPath)
        XCTAssertEqual(remote.description, "https://example.com/c.mov")
        XCTAssertEqual(try JSONDecoder().decode([FileLocation].self, from: JSONEncoder().encode([remote])), [remote])
    }
}
