import Foundation
import TestSupport
import XCTest

/// Issue 12, point 3: when and where it was recorded, and with what, carried from the first kept
/// clip (read in both forms phones write), or dropped with --strip-metadata.
final class RecordingMetadataTests: XCTestCase {
    private func tags(_ path: String, in dir: URL) throws -> [String: String] {
        let probe = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ffprobe", "-v", "error", "-show_entries", "format_tags", "-of", "json", path], in: dir)
        XCTAssertEqual(probe.status, 0, probe.stderr)
        let object = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any]
        return ((object?["format"] as? [String: Any])?["tags"] as? [String: String]) ?? [:]
    }

    /// A copy of fixture a tagged as an iPhone does (QuickTime metadata keys) or the classic way.
    private func tagged(_ name: String, mdta: Bool, in dir: URL) throws {
        var arguments = ["ffmpeg", "-v", "error", "-i", Fixtures.path("a_"), "-c", "copy", "-map_metadata", "-1"]
        if mdta {
            arguments += [
                "-movflags", "use_metadata_tags",
                "-metadata", "com.apple.quicktime.location.ISO6709=+48.8566+002.3522+035.000/",
                "-metadata", "com.apple.quicktime.make=Apple", "-metadata", "com.apple.quicktime.model=iPhone 15 Pro",
                "-metadata", "com.apple.quicktime.software=17.1.2",
                "-metadata", "com.apple.quicktime.creationdate=2024-05-01T12:00:00+0200",
            ]
        } else {
            arguments += ["-metadata", "location=+40.7128-074.0060/", "-metadata", "make=Google", "-metadata", "model=Pixel 8"]
        }
        arguments += ["-metadata", "creation_time=2024-05-01T10:00:00Z", "-y", name]
        let run = try runProgram(URL(fileURLWithPath: "/usr/bin/env"), arguments, in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    func testTheFirstKeptClipsDatePlaceAndDeviceAreCarried() throws {
        let dir = try makeScratchDirectory()
        try tagged("iphone.mov", mdta: true, in: dir)
        try tagged("pixel.mov", mdta: false, in: dir)
        let run = try VMergeBinary.run(["iphone.mov", "pixel.mov", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = try tags("out.mp4", in: dir)
        XCTAssertEqual(out["com.apple.quicktime.location.ISO6709"], "+48.8566+002.3522+035.000/")
        XCTAssertNotNil(out["location"], "also as a 3GPP location")
        XCTAssertEqual(out["com.apple.quicktime.make"], "Apple")
        XCTAssertEqual(out["com.apple.quicktime.model"], "iPhone 15 Pro")
        XCTAssertEqual(out["com.apple.quicktime.software"], "17.1.2")
        XCTAssertEqual(out["com.apple.quicktime.creationdate"], "2024-05-01T12:00:00+0200")
        XCTAssertEqual(out["creation_time"].map { String($0.prefix(19)) }, "2024-05-01T10:00:00")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json")))
        let carried = (((report as? [String: Any])?["output"] as? [String: Any])?["metadata"] as? [String: Any]) ?? [:]
        XCTAssertEqual(carried["location"] as? String, "+48.8566+002.3522+035.000/")
        XCTAssertEqual(carried["model"] as? String, "iPhone 15 Pro")
        XCTAssertEqual(carried["stripped"] as? Bool, false)
        let schema = Fixtures.directory.deletingLastPathComponent().appendingPathComponent("schema/report.schema.json")
        XCTAssertEqual(try JSONSchemaValidator(schemaFile: schema.path).validate(report), [])
        // The classic form (©xyz, make, model) when it comes first.
        let second = try VMergeBinary.run(["pixel.mov", "iphone.mov", "-o", "out2.mov"], in: dir)
        XCTAssertEqual(second.status, 0, second.stderr)
        let out2 = try tags("out2.mov", in: dir)
        XCTAssertEqual(out2["com.apple.quicktime.location.ISO6709"], "+40.7128-074.0060/")
        XCTAssertEqual(out2["com.apple.quicktime.make"], "Google")
        XCTAssertEqual(out2["com.apple.quicktime.model"], "Pixel 8")
    }

    func testStripMetadataDropsThemAll() throws {
        let dir = try makeScratchDirectory()
        try tagged("iphone.mov", mdta: true, in: dir)
        let run = try VMergeBinary.run(["iphone.mov", "-o", "out.mp4", "--strip-metadata", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = try tags("out.mp4", in: dir)
        let identifying = out.keys.filter { $0 != "major_brand" && $0 != "minor_version" && $0 != "compatible_brands" && $0 != "encoder" }
        XCTAssertEqual(identifying, [], "\(out)")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json")))
        let carried = (((report as? [String: Any])?["output"] as? [String: Any])?["metadata"] as? [String: Any]) ?? [:]
        XCTAssertEqual(carried["stripped"] as? Bool, true)
        XCTAssertTrue(carried["location"] is NSNull)
        XCTAssertTrue((((report as? [String: Any])?["options"] as? [String: Any])?["strip_metadata"] as? Bool) == true)
    }
}
