import Foundation
import VMergeCore
import XCTest

@testable import VMergeCLI

/// Collects what `run` writes, from any thread.
final class Capture: @unchecked Sendable {
    private let lock = NSLock()
    private var out = ""
    private var err = ""

    var stdout: String { lock.lock(); defer { lock.unlock() }; return out }
    var stderr: String { lock.lock(); defer { lock.unlock() }; return err }

    var console: Console {
        Console(
            output: { [self] text in
                lock.lock(); out += text; lock.unlock()
            },
            error: { [self] text in
                lock.lock(); err += text; lock.unlock()
            })
    }
}

final class RunTests: XCTestCase {
    private func run(_ args: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let capture = Capture()
        let status = VMergeCLI.run(args, console: capture.console)
        return (status, capture.stdout, capture.stderr)
    }

    private func lines(_ text: String) -> [String] {
        var lines = text.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    func testHelp() {
        for args in [["--help"], ["-h"], ["a.mov", "--help", "--width", "3"]] {
            let r = run(args)
            XCTAssertEqual(r.status, 0, "\(args)")
            XCTAssertEqual(r.stdout, Help.text(width: 80), "\(args)")
            XCTAssertEqual(r.stderr, "", "\(args)")
        }
    }

    func testUnknownOption() {
        let r = run(["--widht", "640", "a.mov", "-o", "out.mp4"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.status, Exit.usage.status)
        XCTAssertEqual(r.stdout, "")
        XCTAssertTrue(r.stderr.hasSuffix("\n"))
        let l = lines(r.stderr)
        XCTAssertEqual(l.count, 2, r.stderr)
        XCTAssertEqual(l.first, "vmerge: unknown option '--widht'. Did you mean '--width'?")
        XCTAssertEqual(l.last, "Usage: vmerge [options] <input>... -o <output>   (see 'vmerge --help')")
    }

    func testOtherUsageErrors() {
        let cases: [([String], String)] = [
            ([], "vmerge: no input files and no output given"),
            (["a.mov"], "vmerge: missing '-o <file>': where should the merged video go?"),
            (["a.mov", "-o", "o.mp4", "--fps"], "vmerge: missing value for '--fps <rate>'"),
            (
                ["a.mov", "-o", "o.mp4", "--width", "641"],
                "vmerge: invalid value '641' for '--width': expected an even number from 16 to 7680"
            ),
            (["a.mov", "-o", "o.mp4", "-q", "-v"], "vmerge: '--quiet' and '--verbose' cannot be used together"),
        ]
        for (args, first) in cases {
            let r = run(args)
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertEqual(r.stdout, "", "\(args)")
            let l = lines(r.stderr)
            XCTAssertEqual(l.count, 2, "\(args): \(r.stderr)")
            XCTAssertEqual(l.first, first)
            XCTAssertTrue(l.first?.hasPrefix("vmerge: ") ?? false)
            XCTAssertTrue(l.last?.hasPrefix("Usage: vmerge ") ?? false)
        }
    }

    func testVersion() {
        let r = run(["--version"])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.stderr, "")
        XCTAssertTrue(r.stdout.hasPrefix("vmerge \(Help.version)\nFFmpeg "), r.stdout)
        XCTAssertTrue(r.stdout.contains("libavcodec"), r.stdout)
        let l = lines(r.stdout)
        XCTAssertEqual(l.count, 8, r.stdout)
        let libraries = ["libavformat", "libavcodec", "libavfilter", "libavutil", "libswscale", "libswresample"]
        for (line, name) in zip(l.dropFirst(2), libraries) {
            let parts = line.split(separator: " ")
            XCTAssertTrue(line.hasPrefix("  "), line)
            XCTAssertEqual(parts.count, 2, line)
            XCTAssertEqual(parts.first.map(String.init), name)
            let numbers = parts.last?.split(separator: ".").compactMap { Int($0) } ?? []
            XCTAssertEqual(numbers.count, 3, line)
            XCTAssertGreaterThan(numbers.first ?? 0, 0, line)
        }
    }
}
