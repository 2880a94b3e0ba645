import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeAV
@testable import VMergeRemote

/// A media file of a few megabytes with its index (moov) at the end, as phones write them.
func makeIndexAtEndMovie() throws -> Data {
    let folder = try makeTemporaryFolder("vmerge-remote-media")
    defer { try? FileManager.default.removeItem(at: folder) }
    try runFFmpeg(
        [
            "-f", "lavfi", "-i", "testsrc2=size=640x480:rate=30:duration=4", "-f", "lavfi", "-i",
            "sine=frequency=440:duration=4",
            "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "8M", "-c:a", "aac", "-shortest", "movie.mov",
        ], in: folder)
    return try Data(contentsOf: folder.appendingPathComponent("movie.mov"))
}

/// Remote objects read by ranges into the job's cache: the index where it is, each byte once, a
/// cut connection resumed, a changed object refused.
final class RemoteObjectReaderTests: S3TestCase {
    nonisolated(unsafe) static var movie: Data?

    func client() throws -> S3Client {
        try S3Client(
            endpoint: S3Endpoint(region: s3.region, custom: s3.endpoint),
            credentials: AWSCredentials(
                accessKeyID: s3.accessKey, secretAccessKey: s3.secretKey, source: "AWS_ACCESS_KEY_ID"),
            retries: RetrySchedule(attempts: 4, base: 0.01, cap: 0.05))
    }

    func reader(_ text: String) throws -> RemoteObjectReader {
        try RemoteObjectReader(
            S3Fetcher(address: S3Address(text)!, client: client()),
            retries: RetrySchedule(attempts: 4, base: 0.01, cap: 0.05))
    }

    func movie() throws -> Data {
        if let movie = Self.movie { return movie }
        let made = try makeIndexAtEndMovie()
        Self.movie = made
        return made
    }

    func testProbingReadsTheIndexWhereItIsAndDecodingFetchesEachByteOnce() throws {
        let bytes = try movie()
        XCTAssertGreaterThan(bytes.count, 3 << 20)
        try s3.createBucket("reader-probe")
        try s3.put(bucket: "reader-probe", key: "trip/clip.mov", bytes: bytes)
        let source = try reader("s3://reader-probe/trip/clip.mov")
        let input = try InputFile(source: source)
        XCTAssertEqual(input.streamCount, 2)
        let probed = source.fetched.bytes
        XCTAssertLessThan(probed, Int64(bytes.count) / 3, "probing fetched \(probed) of \(bytes.count) bytes")
        let packet = try Packet()
        var packets = 0
        while try input.read(into: packet) {
            packets += 1
            packet.unref()
        }
        XCTAssertGreaterThan(packets, 150)
        XCTAssertEqual(source.fetched.bytes, Int64(bytes.count), "every byte fetched exactly once")
        let sent = try s3.requests().filter { $0.method == "GET" }.reduce(0) { $0 + $1.bytesSent }
        XCTAssertEqual(sent, bytes.count, "the server sent each byte once")
    }

    func testACutConnectionGoesOnFromWhereItStopped() throws {
        let bytes = patternBytes(3_000_000)
        try s3.createBucket("reader-cut")
        try s3.put(bucket: "reader-cut", key: "k.mov", bytes: bytes)
        try s3.inject([.cut(after: 100_000, method: "GET", key: "reader-cut/k.mov", times: 2)])
        let source = try reader("s3://reader-cut/k.mov")
        var copy = Data(count: bytes.count)
        var offset = 0
        while offset < bytes.count {
            let count = try copy.withUnsafeMutableBytes { all in
                try source.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: all[offset..<min(bytes.count, offset + 65536)]),
                    at: Int64(offset))
            }
            XCTAssertGreaterThan(count, 0)
            offset += count
        }
        XCTAssertEqual(copy, bytes)
        let gets = try s3.requests().filter { $0.method == "GET" }
        XCTAssertEqual(gets.reduce(0) { $0 + $1.bytesSent }, bytes.count, "nothing fetched twice: \(gets.map(\.range))")
        XCTAssertEqual(source.fetched.bytes, Int64(bytes.count))
    }

    func testAnObjectReplacedWhileItIsReadIsRefusedNamingIt() throws {
        let bytes = patternBytes(2_000_000)
        try s3.createBucket("reader-changed")
        try s3.put(bucket: "reader-changed", key: "trip/k.mov", bytes: bytes)
        let source = try reader("s3://reader-changed/trip/k.mov")
        var buffer = [UInt8](repeating: 0, count: 1000)
        _ = try buffer.withUnsafeMutableBytes { try source.read(into: $0, at: 0) }
        var other = bytes
        other[1_500_000] ^= 0xFF
        try s3.put(bucket: "reader-changed", key: "trip/k.mov", bytes: other)
        XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try source.read(into: $0, at: 1_500_000) }) { error in
            XCTAssertTrue("\(error)".hasPrefix("s3://reader-changed/trip/k.mov: changed while it was read"), "\(error)")
        }
    }
}

/// https resources through the same reader: verified against the tests' CA, never redirected to
/// another host.
final class HTTPSReaderTests: HTTPSTestCase {
    func client(trusting: Bool = true) throws -> HTTPClient {
        var settings = HTTPClient.Settings(environment: trusting ? ["SSL_CERT_FILE": https.caFile] : [:])
        settings.stallTimeout = 5
        return try HTTPClient(settings)
    }

    func testAResourceIsReadByRangesAndWhole() throws {
        let bytes = patternBytes(1_200_000)
        try bytes.write(to: https.folder.appendingPathComponent("clip.mov"))
        let source = try RemoteObjectReader(HTTPSFetcher(url: https.url("clip.mov"), client: client()))
        XCTAssertEqual(source.size, 1_200_000)
        var copy = Data(count: bytes.count)
        var offset = bytes.count
        // Backwards, in pieces: each piece is a range of its own, and nothing is fetched twice.
        while offset > 0 {
            let start = max(0, offset - 300_000)
            let count = try copy.withUnsafeMutableBytes { all in
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: all[start..<offset]), at: Int64(start))
            }
            XCTAssertEqual(count, offset - start)
            offset = start
        }
        XCTAssertEqual(copy, bytes)
        XCTAssertEqual(source.fetched.bytes, Int64(bytes.count))
    }

    /// A server that ignores Range answers 200 with the whole resource: refused at its first bytes,
    /// not after downloading (and throwing away) all of it on every read.
    func testAServerThatIgnoresRangesIsRefusedAtOnce() throws {
        let folder = https.folder.appendingPathComponent("no-ranges")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let size = 64 << 20
        try Data(count: size).write(to: folder.appendingPathComponent("big.mov"))
        let source = try RemoteObjectReader(HTTPSFetcher(url: https.url("no-ranges/big.mov"), client: client()))
        var buffer = [UInt8](repeating: 0, count: 4096)
        XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try source.read(into: $0, at: 1000) }) { error in
            XCTAssertTrue(
                "\(error)".hasSuffix("no-ranges/big.mov: the server ignored the byte range asked for"), "\(error)")
        }
        // nginx writes its log line when the connection ends.
        let deadline = Date().addingTimeInterval(10)
        while try https.noRangesLog().filter({ $0.status == 200 }).isEmpty && Date() < deadline { usleep(50_000) }
        let answers = try https.noRangesLog().filter { $0.status == 200 }
        XCTAssertEqual(answers.count, 1, "asked once, not again")
        XCTAssertLessThan(answers.first?.sent ?? size, size / 4, "the whole resource was sent")
    }

    func testAnUntrustedCertificateAndARedirectElsewhereAreRefused() throws {
        try patternBytes(10).write(to: https.folder.appendingPathComponent("small.mov"))
        XCTAssertThrowsError(
            try RemoteObjectReader(HTTPSFetcher(url: https.url("small.mov"), client: client(trusting: false)))
        ) { error in
            XCTAssertTrue("\(error)".contains(": TLS: "), "\(error)")
        }
        XCTAssertThrowsError(
            try RemoteObjectReader(HTTPSFetcher(url: https.url("redirect-away/small.mov"), client: client()))
        ) { error in
            XCTAssertTrue("\(error)".contains("redirected to another host (127.0.0.2): not followed"), "\(error)")
        }
        let followed = try RemoteObjectReader(HTTPSFetcher(url: https.url("redirect-here/small.mov"), client: client()))
        XCTAssertEqual(followed.size, 10)
    }

    func testAMissingResourceIsSaidSoInALine() throws {
        XCTAssertThrowsError(
            try RemoteObjectReader(
                HTTPSFetcher(
                    url: URL(string: https.baseURL.absoluteString + "/none.mov?X-Amz-Signature=secret")!,
                    client: client()))
        ) { error in
            XCTAssertTrue("\(error)".hasSuffix("/none.mov?…: no such file (HTTP 404)"), "\(error)")
            XCTAssertFalse("\(error)".contains("secret"))
        }
    }
}
