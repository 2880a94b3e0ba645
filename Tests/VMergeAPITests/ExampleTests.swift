import Foundation
import TestSupport
import XCTest

/// The example program (Examples/MergeClips) that the README's "Use from Swift" shows: it builds
/// with the package, runs, stops on Ctrl-C, and needs nothing but the public API.
final class ExampleTests: XCTestCase {
    private var folder: URL!
    private var example: URL { BuildProducts.folder.appendingPathComponent("vmerge-example") }

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testTheExampleMergesTwoClipsAndPrintsProgress() throws {
        let output = folder.appendingPathComponent("out.mp4")
        let run = try runTool(example.path, [Fixtures.url("a_").path, Fixtures.url("b_").path, output.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("probing   0%  clip 1/2"), run.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("encoding ") }, run.stdout)
        XCTAssertTrue(lines.contains("done 100%  clip 2/2"), run.stdout)
        XCTAssertTrue(lines.last?.hasPrefix("wrote \(output.path): 320x240, ") ?? false, run.stdout)
        XCTAssertGreaterThan(try MergeSessionTests.size(of: output), 10_000)
    }

    func testCtrlCStopsTheExampleAndLeavesNoOutput() throws {
        let long = try longClip(in: folder)
        let output = folder.appendingPathComponent("out.mp4")
        let process = Process()
        process.executableURL = example
        process.arguments = [long.path, long.path, output.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Until it prints a step of encoding past 0%.
        var seen = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !seen.split(separator: "\n").contains(where: { $0.hasPrefix("encoding") && !$0.contains(" 0%") }) {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
        }
        XCTAssertTrue(seen.contains("encoding"), seen)
        kill(process.processIdentifier, SIGINT)
        let rest = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        seen += String(decoding: rest, as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 130, seen)
        XCTAssertTrue(seen.hasSuffix("cancelled; nothing was written\n"), seen)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["long.mov"])
    }

    /// Compiled as a program outside the package would be (no package name): it sees only what
    /// VMerge makes public, so the example needs nothing else, and the package's own modules
    /// offer a client nothing.
    func testTheExampleNeedsOnlyThePublicAPIAndNothingElseIsVisible() throws {
        let example = Fixtures.root.appendingPathComponent("Examples/MergeClips/main.swift")
        let checked = try typecheck(example)
        XCTAssertEqual(checked.status, 0, checked.stderr)

        let leaks = [
            ("import VMergeJobs\nlet _ = JobRunner.version\n", "cannot find 'JobRunner' in scope"),
            ("import VMergeCore\nlet _ = JobSettings()\n", "cannot find 'JobSettings' in scope"),
            (
                "import Foundation\nimport VMerge\nlet job = MergeJob(inputs: [], output: URL(fileURLWithPath: \"o.mp4\"))\n"
                    + "let _ = try job.runnable()\n", "'runnable' is inaccessible due to 'internal' protection level"
            ),
        ]
        for (index, (source, error)) in leaks.enumerated() {
            let file = folder.appendingPathComponent("leak\(index).swift")
            try source.write(to: file, atomically: true, encoding: .utf8)
            let checked = try typecheck(file)
            XCTAssertNotEqual(checked.status, 0, source)
            XCTAssertTrue(checked.stderr.contains(error), checked.stderr)
        }
    }
}

/// The DocC catalogue builds from the public symbols with no warning, and a broken link in it
/// is an error (scripts/make-docs.sh, `make docs`).
final class DocumentationTests: XCTestCase {
    func testTheCatalogueBuildsAndABrokenLinkFailsIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-docs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = Fixtures.root.appendingPathComponent("scripts/make-docs.sh").path
        let built = try runTool("bash", [script, BuildProducts.folder.path, folder.appendingPathComponent("ok").path])
        XCTAssertEqual(built.status, 0, built.stderr)
        let pages = folder.appendingPathComponent("ok/data/documentation/vmerge")
        for page in ["mergejob", "mergesession", "mergereport", "mergeerror"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: pages.appendingPathComponent(page + ".json").path), page)
        }
        // Only the public surface is documented: nothing of the package's own types.
        let index = try String(contentsOf: pages.appendingPathComponent("mergejob.json"), encoding: .utf8)
        XCTAssertFalse(index.contains("runnable"), "an internal member is documented")
        // Served as the documentation says: any static server, at the page it names.
        let section = try Documentation.section("Use from Swift")
        XCTAssertTrue(
            section.contains("python3 -m http.server --directory .build/docs/VMerge.doccarchive 8000"), section)
        XCTAssertTrue(section.contains("http://localhost:8000/documentation/vmerge/"), section)
        let served = folder.appendingPathComponent("ok/documentation/vmerge/index.html")
        XCTAssertTrue(FileManager.default.fileExists(atPath: served.path), "no page to serve at documentation/vmerge/")

        let broken = folder.appendingPathComponent("VMerge.docc")
        try FileManager.default.copyItem(at: Fixtures.root.appendingPathComponent("Sources/VMerge/VMerge.docc"), to: broken)
        let page = broken.appendingPathComponent("VMerge.md")
        try (String(contentsOf: page, encoding: .utf8) + "- ``MergeJob/noSuchProperty``\n").write(
            to: page, atomically: true, encoding: .utf8)
        let failed = try runTool(
            "bash", [script, BuildProducts.folder.path, folder.appendingPathComponent("broken").path, broken.path])
        XCTAssertNotEqual(failed.status, 0)
        XCTAssertTrue((failed.stdout + failed.stderr).contains("noSuchProperty"), failed.stdout + failed.stderr)
    }
}
