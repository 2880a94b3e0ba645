import Foundation
import XCTest

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
        for (job, prefix) in [("trip", "a_"), ("hike", "e_")] {
            let folder = data.appendingPathComponent("recordings/\(job)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: folder.appendingPathComponent("1.mov").path)
        }
        let path = VMergeBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        for index in ["0", "1"] {
            let run = try runProgram(
                URL(fileURLWithPath: "/bin/sh"), ["-c", command.replacingOccurrences(of: "/data", with: data.path)], in: dir,
                environment: ["JOB_COMPLETION_INDEX": index, "PATH": path])
            XCTAssertEqual(run.status, 0, "shard \(index): \(run.stderr)")
        }
        XCTAssertEqual(listing(data.appendingPathComponent("merged")), ["hike.mp4", "trip.mp4"])
        XCTAssertEqual(listing(data.appendingPathComponent("reports")), ["shard-0.json", "shard-1.json"])
    }
}
