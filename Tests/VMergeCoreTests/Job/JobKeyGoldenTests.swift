import Foundation
import XCTest

@testable import VMergeCore

/// Job keys as literals. A finished batch, a watch job recovered after a crash and a queue job run
/// twice are known as done only because their key comes out the same as when the output was made:
/// a change that moves any of these values makes every earlier output look unfinished (redone, or
/// refused as "output exists"). Change one only on purpose, with a test that shows why.
final class JobKeyGoldenTests: XCTestCase {
    /// One input, "a.mov", 5 bytes, modified 2026-01-02 03:04:05.123456789 UTC, in a folder of its
    /// own given as the root: its key is the same wherever the folder is.
    private func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("a.mov")
        try Data("12345".utf8).write(to: file)
        var times = [
            timespec(tv_sec: 1_767_323_045, tv_nsec: 123_456_789), timespec(tv_sec: 1_767_323_045, tv_nsec: 123_456_789),
        ]
        XCTAssertEqual(utimensat(AT_FDCWD, file.path, &times, 0), 0)
        return dir
    }

    private func key(_ edit: InputEdit = .whole, _ settings: JobSettings = JobSettings()) throws -> String {
        let dir = try folder()
        return JobKey.make(
            inputs: [JobInput(dir.appendingPathComponent("a.mov").path, edit: edit)], root: dir.path,
            options: settings.merge)
    }

    func testAnUntrimmedInputKeysAsItAlwaysHas() throws {
        XCTAssertEqual(try key(), "18f02e5d3a0b29bc839bf0d9953c3d8ed2d81de823cd6cb77058a788e6368afa")
        let dir = try folder()
        let names = JobKey.names(inputs: [JobInput(dir.appendingPathComponent("a.mov").path)], root: dir.path, options: MergeOptions())
        XCTAssertEqual(names, "582120e00950d7649ec902ef")
        XCTAssertEqual(JobKey.make(inputs: ["/nowhere/a.mov", "/nowhere/b.mov"], root: nil, options: MergeOptions()), "b9e3187ebb657238385567abab7204a314cf3eb6709e581a6212152c31958800")
    }

    func testTrimsAndTitlesKeyAsTheyAlwaysHave() throws {
        XCTAssertEqual(try key(InputEdit(startMicros: 1_000_000, endMicros: 5_000_000)), "980d90ec8855f945c695d745b198ba03da3b578809a8d165dd7af36bf994972b")
        XCTAssertEqual(try key(InputEdit(startMicros: 2_500_000)), "8edd63e5a4510c9e54db70bebb285af52c14f835c039c0c47cd023cb9b4ad6cc")
        XCTAssertEqual(try key(InputEdit(endMicros: 8_000_000)), "6be1efb3a8cdadb9672e4c9b17e5dcfff2bd27df14396fb38604da22f2f34569")
        XCTAssertEqual(try key(InputEdit(title: "Ski day")), "442feb0ebab24f7714111699881dd50ca0829581a1af8f135f36d67f5719a87d")
    }

    /// Every keyed option, set to a value other than its default, keys as it always has; an option
    /// added to the table without a golden value here fails the test.
    func testEveryKeyedOptionKeysAsItAlwaysHas() throws {
        let samples: [String: String] = [
            "min-duration": "3", "width": "640", "aspect": "16:9", "fps": "25", "crf": "20", "poster": "p.jpg",
            "loudness": "-16", "poster-at": "1.5", "max-pixels": "1920x1080", "max-duration": "60", "max-size": "10M",
        ]
        let golden: [String: String] = [
            "aspect": "95b11f779749c8d9a7fb327dcc10fe0806feacfeee793ddb7fa80cb3c17d5e5d",
            "chapters": "03823d54e925d746322ace11ce05c0e94b4e674675c81cf96397341fa9022192",
            "crf": "29100f54e5c324397692269db396cf13054a584b600029e5dafce4a5abdb873a",
            "fit": "37f61258012ffd035187c82a6470398a844b48b5a25fb0b5df62a89f9b48c253",
            "fps": "69af06f6cd5d6758e687beed0d6bdbd1b81b96129d6fc8c4173a736fd55e65b5",
            "loudness": "e87b40ba3a998b19e7d73fe867c46246241ee2be5dba853a9d20eee97cfd4877",
            "max-duration": "016e297425f1b97d5d89d6b59a5de1343be5df9a43554dfd5519b4df2f15ac88",
            "max-pixels": "7eab71570d520fd430594d35d9bfaf56d1f799e5d74bfc20b56e4e896f50f4c5",
            "max-size": "e48f4338a9f3e8de1c5b4d910c43f47ec6207d9b07537d8b7fc3e25841042d88",
            "min-duration": "7188d7dd181cb612e7146a8e3466613ce4a0503bf4bed712fcbbc1a422c33a80",
            "poster": "a49d4b77f5bdefaf153eb62c0aee8d4f3ffe77e02a19e140a76a9f01ab976761",
            "poster-at": "3d6c6f695923a1dcb83b4d9a66185f4bed8c71f02e9a68d28c0ea684d89d9341",
            "preset": "03ce61efa41392113470c69b403bca16fe6e709995af1bf6905f097a839ade10",
            "quality": "adeef5c9ed196d5b909d747a61e5e8fb014990f9ed846a927344d698eb340c5c",
            "skip-deblocking": "6c19e7cb336177ac1b84ddf8ee41ee673cdd176e90183bfd90a1e4695af5cc9d",
            "skip-invalid": "0a8a97fe68f00ea75e5f1815b2f4b85be1130ba2631abf25725c432920c489a4",
            "strict": "49138862c1cee207c89a1c78dfbc4f602662a227d4b28b37f6b62d7f460812dc",
            "strip-metadata": "61bd319f13f0acc103311b158253334c39b0b103c5a787407a7d73c27bc90136",
            "tonemap": "ea2f03d842db908688d30bbd5a12df7bf30155ab4382a2c55986582086c803c7",
            "width": "7c6b1bdda4800db789733911c5bafb6b939de7744e9e9cca99696af8f830b5f2",
        ]
        var computed: [String: String] = [:]
        for option in JobOption.all where option.keyed {
            let defaults = JobSettings()
            let value: String
            switch option.kind {
            case .flag: value = option.value(in: defaults) == "true" ? "false" : "true"
            case let .choice(words): value = try XCTUnwrap(words.first { $0 != option.value(in: defaults) })
            case .number, .text, .fileName: value = try XCTUnwrap(samples[option.name], "no sample value for --\(option.name)")
            }
            var settings = defaults
            try option.apply(value, to: &settings)
            XCTAssertNotEqual(option.value(in: settings), option.value(in: defaults), "--\(option.name) \(value)")
            computed[option.name] = try key(.whole, settings)
        }
        for (name, value) in computed.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(value, golden[name], "--\(name): \"\(name)\": \"\(value)\",")
        }
        XCTAssertEqual(Set(computed.values).count, computed.count, "every keyed option makes a key of its own")
    }
}
