import Foundation
import TestSupport
import XCTest

/// The report as literal JSON: CI pipelines read these fields, so a renamed field, a changed status
/// word or a number that moves is a change for every user of the report. Of one run (a kept clip,
/// one too short, one trimmed; chapters on), all but what varies by machine or FFmpeg build (times,
/// versions, the output's byte count) is compared with the literal below. Change it only on purpose.
final class ReportGoldenTests: XCTestCase {
    func testAReportHoldsExactlyTheseFields() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            ["-q", "--min-duration", "1.6", Fixtures.path("a_"), Fixtures.path("i_"), Fixtures.path("e_"),
             "--trim", "0.4,", "--chapters", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let data = try Data(contentsOf: dir.appendingPathComponent("r.json"))
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(
            Set(report.keys),
            ["schema_version", "status", "exit_code", "error", "started_at", "versions", "options", "inputs", "output",
             "outputs", "deleted_sources", "kept_sources", "kept_output", "problems", "timings", "notifications"])
        XCTAssertEqual(report["schema_version"] as? Int, 1)
        var inputs = try XCTUnwrap(report["inputs"] as? [[String: Any]])
        for i in inputs.indices {
            inputs[i]["path"] = (inputs[i]["path"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent }
        }
        var output = try XCTUnwrap(report["output"] as? [String: Any])
        let bytes = output.removeValue(forKey: "bytes") as? Int
        XCTAssertGreaterThan(bytes ?? 0, 10_000)
        var outputs = try XCTUnwrap(report["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.count, 1)
        XCTAssertEqual(outputs[0].removeValue(forKey: "bytes") as? Int, bytes)
        let compared: [String: Any] = [
            "status": report["status"]!, "exit_code": report["exit_code"]!, "error": report["error"]!,
            "options": report["options"]!, "inputs": inputs, "output": output, "outputs": outputs, "deleted_sources": report["deleted_sources"]!,
            "kept_sources": report["kept_sources"]!,
            "kept_output": report["kept_output"]!, "problems": report["problems"]!,
        ]
        let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(Self.golden.utf8)) as? NSDictionary)
        let got = compared as NSDictionary
        if got != expected {
            let pretty = try JSONSerialization.data(withJSONObject: compared, options: [.prettyPrinted, .sortedKeys])
            XCTFail("the report differs from the golden one; it is now:\n" + String(decoding: pretty, as: UTF8.self))
        }
    }

    private static let golden = #"""
{
  "deleted_sources": [],
  "kept_sources": [],
  "error": null,
  "exit_code": 0,
  "inputs": [
    {
      "audio": {
        "channels": 2,
        "codec": "aac",
        "sample_rate": 44100
      },
      "container": "mov,mp4,m4a,3gp,3g2,mj2",
      "crop": {
        "height": 480,
        "width": 640,
        "x": 0,
        "y": 0
      },
      "decode": {
        "skipped": 0,
        "video_packets": 90
      },
      "duration": 3,
      "end": 3,
      "left_out": [],
      "loudness": null,
      "path": "a_none_640x480_30fps_aac44k_stereo.mov",
      "placement": {
        "cut_at": null,
        "cut_by": null,
        "duration": 3,
        "start": 0
      },
      "reason": null,
      "start": 0,
      "status": "kept",
      "title": null,
      "video": {
        "codec": "h264",
        "colour": {
          "bit_depth": 8,
          "conversion": "matrix smpte170m -> bt709",
          "dolby_vision": null,
          "dynamic_range": "sdr",
          "matrix": "unknown",
          "primaries": "unknown",
          "range": "unknown",
          "tonemap": null,
          "transfer": "unknown"
        },
        "frame_rate": 30,
        "height": 480,
        "mirrored": false,
        "orientation": "identity",
        "pixel_format": "yuv420p",
        "rotation": 0,
        "width": 640
      }
    },
    {
      "audio": {
        "channels": 2,
        "codec": "aac",
        "sample_rate": 44100
      },
      "container": "mov,mp4,m4a,3gp,3g2,mj2",
      "crop": null,
      "decode": null,
      "duration": 1.5,
      "end": 1.5,
      "left_out": [],
      "loudness": null,
      "path": "i_short_1.5s_640x480_30fps.mov",
      "placement": null,
      "reason": "dropped: video lasts 1.5 s, under the 1.6 s minimum",
      "start": 0,
      "status": "dropped-short",
      "title": null,
      "video": {
        "codec": "h264",
        "colour": {
          "bit_depth": 8,
          "conversion": null,
          "dolby_vision": null,
          "dynamic_range": "sdr",
          "matrix": "unknown",
          "primaries": "unknown",
          "range": "unknown",
          "tonemap": null,
          "transfer": "unknown"
        },
        "frame_rate": 30,
        "height": 480,
        "mirrored": false,
        "orientation": "identity",
        "pixel_format": "yuv420p",
        "rotation": 0,
        "width": 640
      }
    },
    {
      "audio": {
        "channels": 2,
        "codec": "aac",
        "sample_rate": 48000
      },
      "container": "mov,mp4,m4a,3gp,3g2,mj2",
      "crop": {
        "height": 480,
        "width": 640,
        "x": 0,
        "y": 0
      },
      "decode": {
        "skipped": 1,
        "video_packets": 66
      },
      "duration": 2.2,
      "end": 2.2,
      "left_out": [],
      "loudness": null,
      "path": "e_hflip_640x480_30fps_aac48k_stereo.mov",
      "placement": {
        "cut_at": null,
        "cut_by": null,
        "duration": 1.8,
        "start": 3
      },
      "reason": null,
      "start": 0.4,
      "status": "kept",
      "title": null,
      "video": {
        "codec": "h264",
        "colour": {
          "bit_depth": 8,
          "conversion": "matrix smpte170m -> bt709",
          "dolby_vision": null,
          "dynamic_range": "sdr",
          "matrix": "unknown",
          "primaries": "unknown",
          "range": "unknown",
          "tonemap": null,
          "transfer": "unknown"
        },
        "frame_rate": 30,
        "height": 480,
        "mirrored": true,
        "orientation": "mirrorHorizontal",
        "pixel_format": "yuv420p",
        "rotation": 0,
        "width": 640
      }
    }
  ],
  "kept_output": null,
  "outputs": [
    {
      "crf": 23,
      "duration": 4.8,
      "estimated_bytes": 223488,
      "faststart": true,
      "fit": "crop",
      "height": 240,
      "made_earlier": false,
      "path": "out.mp4",
      "preset": "medium",
      "rendition": null,
      "truncated_by": null,
      "video_frames": 144,
      "width": 320,
      "written": true
    }
  ],
  "problems": [],
  "options": {
    "aspect": "4:3",
    "channels": 2,
    "chapters": true,
    "crf": 23,
    "delete_sources": false,
    "dry_run": false,
    "fit": "crop",
    "frame_rate": "30",
    "height": 240,
    "inputs_from": null,
    "loudness": null,
    "max_duration": null,
    "max_pixels": 67108864,
    "max_size": null,
    "min_duration": 1.6,
    "min_free": null,
    "output": "out.mp4",
    "overwrite": false,
    "poster": null,
    "poster_at": null,
    "preset": "medium",
    "quality": "medium",
    "sample_rate": 44100,
    "skip_deblocking": "auto",
    "skip_invalid": false,
    "sort": "none",
    "strict": false,
    "strip_metadata": false,
    "tonemap": "mobius",
    "width": 320
  },
  "output": {
    "audio_codec": "aac",
    "audio_samples": 211680,
    "channels": 2,
    "duration": 4.8,
    "estimated_bytes": 223488,
    "existing": null,
    "faststart": true,
    "frame_rate": 30,
    "height": 240,
    "metadata": {
      "creation_date": null,
      "creation_time": "2024-05-01T12:00:01.000000Z",
      "location": null,
      "make": null,
      "model": null,
      "software": null,
      "stripped": false
    },
    "path": "out.mp4",
    "poster": null,
    "sample_rate": 44100,
    "truncated": false,
    "truncated_by": null,
    "video_codec": "h264",
    "video_frames": 144,
    "width": 320,
    "written": true
  },
  "status": "ok"
}
"""#
}
