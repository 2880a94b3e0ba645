import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeRemote

/// "No footage is lost" across a bucket (issue 47, point 8): random merges of objects (recordings
/// and objects no merge holds whole: a photo, a clip too short to keep, one with a second sound
/// track), used twice, trimmed, cut by --max-duration, into a file or an object, sometimes where a
/// foreign file or object already is, with --delete-sources; killed with SIGKILL at a random
/// moment or at a publishing step, then run again. After every run: every object placed is still
/// in the bucket with its bytes, or was a recording that a complete output (read back from the
/// bucket or the disk) holds all of; the output name holds a complete, index-first MP4 or the
/// foreign bytes untouched; after the second run no multipart upload is left in progress.
///
/// Seeded: VMERGE_INVARIANT_SEEDS=N scenarios (default 6), from VMERGE_INVARIANT_SEED=S.
final class ObjectFootageInvariantTests: S3TestCase {
    struct PoolFile {
        var fixture: String
        var isRecording: Bool
        var isPhoto = false
        var seconds: Double
    }

    struct Use {
        var key: String
        var trim: (start: Double, end: Double)?
    }

    static let bucket = "invariant"
    static let foreignBytes = Data("somebody else's\n".utf8)

    private var stats = (deleted: 0, kept: 0)

    func testEveryRecordingInABucketSurvivesKillsAndReruns() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["VMERGE_INVARIANT_SEEDS"].flatMap(Int.init) ?? 6
        let first = environment["VMERGE_INVARIANT_SEED"].flatMap(UInt64.init) ?? 1
        let pool = try makePool()
        try s3.createBucket(Self.bucket)
        for seed in first..<(first + UInt64(count)) { try runScenario(seed: seed, pool: pool) }
        print("object footage invariant: \(count) scenarios, \(stats.deleted) objects deleted, \(stats.kept) kept")
        if count >= 6 {
            XCTAssertGreaterThan(stats.deleted, 0, "no scenario deleted anything")
            XCTAssertGreaterThan(stats.kept, 0, "no scenario kept anything")
        }
    }

    private func makePool() throws -> [String: (PoolFile, Data)] {
        let folder = try makeScratchDirectory()
        try runFFmpeg(["-i", Fixtures.path("a_"), "-frames:v", "1", "photo.jpg"], in: folder)
        try runFFmpeg(
            ["-i", Fixtures.path("a_"), "-map", "0:v", "-map", "0:a", "-map", "0:a", "-c", "copy", "two.mov"],
            in: folder)
        let files: [String: (PoolFile, URL)] = [
            "rec_a.mov": (PoolFile(fixture: "a_", isRecording: true, seconds: 3.0), Fixtures.url("a_")),
            "rec_e.mov": (PoolFile(fixture: "e_", isRecording: true, seconds: 2.2), Fixtures.url("e_")),
            "rec_g.mov": (PoolFile(fixture: "g_", isRecording: true, seconds: 2.3), Fixtures.url("g_")),
            "tiny.mov": (PoolFile(fixture: "l_", isRecording: false, seconds: 0.1), Fixtures.url("l_")),
            "photo.jpg": (
                PoolFile(fixture: "", isRecording: false, isPhoto: true, seconds: 0.04),
                folder.appendingPathComponent("photo.jpg")
            ),
            "two.mov": (
                PoolFile(fixture: "", isRecording: false, seconds: 3.0), folder.appendingPathComponent("two.mov")
            ),
        ]
        return try files.mapValues { ($0.0, try Data(contentsOf: $0.1)) }
    }

    private var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey,
            "AWS_ENDPOINT_URL": s3.endpoint.absoluteString, "AWS_REGION": s3.region,
        ]
    }

    private func runScenario(seed: UInt64, pool: [String: (PoolFile, Data)]) throws {
        var random = SeededRandom(state: seed &* 0x2545_F491_4F6C_DD1D)
        let work = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let prefix = "s\(seed)/"
        var placed: [String: (PoolFile, Data)] = [:]
        var uses: [Use] = []
        let names = pool.keys.sorted()
        let recordings = names.filter { pool[$0]!.0.isRecording }
        for index in 0..<(1 + random.below(3)) {
            let key: String
            if !uses.isEmpty && random.chance(0.2) {
                key = random.pick(uses).key
            } else {
                let name = random.chance(0.6) ? random.pick(recordings) : random.pick(names)
                key = prefix + "\(index)_" + name
                placed[key] = pool[name]!
                try s3.put(bucket: Self.bucket, key: key, bytes: pool[name]!.1)
            }
            let file = placed[key]!.0
            let trim: (Double, Double)? =
                random.chance(0.25) && !file.isPhoto ? (random.pick([0.0, 0.5]), random.pick([1.2, 2.8])) : nil
            uses.append(Use(key: key, trim: trim.map { (start: $0.0, end: $0.1) }))
        }
        let toBucket = random.chance(0.5)
        let outputKey = prefix + "out.mp4"
        let output = toBucket ? "s3://\(Self.bucket)/\(outputKey)" : "out.mp4"
        let foreign = random.chance(0.2)
        if foreign {
            if toBucket {
                try s3.put(bucket: Self.bucket, key: outputKey, bytes: Self.foreignBytes)
            } else {
                try Self.foreignBytes.write(to: work.appendingPathComponent("out.mp4"))
            }
        }
        let maxDuration: Double? = random.chance(0.3) ? random.pick([3.5, 4.5]) : nil
        var arguments = uses.flatMap { use in
            ["s3://\(Self.bucket)/\(use.key)"] + (use.trim.map { ["--trim", "\($0.start),\($0.end)"] } ?? [])
        }
        arguments += ["-o", output, "--delete-sources", "--skip-invalid"]
        if let maxDuration { arguments += ["--max-duration", String(maxDuration)] }
        if random.chance(0.4) { arguments += ["--poster", "{name}.jpg"] }
        let context = "seed \(seed): vmerge \(arguments.joined(separator: " "))"
        let kill = random.pick(
            ["timer", "timer", "before-video", "after-video"] + (toBucket ? ["after-companions"] : []))
        let delay = 0.05 + random.unit() * 2.5
        let killed: RunResult
        if kill == "timer" {
            killed = try VMergeBinary.run(arguments, in: work, environment: environment) { process in
                let deadline = Date().addingTimeInterval(delay)
                while Date() < deadline && process.isRunning { Thread.sleep(forTimeInterval: 0.005) }
                if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
            }
        } else {
            var hooked = environment
            hooked["VMERGE_TEST_KILL_AT"] = kill
            killed = try VMergeBinary.run(arguments, in: work, environment: hooked)
        }
        let scenario = (placed: placed, uses: uses, output: output, outputKey: outputKey, foreign: foreign)
        try check(
            scenario, maxDuration, in: work,
            after: "\(context)\n  run 1 (\(kill), exit \(killed.status)): \(killed.stderr)")
        let again = try VMergeBinary.run(arguments, in: work, environment: environment)
        try check(scenario, maxDuration, in: work, after: "\(context)\n  run 2 (exit \(again.status)): \(again.stderr)")
        XCTAssertEqual(try uploadsInProgress(Self.bucket), 0, "a multipart upload was left in progress. \(context)")
        let left = try Set(s3.keys(bucket: Self.bucket))
        stats.deleted += placed.keys.filter { !left.contains($0) }.count
        stats.kept += placed.keys.filter { left.contains($0) }.count
    }

    private func check(
        _ scenario: (placed: [String: (PoolFile, Data)], uses: [Use], output: String, outputKey: String, foreign: Bool),
        _ maxDuration: Double?, in work: URL, after context: String
    ) throws {
        // The output as it is now, read back from wherever it went.
        let local = work.appendingPathComponent("check.mp4")
        try? FileManager.default.removeItem(at: local)
        let outputBytes: Data? =
            scenario.output.hasPrefix("s3://")
            ? try s3.object(bucket: Self.bucket, key: scenario.outputKey)
            : try? Data(contentsOf: work.appendingPathComponent("out.mp4"))
        var complete = false
        if let outputBytes {
            if scenario.foreign && outputBytes == Self.foreignBytes {
                complete = false
            } else {
                try outputBytes.write(to: local)
                XCTAssertTrue(FootageOracle.isIndexFirstMP4(local.path), "the output is not a whole MP4. \(context)")
                complete = FootageOracle.isCompleteOutput(
                    local.path,
                    seconds: FootageOracle.expectedSeconds(
                        modelled(scenario.uses, scenario.placed), maxDuration: maxDuration))
            }
        }
        for (key, (file, bytes)) in scenario.placed.sorted(by: { $0.key < $1.key }) {
            if try s3.object(bucket: Self.bucket, key: key) == bytes { continue }
            XCTAssertTrue(
                file.isRecording && complete
                    && FootageOracle.usesWhole(key, modelled(scenario.uses, scenario.placed), maxDuration: maxDuration),
                "\(key) is gone or changed, and no complete output holds all of it. \(context)")
        }
    }

    /// The uses as the shared oracle models them.
    private func modelled(_ uses: [Use], _ placed: [String: (PoolFile, Data)]) -> [FootageOracle.Use] {
        uses.map {
            FootageOracle.Use(
                file: $0.key, seconds: placed[$0.key]!.0.seconds, isPhoto: placed[$0.key]!.0.isPhoto, trim: $0.trim)
        }
    }

}
