import Foundation
import XCTest

/// The committed fixtures, and longer media made at run time.
enum Clips {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func url(_ prefix: String) -> URL {
        let folder = root.appendingPathComponent("fixtures")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        guard let name = names.sorted().first(where: { $0.hasPrefix(prefix) && $0.hasSuffix(".mov") }) else {
            fatalError("no fixture starting with \(prefix)")
        }
        return folder.appendingPathComponent(name)
    }

    /// 40 s of 640x480 with sound: long enough that a merge of it is still encoding when a test
    /// stops it.
    static func long(in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("long.mov")
        let made = try Programs.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x480:rate=30:duration=40", "-f", "lavfi",
                "-i", "sine=frequency=440:sample_rate=48000:duration=40", "-c:v", "libx264", "-preset", "ultrafast",
                "-c:a", "aac", "-shortest", url.path,
            ])
        XCTAssertEqual(made.status, 0, made.stderr)
        return url
    }
}

/// Other programs: the example, ffmpeg's tools, the compiler.
enum Programs {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Where the package's executables are: beside the test bundle.
    static let binaries: URL = {
        let candidates = [
            Bundle.main.bundleURL, Bundle(for: Marker.self).bundleURL,
            Bundle(for: Marker.self).bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        return candidates.first {
            FileManager.default.fileExists(atPath: $0.appendingPathComponent("Modules/VMerge.swiftmodule").path)
        } ?? candidates[0]
    }()
    private final class Marker {}

    /// Runs `name` from PATH (or a path) to its end, collecting both streams.
    static func run(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = name.hasPrefix("/") ? URL(fileURLWithPath: name) : URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = name.hasPrefix("/") ? arguments : [name] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        nonisolated(unsafe) var errData = Data()
        let errDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            errDone.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errDone.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// `swiftc -typecheck` against the built modules, with the C modules' maps and headers.
    static func typecheck(_ file: URL) throws -> Programs.Result {
        let build = binaries
        var maps = [Clips.root.appendingPathComponent("Sources/CFFmpeg/module.modulemap").path,
                    Clips.root.appendingPathComponent("Sources/CLibPQ/module.modulemap").path]
        for name in try FileManager.default.contentsOfDirectory(atPath: build.path) where name.hasSuffix(".build") {
            let map = build.appendingPathComponent(name).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) { maps.append(map.path) }
        }
        let cflags = try Programs.run("pkg-config", ["--cflags", "libavformat", "libpq"])
        guard cflags.status == 0 else { return Result(status: cflags.status, stdout: "", stderr: "pkg-config: " + cflags.stderr) }
        var arguments = ["-typecheck", "-I", build.appendingPathComponent("Modules").path]
        arguments += maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] }
        arguments += cflags.stdout.split(separator: " ").flatMap { ["-Xcc", String($0).trimmingCharacters(in: .whitespacesAndNewlines)] }
        arguments.append(file.path)
        return try Programs.run("swiftc", arguments)
    }
}
