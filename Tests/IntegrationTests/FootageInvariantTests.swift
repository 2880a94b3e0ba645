import Foundation
import TestSupport
import XCTest

/// "No footage is lost", as an invariant over random jobs (issue 23, point 3): jobs built from a
/// pool of recordings and of files a merge can never hold whole (a photo, a clip whose sound runs
/// on past its picture, one with a second sound track, one too short to keep), shared between
/// jobs, named twice, trimmed, cut by --max-duration, with and without a poster, sometimes with a
/// foreign file where an output goes; run through merge, batch (-j 1 and -j 2) and watch with
/// --delete-sources, killed with SIGKILL at a random moment or at a publishing step, then run
/// again. After every run: every placed file is still on disk (moved is fine, same bytes) or was
/// a recording that a published, complete output holds all of; every output name holds a
/// complete, index-first MP4 or the foreign file untouched; every poster name a whole JPEG.
///
/// Seeded and reproducible: VMERGE_INVARIANT_SEEDS=N runs N scenarios (default 8, a few seconds
/// each), VMERGE_INVARIANT_SEED=S starts at seed S (a failure names its seed).
final class FootageInvariantTests: XCTestCase {
    enum Kind { case recording, photo, longSound, extraTrack, tooShort }

    struct PoolFile {
        var name: String
        var kind: Kind
        /// Seconds of picture.
        var seconds: Double
        var hasSound: Bool
    }

    /// One use of a placed file in a job.
    struct Use {
        var file: String  // the placed file's unique name
        var trim: (start: Double, end: Double)?
    }

    struct PlannedJob {
        var name: String
        var uses: [Use]
        var output: String  // batch/merge: path relative to the work folder; watch: the job's name
    }

    enum Mode: CaseIterable { case merge, batch1, batch2, watch }

    private static let poolFolder: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-invariant-pool-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }()

    private static let pool: [PoolFile] = {
        let dir = poolFolder
        let copy = { (prefix: String, name: String) in
            try? FileManager.default.copyItem(
                atPath: Fixtures.path(prefix), toPath: dir.appendingPathComponent(name).path)
        }
        copy("a_", "rec_a.mov")
        copy("e_", "rec_e.mov")
        copy("c_", "rec_c.mov")
        copy("g_", "rec_g.mov")
        copy("l_", "tiny.mov")
        try? runFFmpeg(["-i", Fixtures.path("a_"), "-frames:v", "1", "photo.jpg"], in: dir)
        // 2.2 s of picture, 3 s of sound.
        try? runFFmpeg(
            [
                "-i", Fixtures.path("e_"), "-i", Fixtures.path("a_"), "-map", "0:v", "-map", "1:a", "-c", "copy",
                "longsound.mov",
            ],
            in: dir)
        try? runFFmpeg(
            ["-i", Fixtures.path("a_"), "-map", "0:v", "-map", "0:a", "-map", "0:a", "-c", "copy", "twotracks.mov"],
            in: dir)
        return [
            PoolFile(name: "rec_a.mov", kind: .recording, seconds: 3.0, hasSound: true),
            PoolFile(name: "rec_e.mov", kind: .recording, seconds: 2.2, hasSound: true),
            PoolFile(name: "rec_c.mov", kind: .recording, seconds: 2.208, hasSound: false),
            PoolFile(name: "rec_g.mov", kind: .recording, seconds: 2.3, hasSound: true),
            PoolFile(name: "tiny.mov", kind: .tooShort, seconds: 0.1, hasSound: true),
            PoolFile(name: "photo.jpg", kind: .photo, seconds: 0.04, hasSound: false),
            PoolFile(name: "longsound.mov", kind: .longSound, seconds: 2.2, hasSound: true),
            PoolFile(name: "twotracks.mov", kind: .extraTrack, seconds: 3.0, hasSound: true),
        ]
    }()

    override class func tearDown() {
        try? FileManager.default.removeItem(at: poolFolder)
        super.tearDown()
    }

    func testEverySecondOfEveryRecordingSurvivesKillsAndReruns() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["VMERGE_INVARIANT_SEEDS"].flatMap(Int.init) ?? 8
        let first = environment["VMERGE_INVARIANT_SEED"].flatMap(UInt64.init) ?? 1
        XCTAssertEqual(
            Self.pool.filter {
                FileManager.default.fileExists(atPath: Self.poolFolder.appendingPathComponent($0.name).path)
            }.count, 8)
        for seed in first..<(first + UInt64(count)) {
            try runScenario(seed: seed)
        }
        // A test that never deletes or never publishes would pass whatever the code does.
        print(
            "footage invariant: \(count) scenarios, \(stats.deleted) files deleted, \(stats.kept) kept, \(stats.published) outputs"
        )
        if count >= 8 {
            XCTAssertGreaterThan(stats.deleted, 0, "no scenario deleted anything")
            XCTAssertGreaterThan(stats.kept, 0, "no scenario kept anything")
        }
    }

    private var stats = (deleted: 0, kept: 0, published: 0)

    // MARK: a scenario

    private struct Scenario {
        var mode: Mode
        var jobs: [PlannedJob]
        /// Placed file -> its pool file.
        var placed: [String: PoolFile]
        /// Where each placed file was put, relative to the work folder.
        var placedAt: [String: String]
        var maxDuration: Double?
        var poster: Bool
        /// The output name that holds a foreign file (batch and merge).
        var foreign: String?
        var arguments: [String]
    }

    private func makeScenario(seed: UInt64, in work: URL) throws -> Scenario {
        var random = SeededRandom(state: seed &* 0x2545_F491_4F6C_DD1D)
        let mode = Mode.allCases[Int(seed % 4)]
        let maxDuration: Double? = random.chance(0.3) ? random.pick([3.5, 4.5]) : nil
        let poster = random.chance(0.4)
        var placed: [String: PoolFile] = [:]
        var placedAt: [String: String] = [:]
        var jobs: [PlannedJob] = []
        let jobCount = mode == .merge ? 1 : 2 + random.below(2)
        // Batch jobs share one folder of files; watch jobs each have their own folder.
        var shared: [String] = []
        for j in 0..<jobCount {
            var uses: [Use] = []
            for _ in 0..<(1 + random.below(3)) {
                let reuse = !shared.isEmpty && mode != .watch && random.chance(0.35)
                let again = !uses.isEmpty && random.chance(0.15)
                var name: String
                if again {
                    name = uses[random.below(uses.count)].file
                } else if reuse {
                    name = random.pick(shared)
                } else {
                    // Recordings more often than the rest: they are what can be deleted.
                    let recordings = Self.pool.filter { $0.kind == .recording }
                    let file = random.chance(0.6) ? random.pick(recordings) : random.pick(Self.pool)
                    name = "j\(j)_\(uses.count)_" + file.name
                    placed[name] = file
                    placedAt[name] = mode == .watch ? "inbox/job\(j)/\(name)" : name
                    shared.append(name)
                }
                let file = placed[name]!
                // Parts well clear of the 2 s minimum, so what is kept is never a rounding question.
                let trim: (Double, Double)? =
                    random.chance(0.25) && file.kind != .photo
                    ? (random.pick([0.0, 0.5]), random.pick([1.2, 2.8])) : nil
                uses.append(Use(file: name, trim: trim.map { (start: $0.0, end: $0.1) }))
            }
            let output = mode == .watch ? "job\(j)" : "out\(j).mp4"
            jobs.append(PlannedJob(name: "job\(j)", uses: uses, output: output))
        }
        let foreign = mode != .watch && random.chance(0.2) ? jobs[random.below(jobs.count)].output : nil
        // Lay the files out.
        for (name, file) in placed {
            let target = work.appendingPathComponent(placedAt[name]!)
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: Self.poolFolder.appendingPathComponent(file.name), to: target)
        }
        if let foreign { try Data("somebody else's file\n".utf8).write(to: work.appendingPathComponent(foreign)) }
        var common = ["--delete-sources", "--skip-invalid"]
        if let maxDuration { common += ["--max-duration", String(maxDuration)] }
        let inputObject = { (use: Use) -> String in
            guard let trim = use.trim else { return "\"\(use.file)\"" }
            return "{\"path\": \"\(use.file)\", \"start\": \(trim.start), \"end\": \(trim.end)}"
        }
        var arguments: [String]
        switch mode {
        case .merge:
            arguments = jobs[0].uses.flatMap { use in
                [use.file] + (use.trim.map { ["--trim", "\($0.start),\($0.end)"] } ?? [])
            }
            arguments += ["-o", jobs[0].output] + common + (poster ? ["--poster", "{name}.jpg"] : [])
        case .batch1, .batch2:
            let lines = jobs.map { job in
                "{\"inputs\": [\(job.uses.map(inputObject).joined(separator: ", "))], \"output\": \"\(job.output)\"}"
            }
            try Data(lines.joined(separator: "\n").utf8).write(to: work.appendingPathComponent("jobs.jsonl"))
            arguments =
                ["batch", "jobs.jsonl", "-j", mode == .batch1 ? "1" : "2"] + common
                + (poster ? ["--poster", "{name}.jpg"] : [])
        case .watch:
            try FileManager.default.createDirectory(
                at: work.appendingPathComponent("out"), withIntermediateDirectories: true)
            for job in jobs {
                let json = "{\"inputs\": [\(job.uses.map(inputObject).joined(separator: ", "))]}"
                try Data(json.utf8).write(to: work.appendingPathComponent("inbox/\(job.name)/job.json"))
            }
            arguments =
                ["watch", "inbox", "--out", "out", "--once", "--settle", "0"] + common
                + (poster ? ["--poster", "{name}.jpg"] : [])
        }
        return Scenario(
            mode: mode, jobs: jobs, placed: placed, placedAt: placedAt, maxDuration: maxDuration, poster: poster,
            foreign: foreign, arguments: arguments)
    }

    private func runScenario(seed: UInt64) throws {
        let work = try makeScratchDirectory()
        // VMERGE_INVARIANT_KEEP=1 keeps each scenario's folder, to look at a failure.
        let keep = ProcessInfo.processInfo.environment["VMERGE_INVARIANT_KEEP"] != nil
        if keep { print("seed \(seed): \(work.path)") }
        defer { if !keep { try? FileManager.default.removeItem(at: work) } }
        let scenario = try makeScenario(seed: seed, in: work)
        var random = SeededRandom(state: seed ^ 0xD1B5_4A32_D192_ED03)
        let context = "seed \(seed) (\(scenario.mode)): vmerge \(scenario.arguments.joined(separator: " "))"
        // First run: killed at a random moment or at a publishing step.
        let kill = random.pick(["timer", "timer", "before-video", "after-video"])
        let delay = 0.05 + random.unit() * 2.5
        let killed: RunResult
        if kill == "timer" {
            killed = try VMergeBinary.run(scenario.arguments, in: work) { process in
                let deadline = Date().addingTimeInterval(delay)
                while Date() < deadline && process.isRunning { Thread.sleep(forTimeInterval: 0.005) }
                if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
            }
        } else {
            killed = try VMergeBinary.run(scenario.arguments, in: work, environment: ["VMERGE_TEST_KILL_AT": kill])
        }
        try check(
            scenario, in: work,
            after:
                "\(context)\n  run 1 (\(kill == "timer" ? String(format: "killed after %.2f s", delay) : "killed at \(kill)"), exit \(killed.status)): \(killed.stderr)"
        )
        // Then run again, to the end.
        let again = try VMergeBinary.run(scenario.arguments, in: work)
        XCTAssertNotEqual(again.status, SIGKILL, context)
        try check(scenario, in: work, after: "\(context)\n  run 2 (exit \(again.status)): \(again.stderr)")
        let files = allFiles(in: work).map { ($0 as NSString).lastPathComponent }
        let left = scenario.placed.keys.filter(files.contains).count
        stats.deleted += scenario.placed.count - left
        stats.kept += left
        stats.published += scenario.jobs.map {
            outputPaths(of: $0, scenario, in: work, files: allFiles(in: work)).count
        }.reduce(0, +)
    }

    // MARK: the invariant

    private func check(_ scenario: Scenario, in work: URL, after context: String) throws {
        let files = allFiles(in: work)
        var complete: [String: Bool] = [:]
        func isComplete(_ job: PlannedJob) -> Bool {
            if let known = complete[job.name] { return known }
            let expected = expectedSeconds(of: job, scenario)
            let outputs = outputPaths(of: job, scenario, in: work, files: files)
            let ok = outputs.contains { isCompleteOutput($0, seconds: expected) }
            complete[job.name] = ok
            return ok
        }
        // Every placed file: on disk with its bytes, or a recording a complete output holds whole.
        for (name, file) in scenario.placed.sorted(by: { $0.key < $1.key }) {
            let original = try Data(contentsOf: Self.poolFolder.appendingPathComponent(file.name))
            let present = files.contains { path in
                (path as NSString).lastPathComponent == name
                    && (try? Data(contentsOf: URL(fileURLWithPath: path))) == original
            }
            if present { continue }
            guard file.kind == .recording else {
                XCTFail("\(name) (\(file.kind)) was deleted: no output can hold all of it. \(context)")
                continue
            }
            let holders = scenario.jobs.filter { job in
                usesWhole(name, in: job, scenario) && isComplete(job)
            }
            if holders.isEmpty {
                XCTFail("\(name) was deleted, and no published, complete output holds all of it. \(context)")
            }
        }
        // Every output and poster name: vmerge's whole file, or the foreign one untouched.
        for job in scenario.jobs {
            for path in outputPaths(of: job, scenario, in: work, files: files) {
                let relative = String(path.dropFirst(work.path.count + 1))
                if relative == scenario.foreign {
                    XCTAssertEqual(
                        try? String(contentsOfFile: path, encoding: .utf8), "somebody else's file\n",
                        "the foreign file at \(relative) was replaced. \(context)")
                    continue
                }
                XCTAssertTrue(isIndexFirstMP4(path), "\(relative) is not a complete, index-first MP4. \(context)")
            }
        }
        for path in files where path.hasSuffix(".jpg") && scenario.placed[(path as NSString).lastPathComponent] == nil {
            let data = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
            XCTAssertTrue(
                data.count > 4 && data.prefix(2) == Data([0xFF, 0xD8]) && data.suffix(2) == Data([0xFF, 0xD9]),
                "\(path) is not a whole JPEG. \(context)")
        }
    }

    /// `job`'s uses as the shared oracle models them.
    private func modelled(_ job: PlannedJob, _ scenario: Scenario) -> [FootageOracle.Use] {
        job.uses.map { use in
            let file = scenario.placed[use.file]!
            return FootageOracle.Use(
                file: use.file, seconds: file.seconds, isPhoto: file.kind == .photo, trim: use.trim)
        }
    }

    private func usesWhole(_ name: String, in job: PlannedJob, _ scenario: Scenario) -> Bool {
        FootageOracle.usesWhole(name, modelled(job, scenario), maxDuration: scenario.maxDuration)
    }

    private func expectedSeconds(of job: PlannedJob, _ scenario: Scenario) -> Double {
        FootageOracle.expectedSeconds(modelled(job, scenario), maxDuration: scenario.maxDuration)
    }

    /// Where `job`'s output is: its name (batch, merge), or what watch published for it.
    private func outputPaths(of job: PlannedJob, _ scenario: Scenario, in work: URL, files: [String]) -> [String] {
        guard scenario.mode == .watch else {
            let path = work.appendingPathComponent(job.output).path
            return FileManager.default.fileExists(atPath: path) ? [path] : []
        }
        let outbox = work.appendingPathComponent("out").path + "/"
        return files.filter { path in
            guard path.hasPrefix(outbox), path.hasSuffix(".mp4") else { return false }
            let name = String(path.dropFirst(outbox.count))
            return name == job.name + ".mp4" || (name.hasPrefix(job.name + "-") && !name.hasPrefix("."))
        }
    }

    private func isCompleteOutput(_ path: String, seconds: Double) -> Bool {
        FootageOracle.isCompleteOutput(path, seconds: seconds)
    }

    private func isIndexFirstMP4(_ path: String) -> Bool { FootageOracle.isIndexFirstMP4(path) }

    private func allFiles(in folder: URL) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var files: [String] = []
        while let relative = walker.nextObject() as? String {
            let path = folder.path + "/" + relative
            var info = stat()
            if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG { files.append(path) }
        }
        return files
    }
}
