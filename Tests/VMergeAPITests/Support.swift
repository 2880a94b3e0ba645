import Foundation
import TestSupport
import XCTest

/// 40 s of 640x480 with sound, made in `folder`: long enough that a merge of it is still encoding
/// when a test stops it.
func longClip(in folder: URL) throws -> URL {
    let url = folder.appendingPathComponent("long.mov")
    try runFFmpeg(
        [
            "-f", "lavfi", "-i", "testsrc2=size=640x480:rate=30:duration=40", "-f", "lavfi",
            "-i", "sine=frequency=440:sample_rate=48000:duration=40", "-c:v", "libx264", "-preset", "ultrafast",
            "-c:a", "aac", "-shortest", url.path,
        ], in: folder)
    return url
}

/// `swiftc -typecheck` of `file` against the built modules, with the C modules' maps and
/// headers: as a program outside the package would be compiled.
func typecheck(_ file: URL) throws -> RunResult {
    let build = BuildProducts.folder
    var maps = [
        Fixtures.root.appendingPathComponent("Sources/CFFmpeg/module.modulemap").path,
        Fixtures.root.appendingPathComponent("Sources/CAVUtil/module.modulemap").path,
        Fixtures.root.appendingPathComponent("Sources/CLibPQ/module.modulemap").path,
        Fixtures.root.appendingPathComponent("Sources/CCurl/module.modulemap").path,
    ]
    for name in try FileManager.default.contentsOfDirectory(atPath: build.path) where name.hasSuffix(".build") {
        let map = build.appendingPathComponent(name).appendingPathComponent("module.modulemap")
        if FileManager.default.fileExists(atPath: map.path) { maps.append(map.path) }
    }
    let cflags = try runTool("pkg-config", ["--cflags", "libavformat", "libpq", "libcurl"])
    guard cflags.status == 0 else {
        return RunResult(status: cflags.status, stdout: "", stderr: "pkg-config: " + cflags.stderr)
    }
    var arguments = ["-typecheck", "-I", build.appendingPathComponent("Modules").path]
    arguments += maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] }
    arguments += cflags.stdout.split(separator: " ").flatMap {
        ["-Xcc", String($0).trimmingCharacters(in: .whitespacesAndNewlines)]
    }
    arguments.append(file.path)
    return try runTool("swiftc", arguments)
}
