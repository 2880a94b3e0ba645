import Foundation
import TestSupport
import XCTest

@testable import VMergeCore

/// The README's deployment examples as a user copies them: the systemd units it shows are the
/// package's (packaging/systemd), pass `systemd-analyze verify` and say where they are wanted, and
/// the Kubernetes Job's command runs, with a failure policy that fits vmerge's exit codes.
final class DeploymentExampleTests: XCTestCase {

    /// The README's fenced blocks of `language`, each as its lines.
    private func blocks(_ language: String) throws -> [[String]] {
        let lines = try Documentation.allText().components(separatedBy: "\n")
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
        let root = Fixtures.root
        let makefile = try String(contentsOf: root.appendingPathComponent("Makefile"), encoding: .utf8)
        let newest = try XCTUnwrap(
            makefile.components(separatedBy: "\n").first { $0.hasPrefix("FFMPEG_NEWEST := ") }?
                .dropFirst("FFMPEG_NEWEST := ".count))
        let readme = try Documentation.allText()
        XCTAssertTrue(
            readme.contains("`make test-ffmpeg FFMPEG_VERSION=\(newest)` (in CI)"),
            "README does not name \(newest) as tested in CI")
        let ci = try String(contentsOf: root.appendingPathComponent(".ci/run"), encoding: .utf8)
        XCTAssertTrue(ci.contains("make test-ffmpeg FFMPEG_VERSION=\"$(make -s print-ffmpeg-newest)\""), ci)
        for target in ["make test-deb", "make test-image", "make test-install"] {
            XCTAssertTrue(ci.contains(target), target)
        }
        let dockerfile = try String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let froms = dockerfile.components(separatedBy: "\n").filter { $0.hasPrefix("FROM ") }
        XCTAssertEqual(froms.last, "FROM debian:bookworm-slim")
        let rootfs = try String(contentsOf: root.appendingPathComponent("scripts/test-rootfs.sh"), encoding: .utf8)
        XCTAssertTrue(rootfs.contains("suite=bookworm "))
    }

    /// The package's units (packaging/systemd) are the README's, verbatim and each shown once (no
    /// other unit is shown); each passes `systemd-analyze verify` as an instance, with this build's
    /// binary where it runs /usr/bin/vmerge, and says where it is wanted; the README's conf files set
    /// only variables their unit reads, and options its command has; and the exposure the README
    /// reports is systemd-analyze's.
    func testThePackagedSystemdUnitsAreTheReadmesAndVerify() throws {
        let root = Fixtures.root
        let folder = root.appendingPathComponent("packaging/systemd")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".service") }
        XCTAssertEqual(
            names.sorted(), ["vmerge-dashboard@.service", "vmerge-watch@.service", "vmerge-worker@.service"])
        let ini = try blocks("ini")
        let shown = ini.filter { block in
            ["# /usr/lib/systemd/system/", "# /etc/systemd/system/", "# /lib/systemd/system/"].contains {
                block.first?.hasPrefix($0) == true
            }
        }
        XCTAssertEqual(shown.count, names.count, "the README shows each packaged unit once, and no other unit")
        let analyze = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        let canAnalyze = FileManager.default.isExecutableFile(atPath: analyze.path)
        let readme = try Documentation.allText()
        let dir = try makeScratchDirectory()
        let manPage = try VMergeBinary.run(["--print-man-page"], in: dir).stdout
        for name in names.sorted() {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            XCTAssertTrue(text.hasSuffix("\n"), name)
            let lines = Array(text.components(separatedBy: "\n").dropLast())
            let block = shown.first { $0.first?.hasPrefix("# /usr/lib/systemd/system/\(name) ") == true }
            XCTAssertEqual(
                block.map { Array($0.dropFirst()) }, lines,
                "the README does not show packaging/systemd/\(name) verbatim")
            XCTAssertTrue(name.hasSuffix("@.service"), name)
            // What `systemctl enable` needs: an [Install] section saying what wants it.
            XCTAssertTrue(
                lines.drop { $0 != "[Install]" }.contains { $0.hasPrefix("WantedBy=") },
                "\(name) has no [Install] WantedBy=")
            XCTAssertTrue(lines.contains("User=vmerge"), "\(name) does not run as the package's user")
            let kind = name.replacingOccurrences(of: "vmerge-", with: "").replacingOccurrences(
                of: "@.service", with: "")
            let confs = ini.filter { $0.first?.hasPrefix("# /etc/vmerge/\(kind)") == true }
            XCTAssertFalse(confs.isEmpty, "the README shows no /etc/vmerge/\(kind)… conf file")
            for conf in confs { try checkConf(conf, of: name, lines: lines, manPage: manPage, in: dir) }
            guard canAnalyze else { continue }
            // Verified as an instance, with this build's binary where the unit says /usr/bin/vmerge.
            XCTAssertEqual(
                lines.filter { $0.hasPrefix("ExecStart=/usr/bin/vmerge ") }.count, 1,
                "\(name): one ExecStart= of /usr/bin/vmerge")
            let local = text.replacingOccurrences(of: "=/usr/bin/vmerge ", with: "=\(VMergeBinary.url.path) ")
            let instance = dir.appendingPathComponent(name.replacingOccurrences(of: "@.service", with: "@1.service"))
            try Data(local.utf8).write(to: dir.appendingPathComponent(name))
            try Data(local.utf8).write(to: instance)
            let run = try runProgram(analyze, ["verify", "--man=no", instance.path], in: dir)
            XCTAssertEqual(run.status, 0, "\(name): \(run.stderr)")
            XCTAssertEqual(run.stderr, "", name)
            // "(systemd 252) ... vmerge-watch@ 0.9 SAFE": checked where the README's systemd runs.
            let version = try runProgram(analyze, ["--version"], in: dir).stdout.split(separator: " ").dropFirst().first
            guard let version, readme.contains("(systemd \(version))") else { continue }
            let security = try runProgram(analyze, ["security", "--offline=yes", instance.path], in: dir)
            let overall = try XCTUnwrap(
                security.stdout.components(separatedBy: "\n").first { $0.contains("Overall exposure level") })
            let words =
                overall.components(separatedBy: ": ").last?.split(separator: " ").prefix(2).joined(separator: " ") ?? ""
            let unit = name.replacingOccurrences(of: ".service", with: "")
            XCTAssertTrue(readme.contains("\(unit) \(words)"), "the README does not say \(unit) \(words) (\(overall))")
        }
        if !canAnalyze { throw XCTSkip("systemd-analyze is not installed here: the units were compared, not verified") }
    }

    /// The README's dashboard conf shows a watch unit's status files where that unit writes them
    /// (`--watch` its runtime folder, for an instance whose conf the README shows), and reads its
    /// token from the file the README's recipe makes (root's, readable by the group vmerge only).
    func testTheDashboardConfNamesTheWatchUnitsFolderAndTheTokenTheReadmeMakes() throws {
        let root = Fixtures.root
        let watch = try String(
            contentsOf: root.appendingPathComponent("packaging/systemd/vmerge-watch@.service"), encoding: .utf8
        )
        .components(separatedBy: "\n")
        let runtime = try XCTUnwrap(
            watch.first { $0.hasPrefix("RuntimeDirectory=") }?.dropFirst("RuntimeDirectory=".count))
        XCTAssertTrue(
            watch.contains { $0.hasPrefix("ExecStart=") && $0.contains(" --status-file /run/\(runtime)/status.json ") },
            "the watch unit's status file is not in its runtime folder")
        let ini = try blocks("ini")
        let conf = try XCTUnwrap(ini.first { $0.first?.hasPrefix("# /etc/vmerge/dashboard-") == true })
        let options = try XCTUnwrap(conf.first { $0.hasPrefix("VMERGE_DASHBOARD_OPTIONS=") }).split(separator: " ")
        let watched = options.indices.filter { options[$0] == "--watch" }.map { String(options[$0 + 1]) }
        XCTAssertFalse(watched.isEmpty, "the dashboard's conf shows no --watch")
        for path in watched {
            let instance = try XCTUnwrap(
                path.wholeMatch(
                    of: try Regex("/run/\(runtime.replacingOccurrences(of: "%i", with: "([A-Za-z0-9_-]+)"))/"))?
                    .output[1].substring, "\(path) is not a watch unit's runtime folder")
            XCTAssertTrue(
                ini.contains { $0.first?.hasPrefix("# /etc/vmerge/watch-\(instance).conf ") == true },
                "the README shows no conf for vmerge-watch@\(instance)")
        }
        let token = try XCTUnwrap(options.firstIndex(of: "--token-file").map { String(options[$0 + 1]) })
        let recipe = try XCTUnwrap(
            try blocks("sh").joined().first { $0.contains("/dev/urandom") && $0.contains(token) })
        XCTAssertTrue(recipe.contains("install -m 0640 -o root -g vmerge /dev/stdin \(token)"), recipe)
    }

    /// A conf file the README shows for unit `name` (its `lines`): the unit reads it (an
    /// EnvironmentFile= whose %i stands for the README's instance), it sets only what the command
    /// expands or vmerge itself reads (its man page's ENVIRONMENT), and each option in an
    /// …_OPTIONS value is one `vmerge <command> --help` lists.
    private func checkConf(_ conf: [String], of name: String, lines: [String], manPage: String, in dir: URL) throws {
        let path = String(conf[0].dropFirst(2).prefix { $0 != " " })
        let files = lines.filter { $0.hasPrefix("EnvironmentFile=") }.map {
            $0.dropFirst("EnvironmentFile=".count).drop { $0 == "-" }.replacingOccurrences(of: ".", with: "\\.")
                .replacingOccurrences(of: "%i", with: "[A-Za-z0-9_-]+")
        }
        XCTAssertTrue(
            try files.contains { try Regex("^\($0)$").wholeMatch(in: path) != nil }, "\(name) does not read \(path)")
        let command = (lines.first { $0.hasPrefix("ExecStart=") } ?? "").split(separator: " ").map(String.init)
        XCTAssertGreaterThan(command.count, 1, name)
        let help = try VMergeBinary.run([command[1], "--help"], in: dir).stdout
        let options = Set(
            help.components(separatedBy: "\n").flatMap { line in
                line.firstMatch(of: /^ {2,}(?:(-[A-Za-z]), )?(--[a-z-]+)/).map {
                    [$0.output.1.map(String.init), String($0.output.2)]
                }
                    ?? []
            }.compactMap { $0 })
        XCTAssertTrue(options.contains("--help"), "no options read from vmerge \(command[1]) --help")
        for line in conf.dropFirst() where !line.isEmpty && !line.hasPrefix("#") {
            let key = String(line.prefix { $0 != "=" })
            let expanded = command.contains { $0 == "$\(key)" || $0.contains("${\(key)}") }
            XCTAssertTrue(expanded || manPage.contains(".B \(key)\n"), "\(name) does not use \(key)")
            guard key.hasSuffix("_OPTIONS") else { continue }
            for word in line.dropFirst(key.count + 1).split(separator: " ") where word.hasPrefix("-") {
                XCTAssertTrue(options.contains(String(word)), "\(path): vmerge \(command[1]) has no option \(word)")
            }
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
            try FileManager.default.copyItem(
                atPath: Fixtures.path(prefix), toPath: folder.appendingPathComponent("1.mov").path)
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
        // The shell hands its process to vmerge: a shell as the container's PID 1 ignores the
        // SIGTERM of an eviction, and vmerge would run on until SIGKILL.
        XCTAssertTrue(text.contains("&& exec vmerge batch "), "the Job's shell must exec vmerge")
        let failIndex = try XCTUnwrap(yaml.firstIndex { $0.contains("action: FailIndex") })
        XCTAssertTrue(yaml[failIndex + 1].contains("values: [\(Exit.usage.status)]"), yaml[failIndex + 1])
        XCTAssertTrue(text.contains("onPodConditions: [{type: DisruptionTarget}]"))
        let readme = try Documentation.allText()
        let rows = readme.components(separatedBy: "\n").filter { $0.hasPrefix("| ") && $0.contains(" | batch says |") == false }
        let batchStatuses = Exit.table(for: .batch).map(\.status).filter { !$0.contains("130") } + ["143"]
        for status in batchStatuses {
            XCTAssertTrue(
                rows.contains { $0.hasPrefix("| \(status) | ") && $0.components(separatedBy: " | ").count == 3 },
                "the exit table under the Job has no row for \(status)")
        }
    }
}
