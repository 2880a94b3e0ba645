import Foundation
import TestSupport
import XCTest

/// The documentation's "Use from Swift" as a newcomer follows it: its manifest and its program,
/// taken from the text (not copied here), made into a package of their own that depends on this
/// checkout by path, built by SwiftPM and run: on two clips, a second time, and on a bad clip.
final class ConsumerPackageTests: XCTestCase {
    /// The manifest and the program of the section, and the names they use.
    private struct Consumer {
        var manifest: String
        var program: String
        var name: String
        var dependencyPath: String

        init() throws {
            let section = try Documentation.section("Use from Swift")
            let blocks = section.components(separatedBy: "```swift\n").dropFirst().compactMap {
                $0.components(separatedBy: "\n```").first
            }
            manifest = try XCTUnwrap(blocks.first { $0.contains("PackageDescription") }, "no manifest in the section")
            program = try XCTUnwrap(blocks.first { $0.contains("MergeSession(job)") }, "no program in the section")
            name = try XCTUnwrap(Consumer.quoted(after: ".executableTarget(name: ", in: manifest))
            dependencyPath = try XCTUnwrap(Consumer.quoted(after: ".package(path: ", in: manifest))
        }

        static func quoted(after prefix: String, in text: String) -> String? {
            text.components(separatedBy: prefix + "\"").dropFirst().first?.components(separatedBy: "\"").first
        }
    }

    /// Built once per test run into a folder under this checkout's .build that stays between runs:
    /// the first build compiles VMerge and what it needs (26 s on 2 idle cores, 75 s while other
    /// builds ran), a later one only what changed (under 2 s). One folder per build of this suite
    /// (`.build/debug`, `.build/ffmpeg-9.0.2/...`, `.build/asan/...`): SwiftPM does not see that
    /// another FFmpeg's headers came in through pkg-config, so a shared folder would link objects
    /// compiled against one FFmpeg with another's libraries (CI's newest-FFmpeg run failed so).
    private func build(_ consumer: Consumer) throws -> URL {
        let fm = FileManager.default
        let folder = Fixtures.root.appendingPathComponent(".build/readme-consumer/\(Self.suiteBuild)")
        let package = folder.appendingPathComponent(consumer.name)
        let sources = package.appendingPathComponent("Sources/\(consumer.name)")
        try fm.createDirectory(at: sources, withIntermediateDirectories: true)
        // The checkout, under the name the manifest gives it (SwiftPM names a path package by it).
        let dependency = package.appendingPathComponent(consumer.dependencyPath).standardized
        try? fm.removeItem(at: dependency)
        try fm.createSymbolicLink(at: dependency, withDestinationURL: Fixtures.root)
        try rewrite(package.appendingPathComponent("Package.swift"), consumer.manifest + "\n")
        try rewrite(sources.appendingPathComponent("main.swift"), consumer.program + "\n")
        let started = Date()
        let built = try runTool(
            "swift",
            // Without the cached build manifest: a file added to the checkout since the last run
            // would be missing from it (the checkout is a path dependency behind a link).
            [
                "build", "--package-path", package.path, "--scratch-path", folder.appendingPathComponent("scratch").path,
                "--disable-build-manifest-caching",
            ])
        XCTAssertEqual(built.status, 0, built.stdout + built.stderr)
        print("the README's package built in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        return folder.appendingPathComponent("scratch/debug/\(consumer.name)")
    }

    /// The suite's own build folder as one name: its path under .build, "/" made "-".
    private static var suiteBuild: String {
        let products = BuildProducts.folder.resolvingSymlinksInPath().standardized.pathComponents
        let below = products.lastIndex(of: ".build").map { products[($0 + 1)...] } ?? products.suffix(2)
        return below.joined(separator: "-")
    }

    /// Written only when it changed, so an unchanged program is not compiled again.
    private func rewrite(_ file: URL, _ text: String) throws {
        if (try? String(contentsOf: file, encoding: .utf8)) != text {
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
    }

    private func clips(_ second: String, in folder: URL) throws {
        try FileManager.default.copyItem(at: Fixtures.url("a_"), to: folder.appendingPathComponent("part1.mov"))
        try FileManager.default.copyItem(at: Fixtures.url(second), to: folder.appendingPathComponent("part2.mov"))
    }

    func testTheReadmesPackageBuildsAndItsProgramMergesRunsAgainAndSaysWhatIsWrong() throws {
        let consumer = try Consumer()
        XCTAssertTrue(consumer.manifest.contains(".product(name: \"VMerge\", package: \"vmerge\")"), consumer.manifest)
        for name in ["part1.mov", "part2.mov", "clip.mp4"] { XCTAssertTrue(consumer.program.contains(name), name) }
        let program = try build(consumer)

        let dir = try makeScratchDirectory()
        try clips("b_", in: dir)
        let first = try runProgram(program, [], in: dir)
        XCTAssertEqual(first.status, 0, first.stdout + first.stderr)
        XCTAssertTrue(first.stdout.contains("wrote \(dir.appendingPathComponent("clip.mp4").path) 5.5 s"), first.stdout)
        let made = try Data(contentsOf: dir.appendingPathComponent("clip.mp4"))
        XCTAssertGreaterThan(made.count, 10_000)

        // Again: the output is this job's, so the run skips it and leaves it as it was.
        let second = try runProgram(program, [], in: dir)
        XCTAssertEqual(second.status, 0, second.stdout + second.stderr)
        XCTAssertTrue(second.stdout.contains("clip.mp4 is up to date"), second.stdout)
        XCTAssertEqual(second.stderr, "")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("clip.mp4")), made)

        // A bad clip: listed with its reason, then one line saying it, exit 1, no trap, no output.
        let bad = try makeScratchDirectory()
        try clips("bad_text", in: bad)
        let refused = try runProgram(program, [], in: bad)
        XCTAssertEqual(refused.status, 1, refused.stdout + refused.stderr)
        let path = bad.appendingPathComponent("part2.mov").path
        XCTAssertEqual(
            refused.stderr,
            "vmerge: \(path): not a readable video file (unknown format, or a recording cut off before it was "
                + "finalised)\n")
        XCTAssertTrue(refused.stdout.contains("\(path) invalid"), refused.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: bad.appendingPathComponent("clip.mp4").path))
    }
}
