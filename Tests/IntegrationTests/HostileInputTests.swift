import Foundation
import TestSupport
import XCTest

/// Inputs and environments that try to make vmerge crash, hang, or lose data (issue 7: limits and
/// environment faults; fuzzing and sanitizers are still to come).
final class HostileInputTests: XCTestCase {
    func testAFIFOIsRefusedWithoutBeingOpened() throws {
        let dir = try makeScratchDirectory()
        XCTAssertEqual(mkfifo(dir.appendingPathComponent("pipe.mov").path, 0o644), 0)
        // Opening a FIFO for reading would block for ever: the refusal must come from stat alone.
        let run = try VMergeBinary.run(["pipe.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrLines, ["vmerge: pipe.mov: is a FIFO (named pipe), not a file"])
        let device = try VMergeBinary.run(["/dev/zero", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(device.stderrLines, ["vmerge: /dev/zero: is a device, not a file"])
    }

    func testPicturesOverMaxPixelsAreRefusedBeforeDecoding() throws {
        let dir = try makeScratchDirectory()
        let b = Fixtures.path("b_")
        let run = try VMergeBinary.run([b, "--max-pixels", "1280x720", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrLines, ["vmerge: \(b): picture is 1920x1080, more than --max-pixels 921600 pixels"])
        XCTAssertEqual(listing(dir), [])
        // With --skip-invalid the rest still merges.
        let skip = try VMergeBinary.run(
            [b, Fixtures.path("a_"), "--max-pixels", "1280x720", "--skip-invalid", "-q", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(skip.status, 0, skip.stderr)
    }

    func testARecordingWithoutItsIndexSaysSo() throws {
        let p = Fixtures.path("bad_truncated")
        let run = try VMergeBinary.run([p, "-o", "out.mp4"], in: try makeScratchDirectory())
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(
            run.stderrLines,
            ["vmerge: \(p): recording was interrupted before its index (moov box) was written; it cannot be read"])
    }

    func testStrictStopsAtTheFirstCorruptPacket() throws {
        let dir = try makeScratchDirectory()
        try writeDamagedCopy(to: dir.appendingPathComponent("damaged.mov"))
        let lenient = try VMergeBinary.run(["damaged.mov", "-o", "out.mp4"], in: dir)
        XCTAssertEqual(lenient.status, 0, lenient.stderr)
        let strict = try VMergeBinary.run(["damaged.mov", "--strict", "-y", "-o", "strict.mp4"], in: dir)
        XCTAssertEqual(strict.status, 1)
        XCTAssertEqual(strict.stderrLines.count, 1, strict.stderr)
        XCTAssertTrue(strict.stderr.hasPrefix("vmerge: damaged.mov: corrupt packet near "), strict.stderr)
        XCTAssertTrue(strict.stderr.contains("--strict stops here"), strict.stderr)
        XCTAssertFalse(listing(dir).contains("strict.mp4"))
    }

    func testAnOutputThatIsAHardLinkToAnInputIsRefused() throws {
        let dir = try makeScratchDirectory()
        let clip = dir.appendingPathComponent("clip.mov")
        try FileManager.default.copyItem(atPath: Fixtures.path("a_"), toPath: clip.path)
        XCTAssertEqual(link(clip.path, dir.appendingPathComponent("same.mp4").path), 0)
        let before = try Data(contentsOf: clip)
        let run = try VMergeBinary.run(["clip.mov", "-y", "-o", "same.mp4"], in: dir)
        XCTAssertEqual(run.status, 2, "the command's mistake")
        XCTAssertEqual(run.stderrLines, ["vmerge: same.mp4: output is also an input; refusing to overwrite it"])
        XCTAssertEqual(try Data(contentsOf: clip), before)
    }

    /// Disk full while writing, on a 200 KiB tmpfs (needs root; skipped where mounting is not
    /// allowed): exit 1, one line, no temporary file, inputs untouched.
    func testDiskFullWhileWriting() throws {
        let dir = try makeScratchDirectory()
        let small = dir.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        let mount = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"), ["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", small.path],
            in: dir)
        guard mount.status == 0 else {
            throw XCTSkip("cannot mount a small tmpfs here (\(mount.stderr.trimmingCharacters(in: .newlines)))")
        }
        defer { _ = try? runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["umount", small.path], in: dir) }
        let inputs = ["a_", "b_", "d_", "e_", "g_", "h_", "j_"].map(Fixtures.path)
        let sizes = inputs.map { (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int }
        // --min-free 0: past the up-front check, so the disk really fills while writing.
        let run = try VMergeBinary.run(
            inputs + ["--min-free", "0", "--quality", "high", "-o", "small/out.mp4"], in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("vmerge: small/out.mp4: "), run.stderr)
        XCTAssertTrue(run.stderr.lowercased().contains("no space left on device"), run.stderr)
        XCTAssertEqual(listing(small), [], "no output, no temporary file")
        XCTAssertEqual(inputs.map { (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int }, sizes)
        // Without --min-free 0 the estimate refuses before any work.
        let early = try VMergeBinary.run(inputs + ["--quality", "high", "-o", "small/out.mp4"], in: dir)
        XCTAssertEqual(early.status, 1)
        XCTAssertTrue(early.stderr.contains("not enough free space"), early.stderr)
    }

    /// A file cut short while vmerge reads it is an error, not a clip padded with its last frame.
    func testAnInputThatShrinksWhileBeingReadIsAnError() throws {
        let dir = try makeScratchDirectory()
        let big = dir.appendingPathComponent("big.mov")
        // A long input: 40 fixtures merged by vmerge itself (an MP4 is a valid input).
        let make = try VMergeBinary.run(
            Array(repeating: Fixtures.path("b_"), count: 40) + ["-q", "-o", "big.mov"], in: dir)
        XCTAssertEqual(make.status, 0, make.stderr)
        var truncated = false
        let run = try VMergeBinary.run(["big.mov", "-o", "out.mp4"], in: dir) { process in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && process.isRunning {
                if listing(dir).contains(where: { $0.hasSuffix(".tmp") }) {
                    truncated = truncate(big.path, 20_000) == 0
                    return
                }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        XCTAssertTrue(truncated)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderrLines.count, 1, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("vmerge: big.mov: "), run.stderr)
        XCTAssertFalse(listing(dir).contains("out.mp4"))
        XCTAssertFalse(listing(dir).contains { $0.hasSuffix(".tmp") })
    }
}
