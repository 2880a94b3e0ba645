import Foundation
import TestSupport
import XCTest

/// The container image as the README says to build and use it, in the checks that need no Docker
/// engine and no clean root (`make test-image` replays both of the Dockerfile's stages in CI):
/// the build context docker would send holds what the build stage reads and no .git, `make deb`
/// takes its maintainer and date from the source, the context is Docker's by its rules, and the
/// README's GitLab CI job runs.
final class ContainerImageTests: XCTestCase {
    private let root = Fixtures.root

    /// The files `scripts/docker-context.py` says `docker build` sends from `folder`.
    private func context(of folder: URL) throws -> Set<String> {
        let script = root.appendingPathComponent("scripts/docker-context.py").path
        let run = try runTool("python3", [script, folder.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return Set(run.stdout.split(separator: "\n").map(String.init))
    }

    /// Every file under `folder` of the checkout, relative to the checkout.
    private func files(under folder: String) -> [String] {
        let base = root.appendingPathComponent(folder)
        let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey])
        return (walker?.allObjects as? [URL] ?? []).filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }.map { folder + "/" + String($0.standardizedFileURL.path.dropFirst(base.standardizedFileURL.path.count + 1)) }
    }

    /// The build stage runs `scripts/install-deps.sh --build` and `make deb` in a copy of the
    /// context: the manifest and every target's sources (SwiftPM checks the test targets' folders
    /// too), the Makefile, the scripts it runs and every file make-deb.sh packs must be in it; .git,
    /// .build and dist must not (a context with .build would also be gigabytes).
    func testTheBuildContextHoldsEveryFileTheBuildStageReads() throws {
        let sent = try context(of: root)
        let makeDeb = try String(contentsOf: root.appendingPathComponent("scripts/make-deb.sh"), encoding: .utf8)
        // make-deb.sh names the files it reads as $here/path or "$here"/glob.
        let named = try NSRegularExpression(pattern: #"\$here"?/([^"\s]+)"#)
            .matches(in: makeDeb, range: NSRange(makeDeb.startIndex..., in: makeDeb))
            .compactMap { Range($0.range(at: 1), in: makeDeb).map { String(makeDeb[$0]) } }
        XCTAssertTrue(named.contains("packaging/debian/changelog"), "\(named)")
        var needed = ["Package.swift", "Makefile", "scripts/install-deps.sh", "scripts/make-deb.sh"]
        for path in named {
            let folder = (path as NSString).deletingLastPathComponent
            let entries = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)
            let matching = entries.filter { fnmatch((path as NSString).lastPathComponent, $0, 0) == 0 }
                .map { folder.isEmpty ? $0 : folder + "/" + $0 }
            XCTAssertFalse(matching.isEmpty, "make-deb.sh reads \(path), which is not in the checkout")
            needed += matching
        }
        needed += files(under: "Sources") + files(under: "Tests")
        let missing = needed.filter { !sent.contains($0) }
        XCTAssertEqual(missing, [], "the build stage reads these, and docker would not send them")
        for left in [".git", ".build", "dist"] {
            XCTAssertFalse(sent.contains { $0 == left || $0.hasPrefix(left + "/") }, "\(left) is sent")
        }
    }

    /// `make deb`'s maintainer, date and version come from packaging/debian/changelog, whose newest
    /// entry is the binary's version with a maintainer make-deb.sh takes; nothing in the build
    /// stage's path asks git (the context has no .git).
    func testMakeDebNeedsNoGit() throws {
        let changelog = root.appendingPathComponent("packaging/debian/changelog").path
        let field = { (name: String) in try runTool("dpkg-parsechangelog", ["-l", changelog, "-S", name]) }
        let version = try VMergeBinary.run(["--version"], in: root).stdout.split(separator: "\n").first ?? ""
        XCTAssertEqual("vmerge " + (try field("Version")).stdout.trimmingCharacters(in: .newlines), String(version))
        let maintainer = try field("Maintainer").stdout.trimmingCharacters(in: .newlines)
        XCTAssertNotNil(maintainer.range(of: #"^[^<>]+ <[^@<> ]+@[^@<> ]+>$"#, options: .regularExpression), maintainer)
        XCTAssertEqual(try field("Timestamp").status, 0)
        let gitCall = try NSRegularExpression(pattern: #"(^|[\s;&|(`$])git(\s|$)"#, options: .anchorsMatchLines)
        for script in ["scripts/make-deb.sh", "scripts/install-deps.sh", "Makefile", "Dockerfile"] {
            let text = try String(contentsOf: root.appendingPathComponent(script), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
                .joined(separator: "\n")
            XCTAssertEqual(
                gitCall.numberOfMatches(in: code, range: NSRange(code.startIndex..., in: code)), 0, "\(script) runs git"
            )
        }
    }

    /// scripts/docker-context.py applies .dockerignore as Docker does: comments, blanks around a
    /// pattern, a leading slash, `*` within one name, `**` across folders, a folder's match leaving
    /// out what it holds, `!` taking a file back (the last match wins), and a Dockerfile it names
    /// left out (Docker sends it to the builder, but COPY does not copy it).
    func testTheContextFollowsDockersIgnoreRules() throws {
        let dir = try makeScratchDirectory()
        let made = [
            "Dockerfile", "a.log", "keep.log", "src/main.c", "src/x.o", "src/deep/y.o", "build/out", "build/keep.txt",
            "docs/a.md", "docs/sub/b.md", "n1.txt", "n22.txt", "#hash",
        ]
        for path in made {
            let url = dir.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(path.utf8).write(to: url)
        }
        let rules = [
            "# a comment", "*.log", "  !keep.log  ", "**/*.o", "/build", "!build/keep.txt", "docs/*.md", "n?.txt",
            "Dockerfile", ".dockerignore", "\\#hash",
        ]
        try rules.joined(separator: "\n").write(
            to: dir.appendingPathComponent(".dockerignore"), atomically: true, encoding: .utf8)
        XCTAssertEqual(
            try context(of: dir).sorted(),
            ["build/keep.txt", "docs/sub/b.md", "keep.log", "n22.txt", "src/main.c"])
    }

    /// The README's GitLab CI job: the image's entry point cleared (`entrypoint: [""]`), and its
    /// script, run by a shell as GitLab's runner runs it, merges clips into its artifacts.
    func testTheReadmesGitLabJobRuns() throws {
        let text = try Documentation.allText()
        let blocks = text.components(separatedBy: "```yaml\n").dropFirst().map {
            $0.components(separatedBy: "\n```")[0]
        }
        let job = try XCTUnwrap(blocks.first { $0.contains("entrypoint: [\"\"]") }, "no GitLab CI job in the README")
        let read = try runProgram(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))"], input: job
        )
        XCTAssertEqual(read.status, 0, read.stderr)
        let jobs = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: Any])
        let merge = try XCTUnwrap(jobs.values.first as? [String: Any])
        let image = try XCTUnwrap(merge["image"] as? [String: Any])
        XCTAssertEqual(image["entrypoint"] as? [String], [""])
        let script = try XCTUnwrap(merge["script"] as? [String])
        let dir = try makeScratchDirectory()
        let clips = dir.appendingPathComponent("clips")
        try FileManager.default.createDirectory(at: clips, withIntermediateDirectories: true)
        for (name, fixture) in [("1.mov", "a_"), ("2.mov", "e_")] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path(fixture), toPath: clips.appendingPathComponent(name).path)
        }
        let path = VMergeBinary.url.deletingLastPathComponent().path + ":/usr/bin:/bin"
        for line in script {
            let run = try runTool("/bin/sh", ["-c", line], in: dir, environment: ["PATH": path])
            XCTAssertEqual(run.status, 0, "\(line): \(run.stderr)")
        }
        let artifacts = try XCTUnwrap((merge["artifacts"] as? [String: Any])?["paths"] as? [String])
        for artifact in artifacts {
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(artifact).path), artifact)
        }
    }

    /// The names the README gives the package and the build stage's image are the build's: the
    /// package's file name has the binary's version, the image is the Dockerfile's SWIFT_IMAGE.
    func testTheReadmeNamesThePackageAndImageTheBuildMakes() throws {
        let install = try Documentation.section("Install") + Documentation.page("install.md")
        let version = try VMergeBinary.run(["--version"], in: root).stdout.split(separator: "\n").first ?? ""
        XCTAssertTrue(
            install.contains(
                "`sudo apt-get install ./dist/\(version.replacingOccurrences(of: " ", with: "_"))_amd64.deb`"))
        let dockerfile = try String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let image = try XCTUnwrap(
            dockerfile.split(separator: "\n").first { $0.hasPrefix("ARG SWIFT_IMAGE=") }?.dropFirst(
                "ARG SWIFT_IMAGE=".count))
        XCTAssertTrue(install.contains("(`\(image)`, `--build-arg SWIFT_IMAGE=…` for another)"), String(image))
        XCTAssertTrue(install.contains("what `\(image)` has"), String(image))
    }
}
