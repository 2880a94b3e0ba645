import Foundation
import VMergeCore
import VMergeJobs
import XCTest

@testable import VMergeWeb

/// Watchers' status files read back (`WatchStatusSource`) and shown (`WatchSection`): hostile
/// names stay text, a file that cannot be read is a reason, never a crash or another file.
final class WatchSectionTests: XCTestCase {
    private let hostile = "<img src=x onerror=alert(1)>.mov"
    private let quoted = "Tom & \"Jerry's\" clip.mov"
    /// A right-to-left override: "evil\u{202E}vom.exe" reads "evilexe.mov".
    private let bidi = "evil\u{202E}vom.exe"
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-watch-section-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    /// A watcher 3 clips into an 8-clip job (2x, 45 s left), with two jobs finished; times in
    /// whole seconds, as the file keeps them.
    private func status(updated: Date) -> WatchStatus {
        var status = WatchStatus(inbox: "/srv/in/" + hostile, outbox: "/srv/out")
        status.pid = 4242
        status.host = "h\"ost"
        status.state = "working"
        status.job = hostile
        status.jobStarted = updated.addingTimeInterval(-15)
        status.inputs = [hostile + "/a.mov", quoted, bidi]
        status.inputCount = 25
        status.progress = MergeProgress(
            phase: .encoding, item: 3, itemCount: 8, file: hostile + "/a.mov", doneMicros: 30_000_000,
            totalMicros: 120_000_000, elapsedSeconds: 15, outputBytes: 3 << 20)
        status.percent = 25
        status.done = 1
        status.failed = 1
        status.record(.init(name: quoted, result: .done, finishedAt: updated.addingTimeInterval(-60), output: "q.mp4",
                            outputBytes: 5 << 20))
        status.record(.init(name: bidi, result: .failed, error: "<b>bad</b>\nnext", finishedAt: updated.addingTimeInterval(-30)))
        status.started = updated.addingTimeInterval(-3600)
        status.updated = updated
        return status
    }

    private let now = Date(timeIntervalSince1970: 1_767_225_600)

    private func write(_ text: String, _ name: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: reading

    /// What the watcher writes is what the dashboard reads, hostile names and all.
    func testAStatusReadsBackAsItWasWritten() throws {
        let written = status(updated: now)
        let path = try write(written.json.text(pretty: true) + "\n", "status.json")
        XCTAssertEqual(WatchStatusSource(paths: [path]).read(), [WatchFolderStatus(source: path, reading: .status(written))])
    }

    /// The largest status a producer can make (20 failed jobs whose names are 255 bytes that are
    /// not UTF-8, each 12 bytes of JSON, with errors naming them; 20 inputs and the folders as
    /// long paths of such bytes) is written under the reader's cap and read back: the newest
    /// jobs kept, each name cut to whole characters.
    func testTheLargestStatusStaysUnderTheReadersCap() throws {
        let name = { (seed: UInt8) in FileName.decode([seed] + [UInt8](repeating: 0xFF, count: 254)) }
        let path = { (seed: UInt8) in (0..<16).map { _ in name(seed) }.joined(separator: "/") }
        var status = WatchStatus(inbox: path(1), outbox: path(2))
        status.host = String(repeating: "\u{1}", count: 255)
        status.state = "working"
        status.job = name(3)
        status.jobStarted = now
        status.inputs = (0..<20).map { path(UInt8(40 + $0)) }
        status.inputCount = 1 << 40
        status.progress = MergeProgress(
            phase: .encoding, item: 1, itemCount: 2, file: path(4), doneMicros: 1, totalMicros: 2, elapsedSeconds: 1)
        for job in 0..<25 {
            let failed = name(UInt8(100 + job))
            let error = "\(failed): \(path(5)): " + String(repeating: "\u{7f}", count: 5000)
            status.record(.init(name: failed, result: .failed, error: error, finishedAt: now, output: path(6)))
        }
        status.updated = now
        status.started = now
        let text = status.json.text(pretty: true) + "\n"
        XCTAssertLessThan(text.utf8.count, WatchStatusSource.limit)
        let file = try write(text, "large.json")
        let read = WatchStatusSource(paths: [file]).read()
        guard case let .status(back) = read.first?.reading else { return XCTFail("not read back: \(read)") }
        // Fewer finished jobs when large, the newest kept.
        XCTAssertFalse(back.recent.isEmpty)
        XCTAssertLessThan(back.recent.count, status.recent.count)
        XCTAssertLessThanOrEqual(text.utf8.count, WatchStatus.largestFile + 1)
        let newest = try XCTUnwrap(back.recent.first?.name)
        XCTAssertTrue(newest.hasSuffix("…") && status.recent[0].name.hasPrefix(newest.dropLast()), newest)
        XCTAssertEqual(back.job.map { status.job!.hasPrefix($0.dropLast()) }, true)
        XCTAssertFalse(WatchSection.html(read, now: now).contains("unavailable"))
    }

    /// Missing, a link, garbled, not a status, too large, a FIFO: each an "unavailable" with its
    /// reason, read at once.
    func testAFileThatCannotBeReadIsAReason() throws {
        let good = try write(status(updated: now).json.text(pretty: true), "good.json")
        let link = folder.appendingPathComponent("link.json").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: good)
        let fifo = folder.appendingPathComponent("fifo.json").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let cases: [(String, String)] = [
            (folder.appendingPathComponent("missing.json").path, "no such file or directory"),
            (link, "is a symbolic link, not a file"),
            (try write(WatchStatus.signature + "\"state\": <", "garbled.json"), "not valid JSON"),
            (try write("[1, 2]", "array.json"), "not a JSON object"),
            (try write(#"{"kind": "vmerge watch status", "state": "idle"}"#, "untimed.json"),
             "no 'updated_at' or 'started_at' time"),
            (try write(#"{"kind": "something else"}"#, "other.json"), "not a vmerge watch status"),
            (try write(WatchStatus.signature + String(repeating: " ", count: 256 * 1024), "huge.json"),
             "is larger than 256 KiB; refusing to read it"),
            (fifo, "is a FIFO (named pipe), not a file"),
        ]
        for (path, reason) in cases {
            XCTAssertEqual(WatchStatusSource(paths: [path]).read(), [WatchFolderStatus(source: path, reading: .unavailable(reason))], path)
        }
    }

    /// A folder: its regular `*.json` files that begin with the signature, in name order; links,
    /// other JSON, hidden and other files are not watchers'.
    func testAFolderIsReadForItsStatusFilesOnly() throws {
        let first = status(updated: now)
        let a = try write(first.json.text(pretty: true), "a.json")
        let garbled = try write(WatchStatus.signature + "\"pid\": [", "b.json")
        _ = try write(#"{"kind": "vmerge watch status"}"#, "compact.json")
        _ = try write(first.json.text(pretty: true), ".hidden.json")
        _ = try write(first.json.text(pretty: true), "notes.txt")
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("c.json").path, withDestinationPath: a)
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("d.json"), withIntermediateDirectories: true)
        XCTAssertEqual(
            WatchStatusSource(paths: [folder.path]).read(),
            [
                WatchFolderStatus(source: a, reading: .status(first)),
                WatchFolderStatus(source: garbled, reading: .unavailable("not valid JSON")),
            ])
    }

    // MARK: the section

    func testHostileNamesStayTextAndKeepToTheirCells() {
        let html = WatchSection.html(
            [WatchFolderStatus(source: "/run/<s>.json", reading: .status(status(updated: now.addingTimeInterval(-5))))],
            now: now)
        let lines = html.components(separatedBy: "\n")
        let img = "<bdi>&lt;img src=x onerror=alert(1)&gt;.mov</bdi>"
        let quote = "<bdi>Tom &amp; &quot;Jerry&#39;s&quot; clip.mov</bdi>"
        for expected in [
            "<h3><bdi>/srv/in/&lt;img src=x onerror=alert(1)&gt;.mov</bdi></h3>",
            "<tr><td><bdi>/srv/in/&lt;img src=x onerror=alert(1)&gt;.mov</bdi></td><td><bdi>/srv/out</bdi></td>"
                + "<td><bdi>h&quot;ost</bdi></td><td>4242</td><td><span class=\"state\"><bdi>working</bdi></span></td>"
                + "<td>1</td><td>1</td><td>0:05 ago</td><td><bdi>/run/&lt;s&gt;.json</bdi></td></tr>",
            "<tr><td>\(img)</td><td>clip 3 of 8</td><td>25.0%</td><td>2.00x</td><td>0:15</td><td>0:45</td>"
                + "<td>3.0 MiB</td><td><bdi>&lt;img src=x onerror=alert(1)&gt;.mov/a.mov</bdi><br>\(quote)<br>"
                + "<bdi>evil\\u{202E}vom.exe</bdi><br>and 22 more</td></tr>",
            "<tr><td><bdi>evil\\u{202E}vom.exe</bdi></td><td>failed</td><td>2025-12-31T23:59:25Z</td><td><bdi></bdi></td>"
                + "<td></td><td><bdi>&lt;b&gt;bad&lt;/b&gt;\\nnext</bdi></td></tr>",
            "<tr><td>\(quote)</td><td>done</td><td>2025-12-31T23:58:55Z</td><td><bdi>q.mp4</bdi></td><td>5.0 MiB</td>"
                + "<td><bdi></bdi></td></tr>",
        ] {
            XCTAssertTrue(lines.contains(expected), "missing \(expected) in\n\(html)")
        }
        XCTAssertFalse(html.contains("<img"), html)
        XCTAssertFalse(html.contains("<b>"), html)
        XCTAssertFalse(html.contains("stale"), html)
        // No bidi override reaches the page: it is shown as its escape (and each value is isolated
        // in <bdi> besides).
        XCTAssertFalse(html.contains("\u{202E}"), html)
        XCTAssertEqual(html.components(separatedBy: "evil\\u{202E}vom.exe</bdi>").count - 1, 2, html)
    }

    func testAnOldStatusIsStaleAndAnUnreadableOneSaysWhy() {
        var idle = status(updated: now.addingTimeInterval(-31))
        idle.job = nil
        idle.state = "idle"
        let html = WatchSection.html(
            [
                WatchFolderStatus(source: "/run/a.json", reading: .status(idle)),
                WatchFolderStatus(source: "/run/" + hostile, reading: .unavailable("<x>: \"no\"")),
            ], now: now)
        XCTAssertTrue(html.contains("<td>0:31 ago <span class=\"stale\">stale</span></td>"), html)
        XCTAssertFalse(html.contains("watch-running"), "no running job: \(html)")
        XCTAssertTrue(html.contains("<h3><bdi>/run/&lt;img src=x onerror=alert(1)&gt;.mov</bdi></h3>"), html)
        XCTAssertTrue(html.contains("<p class=\"down\">unavailable: <bdi>&lt;x&gt;: &quot;no&quot;</bdi></p>"), html)
        XCTAssertEqual(
            WatchSection.html([], now: now),
            "<section id=\"watch\">\n<h2>Watch folders</h2>\n<p>No watcher's status file found.</p>\n</section>")
    }
}
