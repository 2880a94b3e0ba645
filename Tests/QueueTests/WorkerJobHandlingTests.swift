import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

@testable import VMergeQueue

/// What `vmerge worker` does with a job that fails or is odd: --once retries output-side errors
/// only, a spec edited in the table is held to the output rule, names travel as bytes, and a row
/// at the counters' limit fails alone.
final class WorkerJobHandlingTests: WorkerTestCase {
    /// --once: a bad input fails at once (no retry); an output-side error (the output's folder
    /// missing) is retried after its backoff, and done once the folder is there; a file under
    /// the output's name that is not the job's is never replaced. Exit 1: a job failed.
    func testOnceRetriesOutputSideErrorsOnly() throws {
        let missing = folder.appendingPathComponent("later")
        let foreign = out.appendingPathComponent("taken.mp4")
        try Data("not a video".utf8).write(to: foreign)
        var later = shortJob("later", seconds: 0.5)
        later["output"] = missing.appendingPathComponent("later.mp4").path
        try add(
            try jobList([
                shortJob("good", seconds: 0.5),
                ["name": "bad", "inputs": [fixture("bad_text.mov")], "output": "bad.mp4"],
                later, shortJob("taken", seconds: 0.5),
            ]), ["--max-attempts", "2"])
        let worker = try startWorker("w1", ["--once"])
        XCTAssertTrue(wait(30) { row(3)?.state == "queued" && row(3)?.error != nil }, worker.log)
        try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: true)
        XCTAssertEqual(worker.waitForExit(seconds: 60), 1, worker.log)
        XCTAssertEqual(row(1)?.state, "done")
        XCTAssertEqual(row(2)?.state, "failed")
        XCTAssertEqual(row(2)?.attempts, 1, "a bad input is not retried")
        XCTAssertTrue(row(2)?.error?.contains("bad_text.mov: not a readable video file") == true, "\(row(2) as Any)")
        XCTAssertEqual(row(3)?.state, "done")
        XCTAssertEqual(row(3)?.attempts, 2)
        XCTAssertEqual(row(4)?.state, "failed")
        XCTAssertEqual(row(4)?.attempts, 1)
        XCTAssertEqual(
            row(4)?.error,
            "\(foreign.path): output exists and is not this job's; a queued job never replaces it: move it away and "
                + "'vmerge queue retry' the job")
        XCTAssertEqual(try String(contentsOf: foreign, encoding: .utf8), "not a video")
        XCTAssertTrue(worker.log.contains("job 3 later: failed: "), worker.log)
        XCTAssertTrue(worker.log.contains("; tried again in 5 s (attempt 1 of 2)"), worker.log)
        XCTAssertTrue(
            worker.log.hasSuffix(
                "vmerge: worker: nothing queued or running: stopping\nvmerge: worker: w1 stopped: 2 done, 2 failed\n"),
            worker.log)
    }

    /// The output rule is kept where the file is written, whichever door a job came by: a spec
    /// inserted by SQL, or edited in the table, that names an output `queue add` refuses (an MP4
    /// under .txt) fails its job at once (the job's fault: not tried again) and writes nothing.
    func testASpecFromTheTableIsHeldToTheOutputRule() throws {
        try add(try jobList([shortJob("edited", seconds: 0.5)]))
        let sql = try PGConnection(database)
        try sql.execute(
            "UPDATE vmerge.jobs SET spec = jsonb_set(spec, '{output}', to_jsonb($1::text)) WHERE id = 1",
            [out.appendingPathComponent("edited.txt").path])
        let spec = """
            {"name": "j6", "inputs": ["\(clip)"], "output": "\(out.path)/j6.txt", "options": {"min-duration": "0"}}
            """
        try sql.execute("INSERT INTO vmerge.jobs (job_key, name, spec) VALUES ('planted', 'j6', $1::jsonb)", [spec])
        let worker = try startWorker("w1", ["--once"])
        XCTAssertEqual(worker.waitForExit(seconds: 60), 1, worker.log)
        for (id, name) in [(1, "edited.txt"), (2, "j6.txt")] {
            XCTAssertEqual(row(id)?.state, "failed", worker.log)
            XCTAssertEqual(row(id)?.attempts, 1, "not tried again")
            XCTAssertEqual(
                row(id)?.error,
                "\(out.appendingPathComponent(name).path): vmerge writes MP4 or QuickTime files; the name must end in "
                    + "'.mp4', '.m4v' or '.mov'")
        }
        XCTAssertEqual(outputs, [], "nothing written, not even a temporary")
    }

    /// Names are bytes through the queue too: `queue add` of a folder whose job folder and clip
    /// names are not UTF-8, beside their U+FFFD twins, stores the names losslessly in the specs,
    /// and the worker merges each job's own files into its own output.
    func testTheQueueCarriesNamesAsBytes() throws {
        let jobs = folder.appendingPathComponent("jobs").path
        let job = Array("J".utf8) + [0xFE]
        let clipName = Array("c".utf8) + [0xFF] + Array(".mov".utf8)
        let twin = Array("J\u{FFFD}".utf8)
        for (folderName, name, source) in [
            (job, clipName, clip), (twin, Array("c\u{FFFD}.mov".utf8), fixture("j_audio_offset_640x480_30fps.mov")),
        ] {
            let path = Array((jobs + "/").utf8) + folderName
            try FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
            XCTAssertEqual((path + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { mkdir($0.baseAddress!, 0o755) } }, 0)
            XCTAssertEqual(copy(source, to: path + [0x2F] + name), 0)
        }
        let word = { (bytes: [UInt8]) in "$'" + bytes.map { String(format: "\\x%02x", $0) }.joined() + "'" }
        let script = "exec \"$VMERGE\" queue add --db \"$DB\" --min-duration 0 --out \(word(Array(out.path.utf8))) "
            + word(Array(jobs.utf8))
        let added = try runProgram(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script],
            environment: ["VMERGE": WorkerProcess.binary.path, "DB": database])
        XCTAssertEqual(added.status, 0, added.stderr)
        let specs = try PGConnection(database).execute("SELECT spec->>'output' FROM vmerge.jobs ORDER BY id")
        let stored = (0..<specs.rowCount).compactMap { specs.value($0, 0) }.map(FileName.bytes(of:))
        XCTAssertEqual(Set(stored), [Array((out.path + "/").utf8) + job + Array(".mp4".utf8),
            Array((out.path + "/").utf8) + twin + Array(".mp4".utf8)], "the specs hold the names' bytes")
        let worker = try startWorker("w1", ["--once"])
        XCTAssertEqual(worker.waitForExit(seconds: 60), 0, worker.log)
        XCTAssertTrue(worker.log.contains("J\\xFE"), worker.log)
        for (name, seconds) in [(job, 3.0), (twin, 2.5)] {
            let path = out.path + "/" + FileName.decode(name + Array(".mp4".utf8))
            XCTAssertEqual((try? Probe.clip(at: path).0.durationSeconds) ?? -1, seconds, accuracy: 0.05, "\(name)")
        }
    }

    /// Copies `source` to a path given as bytes; 0 on success.
    private func copy(_ source: String, to path: [UInt8]) -> Int32 {
        guard let data = FileManager.default.contents(atPath: source) else { return -1 }
        let fd = (path + [0]).withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        return data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == data.count ? 0 : -1
    }

    /// One row whose attempts counter is at the integer's limit used to make every claim fail
    /// ("integer out of range") and stall the whole queue: it is failed, saying why, and the
    /// others are done.
    func testARowAtTheCountersLimitFailsAloneAndTheQueueGoesOn() throws {
        try add(try jobList([shortJob("stuck", seconds: 0.5), shortJob("next", seconds: 0.5)]))
        try PGConnection(database).execute("UPDATE vmerge.jobs SET attempts = 2147483647 WHERE id = 1")
        let worker = try startWorker("w1", ["--once"])
        XCTAssertNotNil(worker.waitForExit(seconds: 30), "still running: " + worker.log)
        XCTAssertEqual(row(1)?.state, "failed")
        XCTAssertEqual(
            row(1)?.error,
            "its attempts (2147483647) or claims (0) reached the counter's limit; vmerge queue retry resets the attempts")
        XCTAssertEqual(row(2)?.state, "done", worker.log)
        XCTAssertFalse(worker.log.contains("trying again"), worker.log)
    }
}
