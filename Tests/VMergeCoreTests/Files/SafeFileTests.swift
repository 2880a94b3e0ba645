import Foundation
import XCTest

@testable import VMergeCore

/// The safe-file layer on a real file system: what it refuses to replace, follow or block on.
final class SafeFileTests: XCTestCase {
    private var dir = ""

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-safefile-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    private func write(_ text: String, _ name: String) throws {
        try text.write(toFile: dir + "/" + name, atomically: false, encoding: .utf8)
    }

    private func read(_ name: String) -> String? { try? String(contentsOfFile: dir + "/" + name, encoding: .utf8) }

    func testPublishNeverReplacesWithoutPermissionEvenAFileThatAppearedMeanwhile() throws {
        let temporary = try TemporaryFile(beside: dir + "/out.txt")
        try temporary.write(Array("new".utf8))
        try write("someone's", "out.txt")  // appears after the checks, before publishing
        XCTAssertThrowsError(try temporary.publish(replace: .never)) { error in
            XCTAssertEqual(error as? VMergeError, .outputExists(file: dir + "/out.txt"))
        }
        XCTAssertEqual(read("out.txt"), "someone's")
        temporary.discard()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["out.txt"], "temporary removed")
    }

    /// Files made through an `OutputFolder` after its folder was swapped for a link are made and
    /// published in the folder it opened, never through the link (a publish set cannot split).
    func testAnOutputFolderHoldsItsFolderWhenTheNameBecomesALink() throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: dir + "/elsewhere", withIntermediateDirectories: true)
        let folder = try OutputFolder(of: dir + "/out/a.mp4")
        let video = try folder.temporaryFile(for: dir + "/out/a.mp4")
        try fm.moveItem(atPath: dir + "/out", toPath: dir + "/kept")
        try fm.createSymbolicLink(atPath: dir + "/out", withDestinationPath: "elsewhere")
        XCTAssertTrue(folder.holds(dir + "/out/a.json"))
        let report = try folder.temporaryFile(for: dir + "/out/a.json")
        for file in [report, video] {
            try file.write(Array("x".utf8))
            try file.publish(replace: .never)
        }
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: dir + "/kept").sorted(), ["a.json", "a.mp4"])
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: dir + "/elsewhere"), [])
        XCTAssertEqual(folder.kind(of: "a.mp4"), .regular)
    }

    func testLinksFIFOsAndFoldersAreNeverReplacedWhateverThePolicy() throws {
        try write("precious", "victim")
        try FileManager.default.createSymbolicLink(atPath: dir + "/link", withDestinationPath: dir + "/victim")
        XCTAssertEqual(mkfifo(dir + "/fifo", 0o644), 0)
        try FileManager.default.createDirectory(atPath: dir + "/folder", withIntermediateDirectories: false)
        for name in ["link", "fifo", "folder"] {
            for policy in [ReplacePolicy.never, .always, .ifStartsWith([""])] {
                XCTAssertThrowsError(try SafeFile.checkTarget(dir + "/" + name, replace: policy), "\(name) \(policy)")
                XCTAssertThrowsError(try SafeFile.write("x", to: dir + "/" + name, replace: policy), "\(name)")
            }
        }
        XCTAssertEqual(read("victim"), "precious")
        XCTAssertEqual(FileKind.at(FileName(dir + "/link")), .symlink)
        XCTAssertEqual(FileKind.at(FileName(dir + "/fifo")), .fifo)
        XCTAssertThrowsError(try SafeFile.write("x", to: dir + "/link", replace: .always)) { error in
            XCTAssertEqual(
                "\(error)", "\(dir)/link: is a symbolic link: vmerge never writes through or replaces one")
        }
    }

    func testOnlyItsOwnFilesAreReplacedByDefault() throws {
        try write("{\n  \"schema_version\": 1,\n  \"status\": \"ok\"}", "report.json")
        try write("{\n  \"schema_version\": 1,\n  \"name\": \"other tool\"}", "notes.json")
        try SafeFile.write("new", to: dir + "/report.json", replace: .ifStartsWith(RunReport.signatures))
        XCTAssertEqual(read("report.json"), "new")
        XCTAssertThrowsError(try SafeFile.write("x", to: dir + "/notes.json", replace: .ifStartsWith(RunReport.signatures)))
        XCTAssertEqual(read("notes.json"), "{\n  \"schema_version\": 1,\n  \"name\": \"other tool\"}")
        try SafeFile.write("x", to: dir + "/notes.json", replace: .always)
        XCTAssertEqual(read("notes.json"), "x")
    }

    /// A link planted at the very name a temporary draws makes the create fail (O_EXCL |
    /// O_NOFOLLOW) and the next name be drawn: nothing is ever written through the link.
    func testAPlantedLinkAtTheDrawnNameIsNeverWrittenThrough() throws {
        try write("precious", "victim")
        try FileManager.default.createSymbolicLink(
            atPath: dir + "/.out.txt.vmerge-planted-first.tmp", withDestinationPath: dir + "/victim")
        var drawn = ["first", "second"].makeIterator()
        let folder = FileDescriptor(open(dir, O_RDONLY | O_DIRECTORY))
        let temporary = try TemporaryFile(in: folder, target: dir + "/out.txt", tag: "planted") { drawn.next() ?? "x" }
        XCTAssertEqual(temporary.name, ".out.txt.vmerge-planted-second.tmp", "the planted name was skipped")
        try temporary.write(Array("new".utf8))
        try temporary.publish(replace: .never)
        XCTAssertEqual(read("victim"), "precious")
        XCTAssertEqual(read("out.txt"), "new")
        XCTAssertEqual(FileKind.at(FileName(dir + "/.out.txt.vmerge-planted-first.tmp")), .symlink, "the link is left as it was")
    }

    func testReadingRefusesFIFOsWithoutBlockingAndBoundsTheSize() throws {
        XCTAssertEqual(mkfifo(dir + "/fifo", 0o644), 0)
        XCTAssertThrowsError(try SafeFile.read(dir + "/fifo", limit: 100)) { error in
            XCTAssertEqual("\(error)", "\(dir)/fifo: is a FIFO (named pipe), not a file")
        }
        try write(String(repeating: "x", count: 101), "big")
        XCTAssertThrowsError(try SafeFile.read(dir + "/big", limit: 100))
        XCTAssertEqual(try SafeFile.read(dir + "/big", limit: 101).count, 101)
    }

    func testConfinedOpensFollowNoLinkAndStayInside() throws {
        let job = dir + "/job"
        try FileManager.default.createDirectory(atPath: job + "/sub", withIntermediateDirectories: true)
        try write("outside", "outside.mov")
        try write("inside", "job/sub/in.mov")
        try FileManager.default.createSymbolicLink(atPath: job + "/link.mov", withDestinationPath: dir + "/outside.mov")
        try FileManager.default.createSymbolicLink(atPath: job + "/linked", withDestinationPath: dir)
        let confinement = InputConfinement(root: job)
        XCTAssertNoThrow(try SafeFile.openForReading(job + "/sub/in.mov", confinedTo: confinement))
        let refused = [
            job + "/link.mov": "is a symbolic link",
            job + "/linked/outside.mov": "lies under a symbolic link",
            job + "/../outside.mov": "climbs out of its folder",
            dir + "/outside.mov": "is outside the job folder",
        ]
        for (path, reason) in refused {
            XCTAssertThrowsError(try SafeFile.openForReading(path, confinedTo: confinement)) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(path): \(error)")
            }
        }
        let widened = InputConfinement(root: job, allowed: [dir])
        XCTAssertNoThrow(try SafeFile.openForReading(dir + "/outside.mov", confinedTo: widened))
    }

    /// A path opened without links anywhere: a link as any folder of it, or as its name, is
    /// refused (saying which), as is '..'; the same file through real folders is read.
    func testOpeningWithoutLinksRefusesALinkInAnyFolder() throws {
        try FileManager.default.createDirectory(atPath: dir + "/real/deeper", withIntermediateDirectories: true)
        try write("poster", "real/deeper/p.jpg")
        try FileManager.default.createSymbolicLink(atPath: dir + "/up", withDestinationPath: dir + "/real")
        try FileManager.default.createSymbolicLink(atPath: dir + "/real/last", withDestinationPath: dir + "/real/deeper")
        try FileManager.default.createSymbolicLink(atPath: dir + "/real/deeper/l.jpg", withDestinationPath: "p.jpg")
        let file = try SafeFile.openForReadingWithoutLinks(dir + "/real/deeper/p.jpg")
        XCTAssertEqual(try SafeFile.read(file, name: "p.jpg", limit: 100), Data("poster".utf8))
        for (path, reason) in [
            dir + "/up/deeper/p.jpg": "lies under a symbolic link (up)",
            dir + "/real/last/p.jpg": "lies under a symbolic link (last)",
            dir + "/real/deeper/l.jpg": "is a symbolic link, not a file",
            dir + "/real/deeper/../deeper/p.jpg": "climbs out of a folder with '..'",
            dir + "/real/deeper/": "is a folder, not a file",
            dir + "/real/deeper/none.jpg": "no such file",
        ] {
            XCTAssertThrowsError(try SafeFile.openForReadingWithoutLinks(path)) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(path): \(error)")
            }
        }
        // The last name alone guarded, as before, reads through a linked folder.
        XCTAssertNoThrow(try SafeFile.openForReading(dir + "/up/deeper/p.jpg", followLinks: false))
    }

    func testPathIdentityNamesOnePlaceHoweverItIsSpelled() throws {
        let here = FileManager.default.currentDirectoryPath
        defer { _ = FileManager.default.changeCurrentDirectoryPath(here) }
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(dir))
        XCTAssertEqual(PathIdentity.of("out.mp4"), PathIdentity.of("./out.mp4"))
        XCTAssertEqual(PathIdentity.of("out.mp4"), PathIdentity.of(FileName(dir + "/out.mp4")))
        try write("x", "a.mov")
        XCTAssertEqual(link(dir + "/a.mov", dir + "/hard.mov"), 0)
        XCTAssertEqual(PathIdentity.of("a.mov"), PathIdentity.of("hard.mov"), "a hard link is the same file")
        XCTAssertNotEqual(PathIdentity.of("a.mov"), PathIdentity.of("out.mp4"))
    }

    /// A temporary is locked by its writer while it lives; a sweep removes only unlocked ones
    /// (left by a run that was killed, on any machine sharing the folder) of the named output.
    func testSweepRemovesOnlyTemporariesNobodyHolds() throws {
        let live = try TemporaryFile(beside: dir + "/out.mp4")
        let stale = ".out.mp4.vmerge-\(shortHostName)-99999999-x.tmp"
        let elsewhere = ".out.mp4.vmerge-otherhost-12-x.tmp"
        let other = ".other.mp4.vmerge-\(shortHostName)-99999999-x.tmp"
        for name in [stale, elsewhere, other] { try write("x", name) }
        try FileManager.default.createSymbolicLink(
            atPath: dir + "/.out.mp4.vmerge-link-1-x.tmp", withDestinationPath: dir + "/other.txt")
        XCTAssertEqual(TemporaryFile.sweep(folder: dir, target: "out.mp4"), 2)
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: dir)),
            [live.name, other, ".out.mp4.vmerge-link-1-x.tmp"], "the live one, another output's, and a link are left")
        XCTAssertEqual(TemporaryFile.sweep(folder: dir), 1, "without a name: every output's")
        try live.write(Array("new".utf8))
        try live.publish(replace: .never)
        XCTAssertEqual(read("out.mp4"), "new")
    }

    func testRemoveTreeRemovesLinksNotWhatTheyPointTo() throws {
        try write("precious", "victim")
        try FileManager.default.createDirectory(atPath: dir + "/tree/a", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir + "/tree/a/link", withDestinationPath: dir + "/victim")
        try FileManager.default.createSymbolicLink(atPath: dir + "/tree/up", withDestinationPath: dir)
        let folder = try XCTUnwrap(SafeFile.openFolder(dir, in: FileDescriptor(open("/", O_RDONLY | O_DIRECTORY))))
        XCTAssertTrue(SafeFile.removeTree("tree", in: folder))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["victim"])
        XCTAssertEqual(read("victim"), "precious")
    }
}
