import Foundation
import XCTest

@testable import VMergeCLI
@testable import VMergeCore

/// A suggested command is pasted into a shell: every word, whatever bytes its name holds, must
/// come back from the shell as exactly those bytes.
final class ShellWordTests: XCTestCase {
    /// Seeded byte strings (no NUL: argv cannot hold one), biased towards what shells treat
    /// specially, given to bash in one `printf '%s\0'` line and read back byte for byte.
    func testEveryWordComesBackFromTheShellAsItsBytes() throws {
        let bash = URL(fileURLWithPath: "/bin/bash")
        guard FileManager.default.isExecutableFile(atPath: bash.path) else { throw XCTSkip("no bash here") }
        var state: UInt64 = 0x5eed_5e11
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let awkward = Array(" '\"\\$`!*?[]{}()<>|&;#~=%,:\n\t\r\u{7F}-".utf8) + [0x80, 0xC3, 0xA9, 0xE2, 0x80, 0xAE, 0xFF, 0xF4, 0x8F]
        var words: [[UInt8]] = []
        for _ in 0..<400 {
            let length = Int(next() % 12) + 1
            words.append(
                (0..<length).map { _ in
                    let r = next()
                    return r % 3 == 0 ? UInt8(truncatingIfNeeded: r >> 8 % 255) | 1 : awkward[Int(r >> 16 % UInt64(awkward.count))]
                })
        }
        let line = "printf '%s\\0' " + words.map { ShellWord.quoted(FileName.decode($0)) }.joined(separator: " ")
        let process = Process()
        process.executableURL = bash
        process.arguments = ["-c", line]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let back = data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { Array($0) }
        XCTAssertEqual(back.count, words.count)
        for (word, returned) in zip(words, back) where word != returned {
            XCTFail("\(word) came back as \(returned) from \(ShellWord.quoted(FileName.decode(word)))")
        }
    }
}
