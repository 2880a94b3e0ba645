import Foundation
import XCTest

@testable import VMergeCore

/// The README's deployment examples as a user copies them: every systemd unit passes
/// `systemd-analyze verify` and says where it is wanted, and the Kubernetes Job's command runs.
final class DeploymentExampleTests: XCTestCase {
    private static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    /// The README's fenced blocks of `language`, each as its lines.
    private func blocks(_ language: String) throws -> [[String]] {
        let lines = try String(contentsOf: Self.readme, encoding: .utf8).components(separatedBy: "\n")
        var found: [[String]] = []
        var current: [String]?
        for line in lines {
            if current == nil, line == "```" + language {
                current = []
            } else if current != nil, line == "```" {
                found.append(current!)
                current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return found
    }

    /// The README's table of tested FFmpeg versions names the release CI tests (the Makefile's
    /// FFMPEG_NEWEST, which .ci/run passes to make test-ffmpeg), and the Dockerfile's run stage is
    /// the Debian release the clean-root tests debootstrap.
    func testTheTestedVersionsTheReadmeNamesAreTheOnesCITests() throws {
        let root = Self.readme.deletingLastPathComponent()
        let makefile = try String(contentsOf: root.appendingPathComponent("Makefile"), encoding: .utf8)
        let newest = try XCTUnwrap(
            makefile.components(separatedBy: "\n").first { $0.hasPrefix("FFMPEG_NEWEST := ") }?
                .dropFirst("FFMPEG_NEWEST := ".count))
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        XCTAssertTrue(readme.contains("`make test-ffmpeg FFMPEG_VERSION=\(newest)` (in CI)"), "README does not name \(newest) as tested in CI")
        let ci = try String(contentsOf: root.appendingPathComponent(".ci/run"), encoding: .utf8)
        XCTAssertTrue(ci.contains("make test-ffmpeg FFMPEG_VERSION=\"$(make -s print-ffmpeg-newest)\""), ci)
        for target in ["make test-deb", "make test-image", "make test-install"] { XCTAssertTrue(ci.contains(target), target) }
        let dockerfile = try String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let froms = dockerfile.components(separatedBy: "\n").filter { $0.hasPrefix("FROM ") }
        XCTAssertEqual(froms.last, "FROM debian:bookworm-slim")
        let rootfs = try String(contentsOf: root.appendingPathComponent("scripts/test-rootfs.sh"), encoding: .utf8)
        XCTAssertTrue(rootfs.contains("suite=bookworm "))
    }

    func testEverySystemdUnitVerifiesAndCanBeEnabled() throws {
        let analyze = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        guard FileManager.default.isExecutableFile(atPath: analyze.path) else {
            throw XCTSkip("systemd-analyze is not installed here: the README's units are not verified")
        }
        let units = try blocks("ini").filter { $0.first?.hasPrefix("# /etc/systemd/system/") == true }
        XCTAssertGreaterThanOrEqual(units.count, 2, "the watch and the worker units")
        let dir = try makeScratchDirectory()
        for unit in units {
            let name = String(unit[0].dropFirst("# /etc/systemd/system/".count).split(separator: " ")[0])
            XCTAssertTrue(name.hasSuffix("@.service"), name)
            // What `systemctl enable` needs: an [Install] section saying what wants it.
            let install = unit.drop { $0 != "[Install]" }
            XCTAssertTrue(install.contains { $0.hasPrefix("WantedBy=") }, "\(name) has no [Install] WantedBy=")
            // Verified as an instance, with this build's binary where the unit says /usr/local/bin.
            let text = unit.joined(separator: "\n").replacingOccurrences(
                of: "/usr/local/bin/vmerge", with: VMergeBinary.url.path)
            let instance = dir.appendingPathComponent(name.replacingOccurrences(of: "@.service", with: "@1.service"))
            try Data(text.utf8).write(to: dir.appendingPathComponent(name))
            try Data(text.utf8).write(to: instance)
            let run = try runProgram(analyze, ["verify", "--man=no", instance.path], in: dir)
            // "User=vmerge" names a user this machine may not have: not the unit's fault.
            let problems = run.stderr.split(separator: "\n").filter { !$0.contains("user") && !$0.contains("User") }
            XCTAssertEqual(run.status, 0, "\(name): \(run.stderr)")
            XCTAssertEqual(problems, [], "\(name): \(run.stderr)")
        }
    }

    /// The indexed Job's command, exactly as written, over a scratch /data with a fresh volume
    /// (no reports folder yet): before, every pod failed on the missing folder.
    func testTheKubernetesJobCommandRunsOnAFreshVolume() throws {
        let yaml = try blocks("yaml").first { $0.contains { $0.contains("completionMode: Indexed") } }
        let line = try XCTUnwrap(yaml?.first { $0.contains("command: [\"sh\", \"-c\", ") })
        let command = try XCTUnwrap(
            line.components(separatedBy: "command: [\"sh\", \"-c\", \"").last?.components(separatedBy: "\"]").first)
        let dir = try makeScratchDirectory()
        let data = dir.appendingPathComponent("data")
        // Jobs in natural order: bad (a corrupt upload), hike, trip: shards 0, 1 and 2 of 8.
        for (job, prefix) in [("trip", "a_"), ("hike", "e_")] {
            let folder = data.appendingPathComponent("recordings/\(job)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: folder.appendingPathComponent("1.mov").path)
        }
        let bad = data.appendingPathComponent("recordings/bad")
        try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
        try Data(repeating: 0x5A, count: 4096).write(to: bad.appendingPathComponent("1.mov"))
        let path = VMergeBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        func shard(_ index: String, _ command: String) throws -> RunResult {
            try runProgram(
                URL(fileURLWithPath: "/bin/sh"), ["-c", command.replacingOccurrences(of: "/data", with: data.path)], in: dir,
                environment: ["JOB_COMPLETION_INDEX": index, "PATH": path])
        }
        // Without --bad-jobs-ok the corrupt upload fails its shard: the pod would be retried for nothing.
        let strict = try shard("0", command.replacingOccurrences(of: " --bad-jobs-ok", with: ""))
        XCTAssertEqual(strict.status, 1, strict.stderr)
        for index in ["0", "1", "2"] {
            let run = try shard(index, command)
            XCTAssertEqual(run.status, 0, "shard \(index): \(run.stderr)")
        }
        XCTAssertEqual(listing(data.appendingPathComponent("merged")), ["hike.mp4", "trip.mp4"])
        XCTAssertEqual(listing(data.appendingPathComponent("reports")), ["shard-0.json", "shard-1.json", "shard-2.json"])
        let report = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: data.appendingPathComponent("reports/shard-0.json")))
                as? [String: Any])
        let jobs = try XCTUnwrap(report["jobs"] as? [[String: Any]])
        XCTAssertEqual(jobs.map { $0["name"] as? String }, ["bad"])
        XCTAssertEqual(jobs.map { $0["failed_for_good"] as? Bool }, [true])
        XCTAssertEqual(report["status"] as? String, "failed")
        XCTAssertEqual(report["exit_code"] as? Int, 0)
        // An output-side failure is still 1 with --bad-jobs-ok: the scheduler's retry may cure it.
        // Here: asking for more free space than the volume has now, less than it holds in all.
        try FileManager.default.removeItem(at: data.appendingPathComponent("merged/hike.mp4"))
        let volume = try FileManager.default.attributesOfFileSystem(forPath: data.path)
        let free = try XCTUnwrap((volume[.systemFreeSize] as? NSNumber)?.int64Value)
        let size = try XCTUnwrap((volume[.systemSize] as? NSNumber)?.int64Value)
        let wanted = (free + (size - free) / 2) >> 20
        let full = try shard("1", command + " --min-free \(wanted)M")
        XCTAssertEqual(full.status, 1, full.stderr)
        XCTAssertTrue(full.stderr.contains("free"), full.stderr)
    }

    /// The indexed Job's failure policy names the exit codes `vmerge batch` documents: 2 (the
    /// command is wrong) fails the index at once; it needs restartPolicy Never; and the table
    /// under it says what each of the batch's exit statuses does.
    func testTheKubernetesFailurePolicyFitsTheExitCodes() throws {
        let yaml = try XCTUnwrap(try blocks("yaml").first { $0.contains { $0.contains("completionMode: Indexed") } })
        let text = yaml.joined(separator: "\n")
        XCTAssertTrue(text.contains("restartPolicy: Never"), "podFailurePolicy needs restartPolicy: Never")
        XCTAssertTrue(text.contains("backoffLimitPerIndex:"))
        XCTAssertTrue(text.contains("--bad-jobs-ok"))
        let failIndex = try XCTUnwrap(yaml.firstIndex { $0.contains("action: FailIndex") })
        XCTAssertTrue(yaml[failIndex + 1].contains("values: [\(Exit.usage.status)]"), yaml[failIndex + 1])
        XCTAssertTrue(text.contains("onPodConditions: [{type: DisruptionTarget}]"))
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        let rows = readme.components(separatedBy: "\n").filter { $0.hasPrefix("| ") && $0.contains(" | batch says |") == false }
        let batchStatuses = Exit.table(for: .batch).map(\.status).filter { !$0.contains("130") } + ["143"]
        for status in batchStatuses {
            XCTAssertTrue(
                rows.contains { $0.hasPrefix("| \(status) | ") && $0.components(separatedBy: " | ").count == 3 },
                "the exit table under the Job has no row for \(status)")
        }
    }
}
