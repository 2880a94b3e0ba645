import Foundation
import TestSupport
import XCTest

/// Issue 12, point 4: the output name's extension decides the container, and any other is refused
/// before any work.
final class OutputContainerTests: XCTestCase {
    private func brand(_ url: URL) throws -> String {
        let head = try FileHandle(forReadingFrom: url).read(upToCount: 12) ?? Data()
        return String(decoding: head.dropFirst(8), as: UTF8.self)
    }

    func testMovWritesQuickTimeWithTheIndexFirst() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("a_"), "-o", "out.mov", "--report", "r.json"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = dir.appendingPathComponent("out.mov")
        XCTAssertEqual(try brand(out), "qt  ")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("r.json")))
        XCTAssertEqual(((report as? [String: Any])?["output"] as? [String: Any])?["faststart"] as? Bool, true)
        XCTAssertEqual(try MediaInspector(path: out.path).videoFrames().times.count, 90)
    }

    func testM4VAndAnyCaseAreMP4() throws {
        let dir = try makeScratchDirectory()
        let run = try VMergeBinary.run([Fixtures.path("l_tiny"), "--min-duration", "0", "-o", "OUT.M4V"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertNotEqual(try brand(dir.appendingPathComponent("OUT.M4V")), "qt  ")
    }

    func testOtherExtensionsAreAUsageErrorBeforeAnyWork() throws {
        let dir = try makeScratchDirectory()
        for name in ["out.mkv", "out", "out.mp4.part"] {
            let run = try VMergeBinary.run([Fixtures.path("a_"), "-o", name], in: dir)
            XCTAssertEqual(run.status, 2, run.stderr)
            XCTAssertEqual(
                run.stderrLines.first,
                "vmerge: '-o \(name)': vmerge writes MP4 or QuickTime files; the name must end in '.mp4', '.m4v' or '.mov'")
            XCTAssertEqual(listing(dir), [])
        }
        try #"{"inputs": ["\#(Fixtures.path("a_"))"], "output": "x.mkv"}"#.write(
            to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let batch = try VMergeBinary.run(["batch", "jobs.jsonl"], in: dir)
        XCTAssertEqual(batch.status, 1, batch.stderr)
        XCTAssertTrue(batch.stderr.contains("line 1: output x.mkv: vmerge writes MP4 or QuickTime files; the name must end in '.mp4', '.m4v' or '.mov'"), batch.stderr)
    }

    func testAWatchJobMayAskForQuickTime() throws {
        let dir = try makeScratchDirectory()
        let job = dir.appendingPathComponent("in/trip")
        try FileManager.default.createDirectory(at: job, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.path("l_tiny"), toPath: job.appendingPathComponent("a.mov").path)
        try #"{"output": "trip.mov"}"#.write(to: job.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(["watch", "in", "--out", "out", "--once", "--min-duration", "0"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(listing(dir.appendingPathComponent("out")), ["trip.mov", "trip.mov.json"])
        XCTAssertEqual(try brand(dir.appendingPathComponent("out/trip.mov")), "qt  ")
    }
}

/// Issue 12, point 5: the bytes depend on the inputs, options and library versions only, not on
/// how many cores the run may use.
final class SameBytesEverywhereTests: XCTestCase {
    func testOneCoreAndAllCoresWriteTheSameBytes() throws {
        let taskset = URL(fileURLWithPath: "/usr/bin/taskset")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: taskset.path), "no taskset here")
        try XCTSkipIf(ProcessInfo.processInfo.activeProcessorCount < 2, "one core: nothing to compare")
        let dir = try makeScratchDirectory()
        let inputs = ["a_", "b_", "d_"].map(Fixtures.path)
        let all = try VMergeBinary.run(inputs + ["-o", "all.mp4"], in: dir)
        XCTAssertEqual(all.status, 0, all.stderr)
        let one = try runProgram(taskset, ["-c", "0", VMergeBinary.url.path] + inputs + ["-o", "one.mp4"], in: dir)
        XCTAssertEqual(one.status, 0, one.stderr)
        let a = try Data(contentsOf: dir.appendingPathComponent("all.mp4"))
        let b = try Data(contentsOf: dir.appendingPathComponent("one.mp4"))
        XCTAssertGreaterThan(a.count, 10_000)
        XCTAssertTrue(a == b, "pinned to one core the output differs (\(a.count) vs \(b.count) bytes)")
    }

    /// Issue 36, point 4: pinned to one core, to two, and with the decoders run at 16 threads as on
    /// a 16-core machine (and at 1), the bytes are the same; over inputs that exercise frame
    /// threads (1080p portrait, 60 fps).
    func testCoresAndDecoderThreadsDoNotChangeTheBytes() throws {
        let taskset = URL(fileURLWithPath: "/usr/bin/taskset")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: taskset.path), "no taskset here")
        try XCTSkipIf(ProcessInfo.processInfo.activeProcessorCount < 2, "one core: nothing to compare")
        let dir = try makeScratchDirectory()
        let inputs = ["b_", "d_", "h_"].map(Fixtures.path)
        let plain = try VMergeBinary.run(inputs + ["-o", "plain.mp4"], in: dir)
        XCTAssertEqual(plain.status, 0, plain.stderr)
        let reference = try Data(contentsOf: dir.appendingPathComponent("plain.mp4"))
        XCTAssertGreaterThan(reference.count, 10_000)
        let runs: [(name: String, cores: String?, threads: String?)] = [
            ("one-core", "0", nil), ("two-cores", "0,1", nil), ("sixteen-threads", nil, "16"),
            ("sixteen-threads-one-core", "0", "16"), ("one-thread", nil, "1"),
        ]
        for run in runs {
            let environment = run.threads.map { ["VMERGE_TEST_DECODER_THREADS": $0] } ?? [:]
            let arguments = inputs + ["-o", run.name + ".mp4"]
            let result =
                try run.cores.map {
                    try runProgram(taskset, ["-c", $0, VMergeBinary.url.path] + arguments, in: dir, environment: environment)
                } ?? VMergeBinary.run(arguments, in: dir, environment: environment)
            XCTAssertEqual(result.status, 0, "\(run.name): \(result.stderr)")
            let bytes = try Data(contentsOf: dir.appendingPathComponent(run.name + ".mp4"))
            XCTAssertTrue(bytes == reference, "\(run.name): the output differs (\(bytes.count) vs \(reference.count) bytes)")
        }
    }
}

/// The bytes do not depend on what the process's memory held before: x264's AVX-512 code read
/// memory it never wrote, so every later job of a batch (or worker) came out differently from a
/// fresh run. glibc's MALLOC_PERTURB_ (macOS: MallocPreScribble) fills every allocation with a
/// byte of its own, which makes any such read show here on the first run, not by chance.
final class SameBytesWhateverTheHeapHeldTests: XCTestCase {
    private func merge(_ inputs: [String], to name: String, in dir: URL, filling byte: Int?) throws -> Data {
        var environment: [String: String] = [:]
        if let byte { environment = ["MALLOC_PERTURB_": String(byte), "MallocPreScribble": "1", "MallocScribble": "1"] }
        let run = try VMergeBinary.run(inputs + ["--min-duration", "0", "-o", name], in: dir, environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        return try Data(contentsOf: dir.appendingPathComponent(name))
    }

    func testMemoryFilledWithOtherBytesWritesTheSameFile() throws {
        let dir = try makeScratchDirectory()
        let inputs = ["u3_", "b_", "h_"].map(Fixtures.path)
        let plain = try merge(inputs, to: "plain.mp4", in: dir, filling: nil)
        XCTAssertGreaterThan(plain.count, 10_000)
        for byte in [7, 165] {
            let filled = try merge(inputs, to: "filled-\(byte).mp4", in: dir, filling: byte)
            XCTAssertTrue(filled == plain, "with allocations filled with \(byte) the output differs (\(filled.count) vs \(plain.count) bytes)")
        }
    }

    /// The symptom as it was found: one process, the same two jobs four times over, one at a time.
    func testEveryJobOfABatchWritesTheSameBytesAsTheFirst() throws {
        let dir = try makeScratchDirectory()
        let (u3, u4) = (Fixtures.path("u3_"), Fixtures.path("u4_"))
        var lines: [String] = []
        for round in 1...4 {
            lines.append(#"{"inputs": ["\#(u3)"], "output": "u3-\#(round).mp4"}"#)
            lines.append(#"{"inputs": ["\#(u4)"], "output": "u4-\#(round).mp4"}"#)
        }
        try (lines.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("jobs.jsonl"), atomically: true, encoding: .utf8)
        let run = try VMergeBinary.run(["batch", "jobs.jsonl", "-j", "1", "-q", "--min-duration", "0"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        for clip in ["u3", "u4"] {
            let first = try Data(contentsOf: dir.appendingPathComponent("\(clip)-1.mp4"))
            XCTAssertGreaterThan(first.count, 2_000)
            for round in 2...4 {
                let later = try Data(contentsOf: dir.appendingPathComponent("\(clip)-\(round).mp4"))
                XCTAssertTrue(later == first, "job \(round) of \(clip) differs from the first (\(later.count) vs \(first.count) bytes)")
            }
        }
    }
}
