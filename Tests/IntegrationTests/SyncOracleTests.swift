import Foundation
import TestSupport
import XCTest

/// Sound stays with its pictures at every clip boundary, however many clips: each s* fixture
/// shows a white flash and starts a 1 kHz tone at the same instant (make_sync_fixtures.sh), at
/// 24, 25, 29.97, 30 and 60 fps, sound 0.3 s short to 0.1 s long, one clip silent. In the output
/// every tone must start within 1 ms of its flash, every flash on the frame where its clip's
/// place puts it, and the whole within one frame of the clips' summed lengths.
final class SyncOracleTests: XCTestCase {
    /// The fixtures: exact video length (seconds, as a fraction), and when the flash starts.
    private struct SyncClip {
        var prefix: String
        var frames: Int, rateNum: Int, rateDen: Int
        var flashSeconds: Double
        var hasAudio = true
        var seconds: Double { Double(frames * rateDen) / Double(rateNum) }
    }

    private let clips = [
        SyncClip(prefix: "s1_", frames: 37, rateNum: 24, rateDen: 1, flashSeconds: 0.5),
        SyncClip(prefix: "s2_", frames: 38, rateNum: 25, rateDen: 1, flashSeconds: 0.4),
        SyncClip(prefix: "s3_", frames: 46, rateNum: 30000, rateDen: 1001, flashSeconds: 10 * 1001 / 30000.0),
        SyncClip(prefix: "s4_", frames: 47, rateNum: 30, rateDen: 1, flashSeconds: 0.5),
        SyncClip(prefix: "s5_", frames: 95, rateNum: 60, rateDen: 1, flashSeconds: 0.5),
        SyncClip(prefix: "s6_", frames: 44, rateNum: 30, rateDen: 1, flashSeconds: 0.3, hasAudio: false),
    ]

    /// Twelve clips in an order that puts each rate after several others.
    private var twelve: [SyncClip] { clips + [2, 0, 4, 1, 5, 3].map { clips[$0] } }

    /// In every file of the job: its own picture (4x3-240) and a rendition of every other preset,
    /// each fit among them (x264's fastest preset: sync is the timeline's, not the encoder's).
    func testEveryToneStartsWithItsFlashOverTwelveClips() throws {
        let worst = try checkSync(
            twelve,
            renditions: [
                "4x3-480:preset=ultrafast=large.mp4", "16x9-720:fit=pad:preset=ultrafast=wide.mp4",
                "9x16-1080:preset=ultrafast=tall.mp4", "1x1-720:fit=blur:preset=ultrafast=square.mp4",
            ])
        print("sync oracle, 12 clips: worst tone-to-flash offset \(String(format: "%.2f", worst * 1000)) ms")
    }

    func testSyncDoesNotGrowWithTheClipCount() throws {
        let worst = try checkSync(twelve + twelve + twelve)
        print("sync oracle, 36 clips: worst tone-to-flash offset \(String(format: "%.2f", worst * 1000)) ms")
    }

    /// Merges `sequence` (with `renditions`, each `SPEC=FILE`), checks every flash and tone in
    /// every file, returns the worst offset in seconds.
    private func checkSync(
        _ sequence: [SyncClip], renditions: [String] = [], file: StaticString = #filePath, line: UInt = #line
    ) throws -> Double {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run(
            sequence.map { Fixtures.path($0.prefix) } + ["--min-duration", "1", "-o", "out.mp4"]
                + renditions.flatMap { ["--rendition", $0] }, in: dir)
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        var worst = 0.0
        for name in ["out.mp4"] + renditions.map({ String($0.split(separator: "=").last ?? "") }) {
            let output = MediaInspector(path: dir.appendingPathComponent(name).path)
            worst = max(worst, try checkSync(sequence, in: output, file: file, line: line))
        }
        return worst
    }

    /// Checks every flash and tone of `sequence` in `output`, returns the worst offset in seconds.
    private func checkSync(
        _ sequence: [SyncClip], in output: MediaInspector, file: StaticString, line: UInt
    ) throws -> Double {
        let fps = 30.0

        // Where each clip's flash must be: its clip starts on the frame nearest the exact sum of
        // the lengths before it; the flash starts on a frame of its own that lies on the grid.
        var expectedFlashes: [Int] = []
        var exactStart = 0.0
        for clip in sequence {
            let startFrame = Int((exactStart * fps).rounded())
            expectedFlashes.append(startFrame + Int((clip.flashSeconds * fps).rounded()))
            exactStart += clip.seconds
        }
        let lumas = try output.meanLumas()
        let flashes = lumas.indices.filter { lumas[$0] > 128 && ($0 == 0 || lumas[$0 - 1] <= 128) }
        XCTAssertEqual(flashes, expectedFlashes, "each flash on its frame", file: file, line: line)
        XCTAssertEqual(
            Double(lumas.count), exactStart * fps, accuracy: 0.5 + 1e-9,
            "the output lasts the clips' summed length to the nearest frame", file: file, line: line)

        let (samples, rate, audioStart) = try output.audioSamples()
        XCTAssertEqual(audioStart, 0, accuracy: 1e-6, file: file, line: line)
        XCTAssertEqual(
            Double(samples.count), Double(lumas.count) / fps * Double(rate), accuracy: 1024,
            "sound as long as the pictures", file: file, line: line)
        let tones = toneOnsets(in: samples, rate: rate)
        let withSound = zip(sequence, expectedFlashes).filter { $0.0.hasAudio }.map(\.1)
        XCTAssertEqual(tones.count, withSound.count, "one tone per clip with sound", file: file, line: line)
        var worst = 0.0
        for (tone, flash) in zip(tones, withSound) {
            let offset = tone - Double(flash) / fps
            worst = max(worst, abs(offset))
            XCTAssertLessThanOrEqual(
                abs(offset), 0.001, "tone at \(tone) s, flash at frame \(flash)", file: file, line: line)
        }
        return worst
    }
}
