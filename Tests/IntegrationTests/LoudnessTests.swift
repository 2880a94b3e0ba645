import Foundation
import TestSupport
import XCTest

/// --loudness: clips recorded near and far come out at one integrated loudness, measured on the
/// output by ffmpeg's own ebur128 (EBU R128), their true peak under -1 dBTP, silence silent.
final class LoudnessTests: XCTestCase {
    /// Fixture a with its sound made `gain` dB louder or quieter (the video copied).
    private func levelled(_ gain: Int, as name: String, in dir: URL) throws -> String {
        let run = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ffmpeg", "-v", "error", "-i", Fixtures.path("a_"), "-map", "0", "-c:v", "copy", "-af", "volume=\(gain)dB",
             "-c:a", "aac", "-b:a", "128k", name], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        return name
    }

    /// Integrated loudness and true peak of the output's sound from `start` for `length` seconds.
    private func measure(_ path: URL, from start: Double, for length: Double) throws -> (lufs: Double, peak: Double) {
        let run = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ffmpeg", "-hide_banner", "-nostats", "-ss", "\(start)", "-t", "\(length)", "-i", path.path, "-vn", "-af",
             "ebur128=peak=true", "-f", "null", "-"], in: path.deletingLastPathComponent())
        let summary = run.stderr.components(separatedBy: "Summary:").last ?? ""
        func number(after label: String) -> Double {
            guard let range = summary.range(of: label) else { return .nan }
            return Double(summary[range.upperBound...].trimmingCharacters(in: .whitespaces).prefix { "-0123456789.".contains($0) }) ?? .nan
        }
        return (number(after: "I:"), number(after: "Peak:"))
    }

    func testClipsNearAndFarComeOutAtTheTarget() throws {
        let dir = try makeScratchDirectory()
        let quiet = try levelled(-18, as: "quiet.mov", in: dir), loud = try levelled(17, as: "loud.mov", in: dir)
        // c has no sound at all: silence, whatever the target.
        let run = try VMergeBinary.run(
            [quiet, Fixtures.path("a_"), loud, Fixtures.path("c_"), "--loudness", "-16", "-o", "out.mp4", "--report", "r.json"],
            in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = dir.appendingPathComponent("out.mp4")
        for (name, start) in [("quiet", 0.0), ("a", 3.0), ("loud", 6.0)] {
            // Inside each 3 s clip, clear of the boundaries.
            let (lufs, peak) = try measure(out, from: start + 0.1, for: 2.8)
            XCTAssertEqual(lufs, -16, accuracy: 1, "\(name): \(lufs) LUFS")
            XCTAssertLessThanOrEqual(peak, -1 + 0.5, "\(name): peak \(peak) dBFS")
        }
        let (samples, rate, _) = try MediaInspector(path: out.path).audioSamples()
        let silence = samples[(9 * rate + rate / 10)..<min(samples.count, 11 * rate)]
        XCTAssertLessThan(silence.map(abs).max() ?? 1, 0.001, "the clip without sound stays silent")
        // The report: what was measured and the gain given.
        let report = try jsonObject(at: dir.appendingPathComponent("r.json"))
        let measured = (report["inputs"] as? [[String: Any]] ?? []).map { $0["loudness"] as? [String: Any] }
        XCTAssertEqual(measured.count, 4)
        XCTAssertEqual(measured[0]?["integrated"] as? Double ?? 0, -39.8, accuracy: 1.5)
        XCTAssertEqual(measured[0]?["gain"] as? Double ?? 0, 23.8, accuracy: 1.5)
        XCTAssertLessThan(measured[2]?["gain"] as? Double ?? 0, -10, "the loud clip is turned down")
        XCTAssertNil(measured[3], "no sound, nothing measured")
    }

    /// A trimmed clip is measured over its trimmed part only: t1 is silent from 0.6 s to 1.5 s
    /// and sounds a tone from 1.5 s to 1.6 s.
    func testATrimmedClipIsMeasuredOverItsPart() throws {
        let dir = try makeScratchDirectory()
        let t1 = Fixtures.path("t1_")
        let run = try VMergeBinary.run(
            [t1, "--trim", "0.65,1.45", t1, "--trim", "1.3,2.2", "--min-duration", "0", "--loudness", "-16",
             "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let measured = (try jsonObject(at: dir.appendingPathComponent("r.json"))["inputs"] as? [[String: Any]] ?? [])
            .map { $0["loudness"] as? [String: Any] }
        XCTAssertEqual(measured.count, 2)
        // ebur128's floor for silence (nothing above its gate) is -70 LUFS.
        XCTAssertLessThanOrEqual(measured[0]?["integrated"] as? Double ?? 0, -70, "silence between the tones: \(String(describing: measured[0]))")
        XCTAssertEqual(measured[0]?["gain"] as? Double, 0)
        XCTAssertGreaterThan(measured[1]?["integrated"] as? Double ?? -100, -40, "the tone at 1.5 s is in the second part")
    }

    func testTheTruePeakHoldsTheGainBack() throws {
        let dir = try makeScratchDirectory()
        let quiet = try levelled(-18, as: "quiet.mov", in: dir)
        // -2 LUFS would need +37.8 dB; the peak (-38.6 dBTP) allows 37.6.
        let run = try VMergeBinary.run([quiet, "--loudness", "-2", "-o", "out.mp4", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try jsonObject(at: dir.appendingPathComponent("r.json"))
        let measured = try XCTUnwrap((report["inputs"] as? [[String: Any]])?.first?["loudness"] as? [String: Any])
        let truePeak = measured["true_peak"] as? Double ?? 0, gain = measured["gain"] as? Double ?? 0
        XCTAssertEqual(gain, -1 - truePeak, accuracy: 0.02, "limited by the peak, not the target")
        let (_, peak) = try measure(dir.appendingPathComponent("out.mp4"), from: 0.1, for: 2.8)
        XCTAssertLessThanOrEqual(peak, -1 + 0.5, "peak \(peak)")
    }
}
